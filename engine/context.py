"""What a node sees while it runs: its parameters, input items, sub-node data, the abort signal."""

from __future__ import annotations

import contextvars
import dataclasses
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .abort import AbortSignal
from . import from_ai
from .chat import ChatMemory, ChatModel, OutputParser, ToolSpec
from .connection_types import AI_LANGUAGE_MODEL, AI_MEMORY, AI_OUTPUT_PARSER, AI_TOOL
from .errors import NodeOperationError
from .expressions import Scope, has_expressions, resolve_parameters
from .node_type import NodeParams, NodeType
from .requests import Action
from .run_data import ExecutionState, Item, StackEntry
from .services import Services
from .streaming import STREAMING_MODES
from .workflow import Node, Workflow

if TYPE_CHECKING:
    from .executor import Execution


def params_error(node: Node, exc: ValidationError) -> NodeOperationError:
    """A parameter validation error in the user's terms: node name and parameter path."""
    details = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'parameters'}: {e['msg']}" for e in exc.errors()
    )
    return NodeOperationError(f'Node "{node.name}" has invalid parameters: {details}', node=node.name)


MAX_SUB_WORKFLOW_DEPTH = 50
_SUB_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("sub_workflow_depth", default=0)

_PORTS = {AI_LANGUAGE_MODEL: ("Chat Model", "a chat model"), AI_MEMORY: ("Memory", "a memory"), AI_TOOL: ("Tool", "a tool"),
          AI_OUTPUT_PARSER: ("Output Parser", "an output parser")}


_KIND_OF_TYPE: dict[type, str] = {}  # isinstance against a Protocol is slow: once per class


def _kind(cls: type, obj: Any) -> str:
    kind = _KIND_OF_TYPE.get(cls)
    if kind is None:
        if isinstance(obj, ToolSpec):
            kind = "a tool"
        elif isinstance(obj, ChatModel):
            kind = "a chat model"
        elif isinstance(obj, ChatMemory):
            kind = "a memory"
        elif isinstance(obj, OutputParser):
            kind = "an output parser"
        else:
            kind = "nothing a sub-node port can use"
        _KIND_OF_TYPE[cls] = kind
    return kind


def _supplies(data: Any) -> str:
    if isinstance(data, list):
        kinds = {_kind(type(item), item) for item in data}
        return kinds.pop() if len(kinds) == 1 else "nothing a sub-node port can use"
    return _kind(type(data), data)


