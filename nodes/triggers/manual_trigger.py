"""Manual Trigger: starts a workflow by hand (toolbar, Ctrl+Enter, or `mini-n8n run` without a message)."""

from __future__ import annotations

from engine.connection_types import MAIN, PortSpec
from engine.context import NodeContext
from engine.node_type import NodeType
from engine.requests import EngineResponse
from engine.run_data import Item


class ManualTrigger(NodeType):
    type = "n8n-nodes-base.manualTrigger"
    display_name = "Manual Trigger"
    default_name = "When clicking 'Execute workflow'"
    description = "Starts the workflow when you run it from the editor or the command line"
    group = "Triggers"
    icon = "manual-trigger"
    inputs = ()
    outputs = (PortSpec(MAIN),)
    is_trigger = True

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        return [ctx.items or [{"json": {}}]]
