"""No Operation, do nothing: outputs its input items unchanged, as n8n's NoOp node."""

from __future__ import annotations

from engine.context import NodeContext
from engine.node_type import NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

from .if_node import paired


class NoOpNode(NodeType):
    type = "n8n-nodes-base.noOp"
    version = 1
    display_name = "No Operation, do nothing"
    default_name = "No Operation, do nothing"
    description = "Passes its items on unchanged"
    group = "Core"
    icon = "noop"

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        return [[paired(item, index) for index, item in enumerate(ctx.items)]]
