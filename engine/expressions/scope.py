"""What the expressions of one node run can read: its input items, the nodes that ran before it
(with n8n's paired-item tracking back through them), the execution and the workflow.

The JavaScript runtime asks for data by operation (`__host_data`); the answers are JSON text.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import from_ai
from ..errors import ExpressionError
from ..run_data import ExecutionState, Item, SourceRef
from ..workflow import Node
from .sandbox import instance_timezone

ENV_WEBHOOK_URL = "WEBHOOK_URL"  # n8n's: the public base URL of webhooks
DEFAULT_WEBHOOK_URL = "http://localhost:5678/"  # n8n's default


def webhook_base_url() -> str:
    """The public base URL of webhooks, ending in "/" ($WEBHOOK_URL, `mini-n8n serve` sets it)."""
    url = os.environ.get(ENV_WEBHOOK_URL) or DEFAULT_WEBHOOK_URL
    return url if url.endswith("/") else url + "/"


def resume_urls(execution_id: str) -> dict[str, str]:
    """`$execution.resumeUrl` and `resumeFormUrl`: where a waiting execution is resumed, as n8n builds them."""
    base = webhook_base_url()
    return {"resumeUrl": f"{base}webhook-waiting/{execution_id}", "resumeFormUrl": f"{base}form-waiting/{execution_id}"}

MAX_PAIRING_HOPS = 10_000


class DataError(Exception):
    """A read the expression asked for that fails as in n8n (message, description)."""

    def __init__(self, message: str, description: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.description = description


@dataclass(eq=False)
class Scope:
    """One node's view of the run. `items` are its input items; `source` where they came from.

    For a tool run or a sub-node, `pair_items`/`pair_source` are the calling agent's input and
    `pair_index` its current item, so `$('Node').item` follows the agent's item back.
    """

    node: Node | None = None
    items: list[Item] = field(default_factory=list)
    run_index: int = 0
    source: list[SourceRef] = field(default_factory=list)
    state: ExecutionState | None = None
    model_args: dict[str, Any] | None = None
    pair_items: list[Item] | None = None
    pair_source: list[SourceRef] | None = None
    pair_index: int | None = None
    generation: int = 0  # raised when the run moved on: answers read before are stale
    parameters_of: Callable[[Node], dict[str, Any]] | None = None  # a node's parameters as n8n holds them
    additional: dict[str, Any] | None = None  # names n8n adds for one evaluation ($response, $pageCount...)
    _meta: str | None = None
    _linked: frozenset[str] | None = None

    # ----- what the runtime is told once per scope --------------------------------------------
    @property
    def timezone(self) -> str:
        settings = self.state.workflow.settings if self.state is not None else {}
        zone = settings.get("timezone") if isinstance(settings, dict) else None
        return zone if isinstance(zone, str) and zone and zone != "DEFAULT" else instance_timezone()

    def meta_json(self) -> str:
        if self._meta is None:
            node, state = self.node, self.state
            workflow = state.workflow if state is not None else None
            prev = self.source[0] if self.source else None
            extra = (workflow.model_extra or {}) if workflow is not None else {}
            meta = {
                "runIndex": self.run_index,
                "prevNode": {"name": prev.previous_node, "outputIndex": prev.previous_node_output,
                             "runIndex": prev.previous_node_run} if prev else {},
                "execution": {
                    "id": state.id if state is not None else "",
                    "mode": "test" if state is None or state.mode == "manual" else "production",
                    **resume_urls(state.id if state is not None else ""), "customData": {},
                },
                "workflow": {
                    "id": str(extra.get("id") or ""),
                    "name": workflow.name if workflow is not None else "",
                    "active": bool(extra.get("active", False)),
                },
                "vars": {},
                "parameters": self._parameters(node) if node is not None else {},
                "nodeVersion": node.typeVersion if node is not None else 1,
                "nodeId": node.id if node is not None else "",
                "additional": self.additional or {},
            }
            self._meta = json.dumps(meta, ensure_ascii=False, default=str)
        return self._meta

    def _parameters(self, node: Node) -> dict[str, Any]:
        return self.parameters_of(node) if self.parameters_of is not None else node.parameters

    # ----- reads ---------------------------------------------------------------------------------
    def answer(self, op: str, args: list[Any]) -> str:
        """The answer to a runtime's request: "j<json>", "u" or "e<error>" (it never raises)."""
        try:
            value = self._read(op, args)
        except DataError as exc:
            return "e" + json.dumps({"message": exc.message, "description": exc.description})
        except ExpressionError as exc:
            return "e" + json.dumps({"message": exc.message, "description": exc.description or ""})
        except Exception as exc:  # a bug here must reach the user as an expression error
            return "e" + json.dumps({"message": f"{type(exc).__name__}: {exc}"})
        if value is _UNDEFINED:
            return "u"
        return "j" + json.dumps(value, ensure_ascii=False, default=str)

    def _read(self, op: str, args: list[Any]) -> Any:
        if op == "input":
            return self.items
        if op == "fromAI":
            return self._from_ai(args)
        if op == "node":
            return self._node(str(args[0]), str(args[1]), args[2:])
        raise DataError(f"unknown data request {op}")

    def _from_ai(self, args: list[Any]) -> Any:
        key = args[0] if args else None
        if not isinstance(key, str) or not from_ai.KEY.match(key):
            raise DataError("$fromAI needs a name of letters, digits, _ or - (at most 64) as its first argument")
        kind = args[2] if len(args) > 2 and args[2] else "string"
        if kind not in from_ai.SCHEMA_TYPES:
            raise DataError(f"$fromAI type must be one of {', '.join(from_ai.SCHEMA_TYPES)}, not '{kind}'")
        description = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
        default = args[3] if len(args) > 3 and args[3] is not None else from_ai.MISSING
        if self.model_args is None:
            raise DataError(f"$fromAI('{key}') is filled in by the model: it works in a node an agent calls as a tool")
        return from_ai.FromAI(key, description, kind, default).value(self.model_args)

    def _runs(self, name: str) -> list[Any]:
        runs = self.state.run_data.get(name, []) if self.state is not None else []
        return runs

    def _node(self, name: str, what: str, rest: list[Any]) -> Any:
        workflow = self.state.workflow if self.state is not None else None
        if workflow is None or not workflow.has_node(name):
            raise DataError("Referenced node doesn't exist", f'There is no node called "{name}" in this workflow')
        if what == "check":
            return True
        if what == "isExecuted":
            return bool(self._runs(name))
        if what == "params":
            return self._parameters(workflow.node(name))
        if what == "item":
            self._check_linked(name)
        runs = self._runs(name)
        if not runs:
            raise DataError(
                "Referenced node is unexecuted",
                f"An expression references the node '{name}', but it hasn't been executed yet. Either change "
                "the expression, or re-wire your workflow to make sure that node executes first.",
            )
        if what == "runIndex":
            return len(runs) - 1
        if what in ("all", "first", "last"):
            branch = int(rest[0]) if rest and rest[0] is not None else 0
            run = int(rest[1]) if len(rest) > 1 and rest[1] is not None else len(runs) - 1
            items = self._output(name, runs, run, branch)
            if what == "all":
                return items
            if not items:
                return _UNDEFINED
            return items[0] if what == "first" else items[-1]
        if what == "at":  # the legacy $node["Name"]: the item at the same index, not paired
            items = self._output(name, runs, len(runs) - 1, 0)
            index = int(rest[0]) if rest else 0
            return items[index] if 0 <= index < len(items) else _UNDEFINED
        if what == "item":
            index = int(rest[0]) if rest and rest[0] is not None else 0
            return self._paired(name, index)
        raise DataError(f"unknown node data '{what}'")

    def _check_linked(self, target: str) -> None:
        """n8n checks before following paired items that `target` comes before this node in the
        graph: its main ancestors, or for a sub-node every ancestor of the node it plugs into."""
        if self.node is None or self.state is None:
            return
        if self._linked is None:
            links = self.state.workflow.links()
            parents: dict[str, list[tuple[str, str]]] = {}
            for source, conn_type, _index, link in links:
                parents.setdefault(link.node, []).append((source, conn_type))

            def ancestors(start: str, any_type: bool) -> set[str]:
                seen: set[str] = set()
                todo = [start]
                while todo:
                    for source, conn_type in parents.get(todo.pop(), []):
                        if (any_type or conn_type == "main") and source not in seen:
                            seen.add(source)
                            todo.append(source)
                return seen

            children = [link.node for source, conn_type, _i, link in links
                        if source == self.node.name and conn_type != "main"]
            linked = set().union(*(ancestors(c, True) for c in children)) if children else ancestors(self.node.name, False)
            self._linked = frozenset(linked)
        if target not in self._linked:
            raise DataError("Invalid expression",
                            f"No path back to referenced node: there is no connection back to the node '{target}', "
                            "but it's used in an expression here")

    @staticmethod
    def _output(name: str, runs: list[Any], run: int, branch: int) -> list[Item]:
        if not 0 <= run < len(runs):
            raise DataError(f"Node '{name}' has no run {run}", f"It ran {len(runs)} time(s)")
        outputs = runs[run].data.get("main") or []
        return outputs[branch] if 0 <= branch < len(outputs) else []

    def _paired(self, target: str, index: int) -> Any:
        """n8n's paired-item tracking: from this node's input item back to `target`'s item."""
        if self.node is not None and target == self.node.name:
            raise DataError(f"An expression in node '{target}' reads its own paired item",
                            "Use $json for the current item of this node")
        items = self.pair_items if self.pair_items is not None else self.items
        source = self.pair_source if self.pair_source is not None else self.source
        if self.pair_items is not None and self.pair_index is not None:
            index = self.pair_index
        for _ in range(MAX_PAIRING_HOPS):
            if not 0 <= index < len(items):
                raise DataError("Can't get data for expression", f"Item {index} does not exist in the input")
            item = items[index]
            if not source:
                raise DataError(
                    "Invalid expression",
                    f"No path back to node '{target}': it is not an ancestor of the current item",
                )
            ref = source[0]
            parent = ref.previous_node
            if parent == target:
                return item
            runs = self._runs(parent)
            if not 0 <= ref.previous_node_run < len(runs):
                raise DataError("Can't get data for expression", f"Node '{parent}' has no run {ref.previous_node_run}")
            task = runs[ref.previous_node_run]
            paired = item.get("pairedItem")
            if isinstance(paired, list):
                if len(paired) != 1:
                    raise DataError(
                        "Multiple matching items for expression" if paired else "Can't get data for expression",
                        f"The item comes from {len(paired)} items of node '{parent}', so which one to read is ambiguous",
                    )
                paired = paired[0]
            if isinstance(paired, int):
                paired = {"item": paired}
            if not isinstance(paired, dict) or "item" not in paired:
                raise DataError(
                    "Paired item data unavailable",
                    f"Node '{parent}' did not say which input item its output item {index} came from",
                )
            input_index = int(paired.get("input") or 0)
            inputs = task.input.get("main") or []
            items = inputs[input_index] if input_index < len(inputs) else []
            source = task.source[input_index:input_index + 1] if input_index < len(task.source) else []
            index = int(paired["item"])
        raise DataError("Can't get data for expression", "the paired items form a loop")


class _Undefined:
    """JavaScript's `undefined` as a read's answer (JSON has only null)."""


_UNDEFINED = _Undefined()
