"""Starting, resuming, re-running and replaying runs, and what a run came to: one place for
the CLI and the editor's bridge, so both start and judge runs the same way."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import MiniN8nError
from .hooks import Hooks
from .run_outcome import RunOutcome, answer_of, chat_message_of

if TYPE_CHECKING:
    from .abort import AbortSignal
    from .executor import Engine, Execution
    from .registry import Registry
    from .replay import ReplaySource
    from .run_data import ExecutionState, Item
    from .workflow import Node, Workflow


def open_engine(registry: Registry | None = None) -> Engine:
    """An engine that stores every execution and keeps Simple Memory in the store's file."""
    from .executor import Engine
    from .registry import builtin_registry
    from .services import Services
    from .store import open_memory, open_store

    store = open_store()  # SQLite by default, PostgreSQL when $MINI_N8N_DB is a postgresql:// URL
    return Engine(registry or builtin_registry(), Services(memory=open_memory(store)), store=store)


def is_chat_trigger(node: Node, registry: Registry) -> bool:
    return registry.get(node.type).is_chat_trigger


class NoChatTrigger(MiniN8nError):
    """A chat message was given for a workflow that has no Chat Trigger."""


def start(engine: Engine, workflow: Workflow, *, message: str | None = None, session_id: str | None = None,
          trigger: str | None = None, items: list[Item] | None = None, mode: str = "manual",
          hooks: Hooks | None = None, signal: AbortSignal | None = None) -> Execution:
    """A new execution of `workflow`: from its Chat Trigger with `message`, else from `trigger`
    (or the first trigger that can run) with `items`. Refused, naming them, when a node on the
    run's path has a type mini-n8n does not run."""
    from .start import StartError, unsupported_message, unsupported_on_path

    if message is not None:
        from nodes.triggers.chat_trigger import chat_item

        node = engine.start_node(workflow, prefer_chat=True, trigger=trigger)
        if not is_chat_trigger(node, engine.registry):
            raise NoChatTrigger(f'"{workflow.name}" has no Chat Trigger: run it from its trigger instead')
        items = [chat_item(message, session_id)]
    else:
        node = engine.start_node(workflow, trigger=trigger, injected=items is not None)
    blocked = unsupported_on_path(workflow, engine.registry, node.name, injected=items is not None)
    if blocked:
        raise StartError(unsupported_message(blocked))
    return engine.create(workflow, start=node.name, items=items, mode=mode, hooks=hooks, signal=signal)


def resume(engine: Engine, execution_id: str, *, items: list[Item] | None = None, hooks: Hooks | None = None,
           signal: AbortSignal | None = None) -> Execution:
    """A stored paused, interrupted or crashed execution, ready to continue where it stopped; one
    waiting at a Wait node on a webhook call takes `items` as the request's (refused without
    them before its time limit)."""
    if engine.store is not None and engine.store.exists(execution_id):
        check_wait_resume(engine.store.load(execution_id), items)
    execution = engine.resume(execution_id, hooks=hooks, signal=signal)
    execution.resume_items = items
    return execution


def waiting_call(state: ExecutionState) -> str | None:
    """What a stored execution waits for at a Wait node before it can go on without an item
    ("a webhook call" or "a form submission"), or None (not waiting, or its time limit passed)."""
    import time

    pause = state.pause or {}
    if state.status != "paused" or pause.get("kind") != "wait":
        return None
    till = (pause.get("payload") or {}).get("waitTill")
    if till is not None and time.time() * 1000 >= till:
        return None
    return "a form submission" if (pause.get("payload") or {}).get("resume") == "form" else "a webhook call"


def check_wait_resume(state: ExecutionState, items: list[Item] | None) -> None:
    """Refuse items for an execution not waiting on a call, and a waiting one without items before its time limit."""
    pause = state.pause or {}
    waiting = state.status == "paused" and pause.get("kind") == "wait"
    if items is not None and state.status == "paused" and not waiting:
        raise MiniN8nError(f'execution "{state.id}" is not waiting at a Wait node: it resumes without input')
    call = waiting_call(state) if items is None else None
    if call is not None:
        till = (pause.get("payload") or {}).get("waitTill")
        raise MiniN8nError(f'execution "{state.id}" waits for {call} at "{pause.get("node")}": resume it with '
                           "the request's item (`mini-n8n resume ID --input JSON`)"
                           + ("" if till is None else " or after its time limit"))


def rerun(engine: Engine, execution_id: str, *, from_iteration: int | None = None, compare: bool = False,
          hooks: Hooks | None = None, signal: AbortSignal | None = None) -> tuple[Execution, ReplaySource]:
    """A new execution of a stored one's workflow and first input, fed its recorded results:
    up to `from_iteration` (re-run from there), or all of them compared as they go (`compare`:
    a replay)."""
    return rerun_recorded(engine, engine.store.load(execution_id), from_iteration=from_iteration, compare=compare,
                          hooks=hooks, signal=signal)


def rerun_recorded(engine: Engine, recorded: ExecutionState, *, from_iteration: int | None = None, compare: bool = False,
                   hooks: Hooks | None = None, signal: AbortSignal | None = None) -> tuple[Execution, ReplaySource]:
    """`rerun` of an execution held elsewhere (one a server ran, opened in the editor)."""
    from .replay import ReplaySource

    first = recorded.run_data.get(recorded.start_node or "", [])
    items = first[0].input.get("main", [[]])[0] if first else None
    execution = engine.create(recorded.workflow, start=recorded.start_node, items=items,
                              mode="replay" if compare else "rerun", hooks=hooks, signal=signal)
    source = ReplaySource(recorded, upto_iteration=None if compare else from_iteration, compare=compare)
    execution.replay = source
    return execution, source


__all__ = ["RunOutcome", "answer_of", "chat_message_of", "is_chat_trigger", "open_engine", "start", "resume", "rerun",
           "NoChatTrigger"]
