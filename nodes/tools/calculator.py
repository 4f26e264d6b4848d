"""Calculator tool: arithmetic for the model, computed by the AST-walking evaluator."""

from pydantic import Field

from engine.chat import ToolSpec
from engine.connection_types import AI_TOOL, PortSpec
from engine.context import NodeContext, SupplyContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

from .naming import node_name_to_tool_name
from .safe_math import MathError, evaluate, format_number

DESCRIPTION = (
    "Useful for getting the result of a math expression. The input to this tool should be a "
    "valid mathematical expression that could be executed by a simple calculator."
)


# What n8n offers the model: LangChain's Calculator is a text tool, whose one optional argument is `input`.
PARAMETERS = {
    "type": "object",
    "properties": {"input": {"type": "string"}},
    "additionalProperties": False,
    "$schema": "http://json-schema.org/draft-07/schema#",
}


class CalculatorParams(NodeParams):
    description: str = Field(DESCRIPTION, title="Description", json_schema_extra={"multiline": True})


class Calculator(NodeType):
    type = "@n8n/n8n-nodes-langchain.toolCalculator"
    display_name = "Calculator"
    description = "Lets the agent do arithmetic exactly (+ - * / ^ and a few functions)"
    group = "Tools"
    icon = "calculator"
    inputs = ()
    outputs = (PortSpec(AI_TOOL, "Tool"),)
    Params = CalculatorParams
    supplies_once = True

    async def supply_data(self, ctx: SupplyContext) -> ToolSpec:
        params: CalculatorParams = ctx.params()
        return ToolSpec(
            name=node_name_to_tool_name(ctx.node.name),
            description=params.description or DESCRIPTION,
            parameters=dict(PARAMETERS),
        )

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        out = []
        for item in ctx.items:
            data = item.get("json", {})
            expression = data.get("input")
            if not isinstance(expression, str):
                raise NodeOperationError("The calculator needs the expression as text in its 'input' argument", node=ctx.node.name)
            try:
                out.append({"json": {"response": format_number(evaluate(expression))}})
            except MathError as exc:
                raise NodeOperationError(str(exc), node=ctx.node.name) from None
        return [out]