def check_supplied(conn_type: str, sub: Node, parent: str, data: Any) -> None:
    """A sub-node wired into a port it does not serve (a chat model into Memory) is an error
    naming both nodes, instead of an AttributeError deep in the parent."""
    port = _PORTS.get(conn_type)
    if port is None:
        return
    label, needed = port
    if _supplies(data) != needed and not (conn_type == AI_TOOL and data == []):
        raise NodeOperationError(
            f'Node "{sub.name}" is connected to the {label} input of "{parent}", but it supplies {_supplies(data)}, '
            f"not {needed}",
            node=sub.name,
            description=f"Connect {needed} node to that input",
        )


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

    def expression_scope(self) -> Scope:
        """What this node's expressions read: its items, the run so far, the workflow."""
        raise NotImplementedError

    def note(self, text: str) -> None:
        """A note for the run log about this node's run (a version mapped, a difference from n8n)."""
        notes = self._execution.notes.setdefault(self.node.name, [])
        if text not in notes:
            notes.append(text)

    def run_metadata(self, key: str, value: Any) -> None:
        """A JSON value kept in this node run's metadata (stored with its run data), e.g. the
        response a Respond to Webhook node made."""
        self._execution.run_metadata.setdefault(self.node.name, {})[key] = value

    @property
    def workflow(self) -> Workflow:
        return self._execution.state.workflow

    def node_type_of(self, node: Node) -> NodeType:
        """The registered type of a node of this workflow."""
        return self._execution.node_type(node)

    def first_output_item(self, node_name: str) -> Item | None:
        """The first item a node output in this execution (n8n's `$('Node').first()`), if it ran."""
        runs = self._execution.state.run_data.get(node_name) or []
        for task in runs:
            main = task.data.get("main") or []
            if main and main[0]:
                return main[0][0]
        return None

    _resolved: dict[int, Any]

    def _params_for(self, item_index: int) -> Any:
        cache = self._execution.params_cache
        cached = cache.get(self.node.name)
        if cached is not None:
            return cached  # parameters without expressions are validated once per execution
        if item_index in self._resolved:
            return self._resolved[item_index]  # expressions are evaluated once per item and run
        node_type = self._execution.node_type(self.node)
        raw = self.node.parameters
        if not has_expressions(raw):
            resolved = raw
        else:
            resolved = resolve_parameters(raw, scope=self.expression_scope(), item_index=item_index)
        try:
            params = node_type.Params.model_validate(resolved)
        except ValidationError as exc:
            raise params_error(self.node, exc) from None
        if resolved is raw:
            cache[self.node.name] = params
        else:
            self._resolved[item_index] = params
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
        self._scope: Scope | None = None
        self._resolved = {}

    @property
    def execution_id(self) -> str:
        return self._execution.state.id

    def resumed_wait(self) -> tuple[bool, list[Item] | None]:
        """Whether this node run continues an execution it left waiting (engine.errors.PutToWait),
        and the items it was resumed with (None: its time limit was reached)."""
        return self._execution.take_resume(self.node.name)

    def is_streaming(self) -> bool:
        """Whether what this node streams reaches a client (n8n's isStreaming): the execution
        answers a streaming Chat Trigger, in a mode n8n streams in."""
        execution = self._execution
        return execution.streaming and execution.state.mode in STREAMING_MODES

    def send_chunk(self, kind: str, item_index: int, content: Any = None) -> None:
        """Send a chunk of this node's streamed response (n8n's sendChunk: begin, item, end)."""
        from .hooks import ChunkSent
        from .streaming import node_chunk

        execution = self._execution
        execution.hooks.emit(ChunkSent(execution.state.id, node_chunk(kind, self.node, item_index, self.run_index, content)))

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

    def continue_on_fail(self) -> bool:
        """n8n's `this.continueOnFail()`: the node's On Error setting (or legacy Continue On Fail)
        asks it to output an error item instead of failing."""
        from .node_settings import node_continues_on_fail

        return node_continues_on_fail(self.node)

    def input_data(self, index: int = 0) -> list[Item]:
        """The items of main input `index` (n8n's getInputData): none where that input got none."""
        inputs = self.entry.inputs if self.entry is not None else None
        if inputs is None:
            return self.items if index == 0 else []
        return (inputs[index] or []) if index < len(inputs) else []

    async def run_sub_workflow(self, workflow: Workflow, start: str, items: list[Item]) -> ExecutionState:
        """Run another workflow (or this one) from `start` with `items`, to its end, as n8n's
        sub-executions run ("integrated" mode): stored as an execution of its own, stopped by
        this run's Stop."""
        depth = _SUB_DEPTH.get()
        if depth >= MAX_SUB_WORKFLOW_DEPTH:
            raise NodeOperationError(f"Sub-workflows call each other more than {MAX_SUB_WORKFLOW_DEPTH} levels deep",
                                     node=self.node.name)
        token = _SUB_DEPTH.set(depth + 1)
        try:
            execution = self._execution.engine.create(workflow, start=start, items=items, mode="integrated",
                                                      signal=self._execution.signal)
            return await execution.run()
        finally:
            _SUB_DEPTH.reset(token)

    def node_context(self) -> dict[str, Any]:
        """What this node keeps between its runs in this execution (n8n's getContext('node')):
        plain JSON, part of the resumable state."""
        return self._execution.state.node_context.setdefault(self.node.name, {})

    def memo(self, name: str) -> dict[str, Any]:
        """A cache of derived data for this node, kept for the life of the execution object.

        Only for what can be rebuilt from the JSON state (a restored execution starts empty).
        """
        return self._execution.memo.setdefault((self.node.name, name), {})

    def params(self, item_index: int = 0) -> Any:
        """This node's parameters for one input item, expressions resolved, validated."""
        return self._params_for(item_index)

    def expression_scope(self) -> Scope:
        if self._scope is None:
            # a node called again in the same run (an agent's next iteration) keeps its scope:
            # the runtime then only forgets the answers it had, not the node's description
            kept = self._execution.memo.setdefault((self.node.name, "expression-scope"), {})
            if self.entry is not None and kept.get("entry") is self.entry and kept["scope"].items is self.items:
                self._scope = kept["scope"]
                self._scope.generation += 1
                return self._scope
            state = self._execution.state
            scope = Scope(node=self.node, items=self.items, run_index=self.run_index,
                          source=self.entry.source if self.entry is not None else [], state=state,
                          model_args=self._model_args(), parameters_of=self._execution.n8n_parameters)
            if self.parent is not None:  # a tool run: paired items follow the calling agent's item
                caller = next((e for e in reversed(state.stack)
                               if e.node == self.parent.get("node") and e.pending is not None), None)
                if caller is not None:
                    scope.pair_items, scope.pair_source = caller.input, caller.source
                    scope.pair_index = int(self.parent.get("itemIndex") or 0)
            kept.update(entry=self.entry, scope=scope)
            self._scope = scope
        return self._scope

    def evaluate(self, expression: str, item_index: int = 0) -> Any:
        """One expression (`={{ … }}`) evaluated for one input item, as n8n's evaluateExpression:
        for parameters a node reads unresolved (the Set node's raw JSON)."""
        return resolve_parameters(expression, scope=self.expression_scope(), item_index=item_index)

    async def get_input_connection_data(self, conn_type: str, item_index: int = 0) -> Any:
        """Data of the sub-nodes connected to `conn_type`: a list for tools, one object otherwise."""
        return await self._execution.supply(self, conn_type, item_index)

    async def get_input_data_at(self, conn_type: str, input_index: int, item_index: int = 0) -> Any:
        """Data of the sub-node connected to input `input_index` of `conn_type` (an Agent's Chat
        Model is input 0, its Fallback Model input 1); None when nothing is connected there."""
        return await self._execution.supply(self, conn_type, item_index, input_index)


class SupplyContext(_ContextBase):
    """Context of a sub-node while it supplies data to its parent (model, memory, tools)."""

    def __init__(self, execution: "Execution", node: Node, parent: NodeContext, item_index: int) -> None:
        self._execution = execution
        self.node = node
        self.parent = parent
        self.item_index = item_index
        self._scope: Scope | None = None
        self._resolved = {}

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
        return self._params_for(self.item_index)

    def expression_scope(self) -> Scope:
        if self._scope is None:
            parent = self.parent.expression_scope()
            self._scope = dataclasses.replace(parent, node=self.node, model_args=self._model_args(), _meta=None)
        return self._scope

    def run_count(self) -> int:
        """How many runs of this node the execution has recorded so far (resumable state)."""
        return len(self._execution.state.run_data.get(self.node.name, ()))

    async def get_input_connection_data(self, conn_type: str, item_index: int = 0) -> Any:
        """Sub-nodes of a sub-node (an Agent used as a tool has its own model and tools)."""
        ctx = NodeContext(self._execution, self.node, [self.item] if self.item else [], run_index=0)
        return await self._execution.supply(ctx, conn_type, 0)


__all__ = ["NodeContext", "SupplyContext", "NodeParams"]
