"""AI Agent Tool: an Agent that another Agent calls as a tool (n8n's `agentTool`).

It runs the same loop as the AI Agent (it subclasses ToolsAgent), with its own model, memory and
tools; its input is the calling model's arguments, and its prompt is the `text` parameter,
`={{ $json.input }}` by default. When it asks for tools, the engine runs them nested under the
outer call, so their run data carries the outer call in `metadata.parent`.
"""

import re
from typing import Any, Literal

from pydantic import Field

from engine.chat import ToolSpec
from engine.connection_types import AI_LANGUAGE_MODEL, AI_MEMORY, AI_OUTPUT_PARSER, AI_TOOL, PortSpec
from engine.context import NodeContext, SupplyContext
from engine.expressions import resolve_parameters
from engine.requests import EngineRequest, EngineResponse
from engine.run_data import Item
from nodes.tools.naming import node_name_to_tool_name

from .tools_agent import AgentParams, ToolsAgent

DEFAULT_PROMPT = "={{ $json.input }}"
_JSON_FIELD = re.compile(r"\$json\.([A-Za-z_][A-Za-z0-9_]*)")


class AgentToolParams(AgentParams):
    toolDescription: str = Field(
        "AI Agent that can call other tools", title="Description",
        description="What the calling model is told this agent does", json_schema_extra={"multiline": True},
    )
    promptType: Literal["auto", "define"] = Field(
        "define", title="Source for Prompt (User Message)",
        description="define: the text below, where {{ $json.<field> }} reads an argument of the calling model",
    )
    text: str | None = Field(DEFAULT_PROMPT, title="Prompt (User Message)", json_schema_extra={
        "multiline": True, "displayOptions": {"show": {"promptType": ["define"]}}})


def arguments_schema(text: str) -> dict[str, Any]:
    """The calling model's arguments: each `$json.<field>` the prompt reads, as a required string."""
    fields = list(dict.fromkeys(_JSON_FIELD.findall(text or ""))) if (text or "").startswith("=") else []
    properties = {
        name: {"type": "string", "description": "The task or question for this agent" if name == "input" else f"The {name} for this agent"}
        for name in fields
    }
    return {"type": "object", "properties": properties, "required": fields}


class AgentTool(ToolsAgent):
    type = "@n8n/n8n-nodes-langchain.agentTool"
    version = 2.2
    versions = (2.2,)
    display_name = "AI Agent Tool"
    description = "An agent another agent can call as a tool: its own model, memory and tools"
    group = "Tools"
    icon = "agent-tool"
    default_name = "AI Agent Tool"
    inputs = (
        PortSpec(AI_LANGUAGE_MODEL, "Chat Model", required=True, max_connections=1),
        PortSpec(AI_LANGUAGE_MODEL, "Fallback Model", max_connections=1),
        PortSpec(AI_MEMORY, "Memory", max_connections=1),
        PortSpec(AI_TOOL, "Tool"),
        PortSpec(AI_OUTPUT_PARSER, "Output Parser", max_connections=1),
    )
    outputs = (PortSpec(AI_TOOL, "Tool"),)
    Params = AgentToolParams
    implemented_parameters = frozenset({
        "text", "toolDescription", "hasOutputParser", "needsFallback", "options", "options.systemMessage",
        "options.maxIterations", "options.returnIntermediateSteps", "options.passthroughBinaryImages", "options.batching"})
    unsupported_parameters: dict[str, str] = {}

    async def supply_data(self, ctx: SupplyContext) -> ToolSpec:
        params: AgentToolParams = ctx.params()
        return ToolSpec(
            name=node_name_to_tool_name(ctx.node.name),
            description=params.toolDescription,
            parameters=arguments_schema(self._raw_text(ctx)),
        )

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]] | EngineRequest:
        result = await super().execute(ctx, response)
        if isinstance(result, EngineRequest):
            return result
        # The calling model reads the answer as plain text, unless the steps were asked for too.
        return [[
            item if set(item["json"]) != {"output"} else {"json": {"response": item["json"]["output"]}}
            for item in result[0]
        ]]

    def prompt(self, ctx: NodeContext, params: AgentParams, item: Item) -> str:
        # A default is not resolved by parameter validation: read the argument it names here.
        if "text" not in ctx.node.parameters and params.text == DEFAULT_PROMPT:
            params = params.model_copy(update={"text": resolve_parameters(DEFAULT_PROMPT, item.get("json", {}))})
        return super().prompt(ctx, params, item)

    @staticmethod
    def _raw_text(ctx: SupplyContext | NodeContext) -> str:
        """The prompt parameter before expressions are resolved (the schema is read from it)."""
        raw = ctx.node.parameters.get("text", DEFAULT_PROMPT)
        return raw if isinstance(raw, str) else ""
