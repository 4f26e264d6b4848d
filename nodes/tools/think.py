"""Think tool: a scratchpad the model writes its reasoning to; it returns the thought unchanged.

n8n's `toolThink`: v1's tool is called `thinking_tool`, v1.1's is named after the node (as every
tool); only its description is editable.
"""

from pydantic import Field

from engine.chat import ToolSpec
from engine.connection_types import AI_TOOL, PortSpec
from engine.context import NodeContext, SupplyContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

from .naming import node_name_to_tool_name

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
    version = 1  # given to new nodes; n8n's newest is 1.1
    versions = (1, 1.1)
    display_name = "Think Tool"
    description = "Gives the agent room to think: the thought is logged and handed back unchanged"
    group = "Tools"
    icon = "think"
    default_name = "Think"
    inputs = ()
    outputs = (PortSpec(AI_TOOL, "Tool"),)
    Params = ThinkParams
    supplies_once = True
    implemented_parameters = frozenset({"description"})

    async def supply_data(self, ctx: SupplyContext) -> ToolSpec:
        params: ThinkParams = ctx.params()
        return ToolSpec(
            name=TOOL_NAME if float(ctx.node.typeVersion) == 1 else node_name_to_tool_name(ctx.node.name),
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
