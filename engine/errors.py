"""Errors the engine raises, each naming what is wrong and where, and `PutToWait`, which a node
raises to leave its execution waiting."""

from __future__ import annotations

from typing import Any


class MiniN8nError(Exception):
    """Base of every error the engine reports to a user."""


class WorkflowFileError(MiniN8nError):
    """A workflow file that cannot be read: every problem, each with its location."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"cannot load workflow {source}:\n{lines}")


class RegistryError(MiniN8nError):
    """A node type registered twice, or a type id that is not known."""


class NodeOperationError(MiniN8nError):
    """A node failed; the message is what the user sees, `description` adds detail."""

    def __init__(self, message: str, *, node: str | None = None, description: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.node = node
        self.description = description


class NodeApiError(NodeOperationError):
    """A service refused a node's request, as n8n's NodeApiError: the message is n8n's for the
    status, `description` says in our words which server, model or credential; `api_message` is
    what the service itself said (n8n's own description, which a streamed error chunk carries)."""

    def __init__(self, message: str, *, node: str | None = None, description: str | None = None,
                 api_message: str | None = None) -> None:
        super().__init__(message, node=node, description=description)
        self.api_message = api_message


class SubNodeError(NodeOperationError):
    """A sub-node (model, memory, tool, parser) failed while supplying its parent, as n8n words it:
    "Error in sub-node <name>", the sub-node's own message as the description. Its own run
    holds the whole error; an enclosing parent passes it on unchanged."""

    def __init__(self, sub_node: str, message: str) -> None:
        super().__init__(f"Error in sub-node {sub_node}", node=sub_node, description=message)


class ExpressionError(NodeOperationError):
    """An n8n expression that is not of the supported `{{ $json.path }}` form, or cannot resolve."""


class ExecutionCancelled(MiniN8nError):
    """The run was stopped through its abort signal."""


class StoreFailed(MiniN8nError):
    """The execution store could not write what an execution did: the execution stops, since going
    on would leave the stored execution different from the run. Never a node's error: a node's
    On Error setting does not continue past it."""


def store_failed(exc: Exception, execution_id: str, what: str) -> StoreFailed:
    """The store's failure at writing `what` of an execution, as the error that stops it: the
    store's own words when it has them (they name its file), else the exception's."""
    if isinstance(exc, StoreFailed):
        return exc
    if isinstance(exc, MiniN8nError):
        return StoreFailed(str(exc))
    return StoreFailed(f"the execution store failed to write {what} of execution {execution_id}: {type(exc).__name__}: {exc}")


class PutToWait(Exception):
    """Raised by a node (Wait on a webhook call or a form) to leave the execution stored paused
    before that node, as n8n stores a waiting execution; `payload` says what resumes it
    (n8n's waitTill as `waitTill`, ms since the epoch or None, the HTTP method, the suffix)."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__("the execution waits to be resumed")
        self.payload = payload
