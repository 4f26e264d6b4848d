"""Basic LLM Chain (n8n's `chainLlm`, v1–v1.7): one prompt to a chat model, one answer per item.

The prompt is `prompt` up to v1.3, then `text` or, with promptType `auto`, the item's
`chatInput`. Chat Messages (system, AI, user text) come before it. Without an output parser the
answer is `{"text": <reply, trimmed>}`. With one (hasOutputParser; up to v1.3 and in v1.3 it is
not shown and reads as on), the parser's format instructions follow the prompt and the reply
is parsed: the item is what the parser returns. A Fallback Model is asked when the Chat Model
fails (as for the Agent). Image messages are refused with an error, never dropped.
"""

import json
from typing import Any, Literal

from pydantic import Field

from engine.chat import ChatMessage, OutputParser
from engine.connection_types import AI_LANGUAGE_MODEL, AI_OUTPUT_PARSER, MAIN, PortSpec
from engine.context import NodeContext
from engine.defaults import new_list
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item
from nodes.agent.fallback import agent_model
from nodes.ignored_parameters import note_ignored
from nodes.parsers.format_instructions import format_instructions

VERSIONS = (1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7)
_LEGACY_PROMPT = {1.0: "={{ $json.input }}", 1.1: "={{ $json.chat_input }}", 1.2: "={{ $json.chat_input }}",
                  1.3: "={{ $json.chatInput }}"}
_ROLES = {"SystemMessagePromptTemplate": "system", "AIMessagePromptTemplate": "assistant",
          "HumanMessagePromptTemplate": "user"}


class ChainMessage(NodeParams):
    type: str = Field("SystemMessagePromptTemplate", title="Type of Message")
    messageType: Literal["text", "imageBinary", "imageUrl"] = Field("text", title="Message Type")
    message: str = Field("", title="Message", json_schema_extra={"multiline": True})


class ChainMessages(NodeParams):
    messageValues: list[ChainMessage] = Field(default_factory=new_list)


class ChainParams(NodeParams):
    promptType: Literal["auto", "define", "guardrails"] = Field("auto", title="Source for Prompt (User Message)")
    text: Any = Field("", title="Prompt (User Message)", json_schema_extra={"multiline": True})
    prompt: Any = Field(None, title="Prompt (v1–v1.3)", json_schema_extra={"multiline": True})
    hasOutputParser: bool = Field(False, title="Require Specific Output Format")
    needsFallback: bool = Field(False, title="Enable Fallback Model")
    messages: ChainMessages = Field(default_factory=ChainMessages, title="Chat Messages (if Using a Chat Model)")


def _prompt(ctx: NodeContext, params: ChainParams, item: Item, version: float) -> str:
    if version <= 1.3:
        value = params.prompt if "prompt" in ctx.node.parameters else _default_prompt(ctx, version)
    elif params.promptType == "auto":
        value = (item.get("json") or {}).get("chatInput")
        if value is None:
            raise NodeOperationError(
                "No prompt specified", node=ctx.node.name,
                description="Expected to find the prompt in an input field called 'chatInput' (this is what the chat "
                            "trigger node node outputs). To use something else, change the 'Prompt' parameter",
            )
    elif params.promptType == "guardrails":
        raise NodeOperationError("The Guardrails prompt source is not supported by mini-n8n", node=ctx.node.name)
    else:
        value = params.text
    if value is None:
        raise NodeOperationError("The 'prompt' parameter is empty.", node=ctx.node.name)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _default_prompt(ctx: NodeContext, version: float) -> Any:
    return ctx.evaluate(_LEGACY_PROMPT.get(version, "={{ $json.chatInput }}"))


def _messages(ctx: NodeContext, params: ChainParams) -> list[ChatMessage]:
    out = []
    for message in params.messages.messageValues:
        role = _ROLES.get(message.type)
        if role is None:
            raise NodeOperationError(f"Invalid message type: {message.type}", node=ctx.node.name)
        if role == "user" and message.messageType != "text":
            raise NodeOperationError(
                f'Basic LLM Chain "{ctx.node.name}": image messages ({message.messageType}) are not supported by mini-n8n',
                node=ctx.node.name,
            )
        out.append(ChatMessage(role=role, content=message.message or ""))  # type: ignore[arg-type]
    return out


def wants_parser(ctx: NodeContext, version: float) -> bool:
    """n8n reads hasOutputParser as on where it does not show it (v1, v1.1, v1.3)."""
    given = ctx.node.parameters.get("hasOutputParser")
    if given is None:
        return version in (1, 1.1, 1.3)
    return given is True


def format_response(response: Any, unwrap: bool) -> dict[str, Any]:
    """n8n's formatResponse: text trimmed, a list as `data`, an object as it is (from v1.6 or with a parser)."""
    if isinstance(response, str):
        return {"text": response.strip()}
    if isinstance(response, list):
        return {"data": response}
    if isinstance(response, dict):
        return response if unwrap else {"text": json.dumps(response, ensure_ascii=False, separators=(",", ":"))}
    return {"response": {"text": response}}


class ChainLlm(NodeType):
    type = "@n8n/n8n-nodes-langchain.chainLlm"
    version = 1.7
    versions = VERSIONS
    display_name = "Basic LLM Chain"
    description = "A simple chain to prompt a large language model: one answer per item, optionally in a set format"
    group = "AI"
    icon = "agent"
    inputs = (
        PortSpec(MAIN),
        PortSpec(AI_LANGUAGE_MODEL, "Chat Model", required=True, max_connections=1),
        PortSpec(AI_LANGUAGE_MODEL, "Fallback Model", max_connections=1),
        PortSpec(AI_OUTPUT_PARSER, "Output Parser", max_connections=1),
    )
    outputs = (PortSpec(MAIN),)
    Params = ChainParams
    implemented_parameters = frozenset({"promptType", "text", "prompt", "hasOutputParser", "needsFallback", "messages"})
    unsupported_parameters = {
        "batching": "items are sent to the model one at a time, without its batch size or delay (a run-log note names it)",
    }

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        name = ctx.node.name
        version = float(ctx.node.typeVersion)
        note_ignored(ctx, self.unsupported_parameters, ["batching"], {"batching": {}})
        model = await agent_model(ctx)
        if model is None:
            raise NodeOperationError(f'Node "{name}" needs a Chat Model connected', node=name)
        parser: OutputParser | None = None
        if wants_parser(ctx, version):
            parser = await ctx.get_input_connection_data(AI_OUTPUT_PARSER, 0)
        unwrap = version >= 1.6 or parser is not None
        out: list[Item] = []
        for i, item in enumerate(ctx.items):
            params: ChainParams = ctx.params(i)
            query = _prompt(ctx, params, item, version)
            if parser is not None:
                query = f"{query}\n{format_instructions(parser.tool_schema())}"
            messages = [*_messages(ctx, params), ChatMessage(role="user", content=query)]
            answer = await model.invoke(messages, [], ctx.signal)
            result: Any = answer.content
            if parser is not None:
                result = await parser.parse(answer.content)
            out.append({"json": format_response(result, unwrap), "pairedItem": {"item": i}})
        return [out]
