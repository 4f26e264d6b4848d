"""What a node sees while it runs: its parameters, input items, sub-node data, the abort signal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .abort import AbortSignal
from . import from_ai
from .errors import NodeOperationError
from .expressions import has_expressions, resolve_parameters
from .node_type import NodeParams
from .requests import Action
from .run_data import Item, StackEntry
from .services import Services
from .workflow import Node, Workflow

if TYPE_CHECKING:
    from .executor import Execution


def params_error(node: Node, exc: ValidationError) -> NodeOperationError:
    """A parameter validation error in the user's terms: node name and parameter path."""
    details = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'parameters'}: {e['msg']}" for e in exc.errors()
    )
    return NodeOperationError(f'Node "{node.name}" has invalid parameters: {details}', node=node.name)


class _ContextBase:
    """What every context offers: the node, its validated parameters, the abort signal, services."""

    node: Node
    _execution: "Execution"

    def _model_args(self) -> dict[str, Any] | None:
        """What `$fromAI(...)` reads: None where no model calls this node (it is then an error)."""
        return None

    @property
    def signal(self) -> AbortSignal:
        return self._execution.signal

    @property
    def services(self) -> Services:
        return self._execution.engine.services

    def note(self, text: str) -> None:
        """A note for the run log about this node's run (a version mapped, a difference from n8n)."""
        notes = self._execution.notes.setdefault(self.node.name, [])
        if text not in notes:
            notes.append(text)

    @property
    def workflow(self) -> Workflow:
        return self._execution.state.workflow

    def first_output_item(self, node_name: str) -> Item | None:
        """The first item a node output in this execution (n8n's `$('Node').first()`), if it ran."""
        runs = self._execution.state.run_data.get(node_name) or []
        for task in runs:
            main = task.data.get("main") or []
            if main and main[0]:
                return main[0][0]
        return None

    def _params_for(self, item: Item | None) -> Any:
        cache = self._execution.params_cache
        cached = cache.get(self.node.name)
        if cached is not None:
            return cached  # parameters without expressions are validated once per execution
        node_type = self._execution.node_type(self.node)
        raw = self.node.parameters
        if not has_expressions(raw):
            resolved = raw
        else:
            resolved = resolve_parameters(raw, (item or {}).get("json", {}), self._model_args())
        try:
            params = node_type.Params.model_validate(resolved)
        except ValidationError as exc:
            raise params_error(self.node, exc) from None
        if resolved is raw:
            cache[self.node.name] = params
        return params


class NodeContext(_ContextBase):
    """Context of a node run: main-path nodes and tool runs alike."""

    def __init__(
        self,
        execution: "Execution",
        node: Node,
        items: list[Item],
        *,
        run_index: int,
        action: Action | None = None,
        parent: dict[str, Any] | None = None,
        iteration: int = 1,
        entry: StackEntry | None = None,
    ) -> None:
        self._execution = execution
        self.node = node
        self.items = items
        self.run_index = run_index
        self.action = action
        self.parent = parent
        self.iteration = iteration
        self.entry = entry

    @property
    def execution_id(self) -> str:
        return self._execution.state.id

    @property
    def execution_mode(self) -> str:
        """How the run was started: manual (the editor), debug, cli, rerun, replay..."""
        return self._execution.state.mode

    @property
    def workflow_id(self) -> str:
        wf = self._execution.state.workflow
        return str(getattr(wf, "id", None) or wf.name)

    def _model_args(self) -> dict[str, Any] | None:
        if self.action is None:
            return None
        return self.items[0].get("json", {}) if self.items else {}

    def memo(self, name: str) -> dict[str, Any]:
        """A cache of derived data for this node, kept for the life of the execution object.

        Only for what can be rebuilt from the JSON state (a restored execution starts empty).
        """
        return self._execution.memo.setdefault((self.node.name, name), {})

    def params(self, item_index: int = 0) -> Any:
        """This node's parameters for one input item, expressions resolved, validated."""
        item = self.items[item_index] if 0 <= item_index < len(self.items) else None
        return self._params_for(item)

    def evaluate(self, expression: str, item_index: int = 0) -> Any:
        """One expression (`={{ … }}`) evaluated for one input item, as n8n's evaluateExpression:
        for parameters a node reads unresolved (the Set node's raw JSON)."""
        item = self.items[item_index] if 0 <= item_index < len(self.items) else None
        return resolve_parameters(expression, (item or {}).get("json", {}), self._model_args())

    async def get_input_connection_data(self, conn_type: str, item_index: int = 0) -> Any:
        """Data of the sub-nodes connected to `conn_type`: a list for tools, one object otherwise."""
        return await self._execution.supply(self, conn_type, item_index)


class SupplyContext(_ContextBase):
    """Context of a sub-node while it supplies data to its parent (model, memory, tools)."""

    def __init__(self, execution: "Execution", node: Node, parent: NodeContext, item_index: int) -> None:
        self._execution = execution
        self.node = node
        self.parent = parent
        self.item_index = item_index

    @property
    def item(self) -> Item | None:
        items = self.parent.items
        return items[self.item_index] if 0 <= self.item_index < len(items) else None

    @property
    def workflow_id(self) -> str:
        return self.parent.workflow_id

    def _model_args(self) -> dict[str, Any] | None:
        return from_ai.UNFILLED  # a tool describing itself: `$fromAI` reads as its default

    def params(self) -> Any:
        """Parameters resolved against the parent's current item (as n8n does for sub-nodes)."""
        return self._params_for(self.item)

    def run_count(self) -> int:
        """How many runs of this node the execution has recorded so far (resumable state)."""
        return len(self._execution.state.run_data.get(self.node.name, ()))

    async def get_input_connection_data(self, conn_type: str, item_index: int = 0) -> Any:
        """Sub-nodes of a sub-node (an Agent used as a tool has its own model and tools)."""
        ctx = NodeContext(self._execution, self.node, [self.item] if self.item else [], run_index=0)
        return await self._execution.supply(ctx, conn_type, 0)


__all__ = ["NodeContext", "SupplyContext", "NodeParams"]
