"""n8n's preview of an expression: its value for the node's first input item of the last run.

The editor shows it under the field. The input is the node's own last input when it ran, else
the last output of the node feeding it; a sub-node (model, memory, tool) reads the input of
the node it is attached to. Without input data there is no preview.
"""

from __future__ import annotations

import json
from typing import Any, Callable, NamedTuple

from ..connection_types import MAIN
from ..errors import ExpressionError
from ..registry import Registry
from ..run_data import ExecutionState, Item, SourceRef
from ..workflow import Node, Workflow
from . import evaluate
from .scope import Scope


class Preview(NamedTuple):
    """What to show under a field: the value as n8n's editor shows it, or the error."""

    text: str
    error: bool = False


def shown(value: Any) -> str:
    """A value as n8n's editor shows a result: objects and lists tagged, empty marked."""
    if value is None or value == "":
        return "[empty]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        kind = "Array" if isinstance(value, list) else "Object"
        return f"[{kind}: {json.dumps(value, ensure_ascii=False, separators=(', ', ': '))}]"
    return str(value)


def _input_of(state: ExecutionState, workflow: Workflow, name: str, depth: int = 0) -> tuple[list[Item], list[SourceRef]] | None:
    runs = state.run_data.get(name)
    if runs:
        task = runs[-1]
        inputs = task.input.get(MAIN) or []
        if inputs and inputs[0]:
            return inputs[0], task.source
    for source, conn_type, index, target in workflow.links():
        if target.node != name:
            continue
        if conn_type != MAIN:
            continue
        parent_runs = state.run_data.get(source)
        if parent_runs:
            outputs = parent_runs[-1].data.get(MAIN) or []
            if index < len(outputs) and outputs[index]:
                return outputs[index], [SourceRef(previousNode=source, previousNodeOutput=index,
                                                  previousNodeRun=len(parent_runs) - 1)]
    for source, conn_type, _index, target in workflow.links():
        if source == name and conn_type != MAIN and depth < 8:
            return _input_of(state, workflow, target.node, depth + 1)  # a sub-node: its root node's input
    return None


def expression_preview(state: ExecutionState | None, workflow: Workflow, node_name: str, value: str,
                       registry: Registry | None = None) -> Preview | None:
    """The preview of `value` (an `=...` parameter) in node `node_name`, None without input data.
    With the `registry`, `$parameter` and `$('Node').params` read a node's parameters as n8n holds
    them (its form's defaults filled in), as a run does."""
    if state is None or not isinstance(value, str) or not value.startswith("=") or not workflow.has_node(node_name):
        return None
    found = _input_of(state, workflow, node_name)
    if found is None:
        return None
    items, source = found
    current = state.model_copy(update={"workflow": workflow})  # the document as edited now
    scope = Scope(node=workflow.node(node_name), items=items, run_index=0, source=source, state=current,
                  parameters_of=_n8n_parameters(registry) if registry is not None else None)
    try:
        return Preview(shown(evaluate(value, scope=scope, item_index=0)))
    except ExpressionError as exc:  # the field is the location: the message without it
        return Preview(exc.message.rsplit(" [an expression", 1)[0], error=True)


def _n8n_parameters(registry: Registry) -> Callable[[Node], dict[str, Any]]:
    def parameters_of(node: Node) -> dict[str, Any]:
        if not registry.knows(node.type):
            return node.parameters
        return registry.get(node.type).n8n_parameters(node.parameters, node.typeVersion)

    return parameters_of
