"""The Agent's "Require Specific Output Format" (`hasOutputParser`), as n8n's Tools Agent does it.

With an output parser connected, the model is offered one more tool, `format_final_json_response`,
whose parameters are the parser's schema, and the system message asks it to answer through that
tool. The answer is the arguments of that call (other calls in the same reply are dropped), or,
when the model answers in text, the text read as JSON (wrapped in `{"output": ...}` unless it is
already). The parser checks it; what it returns is the Agent's output item. With a memory
connected, the memory keeps the answer as JSON text.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from engine.chat import ChatMemory, ModelReply, OutputParser, ToolCall, ToolSpec
from engine.connection_types import AI_OUTPUT_PARSER
from engine.context import NodeContext
from engine.observation import js_json

FORMAT_TOOL = "format_final_json_response"
FORMAT_TOOL_DESCRIPTION = (
    "Use this tool to format your final response to the user in a structured JSON format. This tool validates your "
    "output against a schema to ensure it meets the required format. ONLY use this tool when you have completed all "
    "necessary reasoning and are ready to provide your final answer. Do not use this tool for intermediate steps or "
    "for asking questions. The output from this tool will be directly returned to the user."
)
FORMATTING_INSTRUCTIONS = (
    "IMPORTANT: For your response to user, you MUST use the `format_final_json_response` tool with your complete "
    "answer formatted according to the required schema. Do not attempt to format the JSON manually - always use this "
    "tool. Your response will be rejected if it is not properly formatted through this tool. Only use this tool once "
    "you are ready to provide your final answer."
)


def wants_parser(ctx: NodeContext) -> bool:
    """`hasOutputParser` as n8n reads it: a switch from v1.3 on; up to v1.2 it is not shown and
    reads as on."""
    given = ctx.node.parameters.get("hasOutputParser")
    if given is None:
        return float(ctx.node.typeVersion) <= 1.2
    return given is True


async def connected_parser(ctx: NodeContext, item_index: int) -> OutputParser | None:
    """The output parser the Agent uses for an item: the connected one when the switch is on."""
    if not wants_parser(ctx):
        if _parser_connected(ctx):
            ctx.note('an output parser is connected but "Require Specific Output Format" is off: it is not used (as in n8n)')
        return None
    parser = await ctx.get_input_connection_data(AI_OUTPUT_PARSER, item_index)
    if parser is None and ctx.node.parameters.get("hasOutputParser") is True:
        ctx.note('"Require Specific Output Format" is on but no output parser is connected: the answer is plain text (as in n8n)')
    return parser


def _parser_connected(ctx: NodeContext) -> bool:
    memo = ctx.memo("output-parser")
    if "connected" not in memo:
        name = ctx.node.name
        memo["connected"] = any(
            ctype == AI_OUTPUT_PARSER and target.node == name and not ctx.workflow.node(src).is_disabled
            for src, ctype, _i, target in ctx.workflow.links()
        )
    return memo["connected"]


def format_tool(parser: OutputParser) -> ToolSpec:
    """The final-response tool offered after the connected tools."""
    return ToolSpec(name=FORMAT_TOOL, description=FORMAT_TOOL_DESCRIPTION, parameters=parser.tool_schema())


def with_instructions(system: str | None, parser: OutputParser | None) -> str | None:
    """The system message with n8n's formatting instructions after it (alone when there is none)."""
    if parser is None:
        return system
    return f"{system}\n\n{FORMATTING_INSTRUCTIONS}" if system else FORMATTING_INSTRUCTIONS


def final_call(answer: ModelReply, parser: OutputParser | None) -> ToolCall | None:
    """The model's call of the final-response tool, if it made one."""
    if parser is None:
        return None
    return next((c for c in answer.tool_calls if c.name == FORMAT_TOOL), None)


def parser_input(answer: ModelReply, call: ToolCall | None) -> str:
    """What the parser reads: the tool call's arguments, or the text answer as n8n prepares it."""
    if call is not None:
        return call.args if isinstance(call.args, str) else js_json(call.args)
    text = answer.content
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(parsed, dict) and list(parsed) == ["output"]:
        return js_json(parsed)
    return js_json({"output": parsed})


async def structured_output(
    parser: OutputParser, answer: ModelReply, call: ToolCall | None, memory: ChatMemory | None, prompt: str,
    steps: Iterable[dict[str, Any]] = (), v3: bool = True,
) -> dict[str, Any]:
    """The Agent's output item for a final answer: parsed, remembered as JSON text."""
    from .memory_context import remember

    result = await parser.parse(parser_input(answer, call))
    if memory is None:
        return result if isinstance(result, dict) else {str(i): v for i, v in enumerate(result)} if isinstance(result, list) else {}
    await remember(memory, prompt, js_json(result), steps, v3)
    inner = result.get("output") if isinstance(result, dict) else None
    return {"output": inner if inner is not None else result}
