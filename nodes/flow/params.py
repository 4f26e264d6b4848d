"""Reading a flow node's parameters as n8n's getNodeParameter does: expressions evaluated for one
item, a result of `undefined` kept apart from null (n8n compares the two differently)."""

from __future__ import annotations

from typing import Any

from engine.context import NodeContext
from engine.expressions import evaluate
from nodes.core.set_values import MISSING


def resolve(ctx: NodeContext, value: Any, item_index: int, path: str) -> Any:
    """`value` (from the node's parameters) with every expression in it evaluated for one item."""
    if isinstance(value, str):
        if value.startswith("="):
            return evaluate(value, scope=ctx.expression_scope(), item_index=item_index, parameter=path,
                            undefined=MISSING)
        return value
    if isinstance(value, dict):
        return {k: resolve(ctx, v, item_index, f"{path}.{k}" if path else k) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(ctx, v, item_index, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


def parameter(ctx: NodeContext, name: str, item_index: int, default: Any = None) -> Any:
    """One top-level parameter, resolved; `default` when the file leaves it out."""
    raw = ctx.node.parameters.get(name, default)
    return resolve(ctx, raw, item_index, name)


def plain(value: Any) -> Any:
    """A resolved value with `undefined` as None (for parameters where the two mean the same)."""
    if value is MISSING:
        return None
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if v is not MISSING}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
