"""Limit: keeps the first or the last `maxItems` items, as n8n's Limit node."""

import math
from typing import Literal

from pydantic import Field

from engine.context import NodeContext
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item
from nodes.core.set_values import is_nan, js_number

from .if_node import paired
from .params import parameter, plain


class LimitParams(NodeParams):
    maxItems: float = Field(1, title="Max Items", ge=1)
    keep: Literal["firstItems", "lastItems"] = Field("firstItems", title="Keep")


def _slice_index(value: float, length: int) -> int:
    """JavaScript's Array.prototype.slice argument: truncated, counted from the end when negative."""
    if is_nan(value):
        return 0
    if math.isinf(value):
        return length if value > 0 else 0
    whole = int(value)
    return max(length + whole, 0) if whole < 0 else min(whole, length)


class LimitNode(NodeType):
    type = "n8n-nodes-base.limit"
    version = 1
    display_name = "Limit"
    description = "Keeps only the first or last items"
    group = "Core"
    icon = "limit"
    Params = LimitParams
    implemented_parameters = frozenset({"maxItems", "keep"})

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        items = [paired(item, index) for index, item in enumerate(ctx.items)]
        max_items = js_number(plain(parameter(ctx, "maxItems", 0, 1)))
        keep = plain(parameter(ctx, "keep", 0, "firstItems"))
        if max_items > len(items):
            return [items]
        n = len(items)
        if keep == "firstItems":
            return [items[:_slice_index(max_items, n)]]
        return [items[_slice_index(n - max_items, n):]]
