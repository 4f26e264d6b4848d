"""Think tool: a scratchpad the model writes its reasoning to; it returns the thought unchanged.

n8n's `toolThink`: the tool is always called `thinking_tool`; only its description is editable.
"""

from __future__ import annotations

from pydantic import Field

from engine.chat import ToolSpec
from engine.connection_types import AI_TOOL, PortSpec
from engine.context import NodeContext, SupplyContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

TOOL_NAME = "thinking_tool"
DESCRIPTION = (
    "Use the tool to think about something. It will not obtain new information or change the "
    "database, but just append the thought to the log. Use it when complex reasoning or some "
    "cache memory is needed."
)


class ThinkParams(NodeParams):
    description: str = Field(DESCRIPTION, title="Think Tool Description", json_schema_extra={"multiline": True})


class ThinkTool(NodeType):
    type = "@n8n/n8n-nodes-langchain.toolThink"
    display_name = "Think Tool"
    description = "Gives the agent room to think: the thought is logged and handed back unchanged"
    group = "Tools"
    icon = "think"
    default_name = "Think"
    inputs = ()
    outputs = (PortSpec(AI_TOOL, "Tool"),)
    Params = ThinkParams

    async def supply_data(self, ctx: SupplyContext) -> ToolSpec:
        params: ThinkParams = ctx.params()
        return ToolSpec(
            name=TOOL_NAME,
            description=params.description or DESCRIPTION,
            parameters={
                "type": "object",
                "properties": {"input": {"type": "string", "description": "The thought to write down"}},
                "required": ["input"],
            },
        )

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        out = []
        for item in ctx.items:
            data = item.get("json", {})
            thought = data.get("input", data.get("query", data.get("thought")))
            if not isinstance(thought, str):
                raise NodeOperationError("The thinking tool needs an 'input' text", node=ctx.node.name)
            out.append({"json": {"response": thought}})
        return [out]
