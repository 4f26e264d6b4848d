"""Auto-fixing Output Parser (n8n's `outputParserAutofixing`, v1): wraps another output parser;
when an answer does not fit, asks its own model to fix it, once.

As n8n's N8nOutputFixingParser: the fixing prompt (the node's Custom Prompt or n8n's default)
gets `{instructions}` (the inner parser's format instructions), `{completion}` (the answer that
failed) and `{error}` (the failure as JavaScript words it: JSON.parse's or Zod's message); the
model's reply is parsed by the inner parser, and if that fails too, that is the error. The
model call is a recorded run of the model node, the parses runs of both parser nodes.
"""

import re
from typing import Any

from pydantic import Field

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ChatModel, OutputParser
from engine.connection_types import AI_LANGUAGE_MODEL, AI_OUTPUT_PARSER, PortSpec
from engine.context import SupplyContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from .format_instructions import format_instructions
from .structured_output import OutputParserError

NAIVE_FIX_PROMPT = """Instructions:
--------------
{instructions}
--------------
Completion:
--------------
{completion}
--------------

Above, the Completion did not satisfy the constraints given in the Instructions.
Error:
--------------
{error}
--------------

Please try again. Please only respond with an answer that satisfies the constraints laid out in the Instructions:"""
# LangChain's OutputParserException adds this to its message, and the prompt shows the message
TROUBLESHOOTING = "\n\nTroubleshooting URL: https://docs.langchain.com/oss/javascript/langchain/errors/OUTPUT_PARSING_FAILURE/\n"
_VARIABLE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


class AutofixOptions(NodeParams):
    prompt: str = Field(NAIVE_FIX_PROMPT, title="Retry Prompt", json_schema_extra={"multiline": True},
                        description="Uses {instructions}, {completion} and {error}")


class AutofixParams(NodeParams):
    options: AutofixOptions = Field(default_factory=AutofixOptions, title="Options")


def fill(template: str, values: dict[str, str]) -> str:
    """LangChain's f-string template: `{name}` replaced, `{{` and `}}` are braces."""
    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        return values.get(match.group(1), token)

    return _VARIABLE.sub(one, template)


class AutoFixingParser:
    def __init__(self, model: ChatModel, inner: OutputParser, prompt: str, signal: AbortSignal) -> None:
        self.model = model
        self.inner = inner
        self.prompt = prompt
        self.signal = signal

    def tool_schema(self) -> dict[str, Any]:
        return self.inner.tool_schema()

    async def parse(self, text: str) -> Any:
        try:
            return await self.inner.parse(text)
        except OutputParserError as failed:
            error = (failed.raw or failed.message) + TROUBLESHOOTING
        request = fill(self.prompt, {"instructions": format_instructions(self.inner.tool_schema()),
                                     "completion": text, "error": error})
        reply = await self.model.invoke([ChatMessage(role="user", content=request)], [], self.signal)
        return await self.inner.parse(reply.content)


class AutoFixingOutputParser(NodeType):
    type = "@n8n/n8n-nodes-langchain.outputParserAutofixing"
    version = 1
    display_name = "Auto-fixing Output Parser"
    description = "Wraps an output parser: when the answer does not fit, its model is asked to fix it"
    group = "AI"
    icon = "node"
    inputs = (
        PortSpec(AI_LANGUAGE_MODEL, "Model", required=True, max_connections=1),
        PortSpec(AI_OUTPUT_PARSER, "Output Parser", required=True, max_connections=1),
    )
    outputs = (PortSpec(AI_OUTPUT_PARSER, "Output Parser"),)
    Params = AutofixParams
    implemented_parameters = frozenset({"options", "options.prompt"})

    async def supply_data(self, ctx: SupplyContext) -> AutoFixingParser:
        params: AutofixParams = ctx.params()
        name = ctx.node.name
        prompt = params.options.prompt
        if not prompt or "{error}" not in prompt:
            raise NodeOperationError("Auto-fixing parser prompt has to contain {error} placeholder", node=name)
        model = await ctx.get_input_connection_data(AI_LANGUAGE_MODEL, 0)
        inner = await ctx.get_input_connection_data(AI_OUTPUT_PARSER, 0)
        if model is None or inner is None:
            raise NodeOperationError(f'Node "{name}" needs a Model and an Output Parser connected', node=name)
        return AutoFixingParser(model, inner, prompt, ctx.signal)
