"""Scripted Chat Model: replies taken in order from its parameters. For tests and offline demos.

Which reply comes next is the number of calls this node has already made in the execution
(read from run data), so a paused and resumed execution continues the script where it was.
"""

import asyncio
import json
import math
import re
from typing import Any

from pydantic import Field

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ModelReply, TokenCallback, ToolCall, ToolSpec, Usage
from engine.connection_types import AI_LANGUAGE_MODEL, PortSpec
from engine.context import SupplyContext
from engine.defaults import new_list
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

_TOKEN = re.compile(r"\s*\S+|\s+")


class ScriptedToolCall(NodeParams):
    name: str
    args: dict[str, Any] | str = Field(default_factory=dict, description="An object, or raw text to play a model that writes broken JSON")
    id: str | None = None


class ScriptedReply(NodeParams):
    text: str = Field("", json_schema_extra={"multiline": True})
    toolCalls: list[ScriptedToolCall] = Field(default_factory=new_list)
    usage: dict[str, int] | None = Field(None, description="promptTokens / completionTokens; estimated when left out")
    error: str | None = Field(None, description="Fail this call with this message instead of replying")


class ScriptedOptions(NodeParams):
    tokenDelayMs: float = Field(0, ge=0, le=10000, title="Delay per Streamed Token (ms)")


class ScriptedParams(NodeParams):
    replies: list[ScriptedReply] = Field(default_factory=new_list, title="Replies")
    options: ScriptedOptions = Field(default_factory=ScriptedOptions, title="Options")


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4) if text else 0


class ScriptedModel:
    """The model object the node supplies; reply N is the node's N-th call of the execution."""

    def __init__(self, ctx: SupplyContext, params: ScriptedParams) -> None:
        self._ctx = ctx
        self._params = params

    async def invoke(
        self,
        messages: list[ChatMessage],
        tools: list[ToolSpec],
        signal: AbortSignal,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        call = self._ctx.run_count()
        replies = self._params.replies
        if call >= len(replies):
            raise NodeOperationError(
                f"The scripted model has no reply left: this is call {call + 1}, "
                f"and {len(replies)} repl{'y is' if len(replies) == 1 else 'ies are'} scripted",
                node=self._ctx.node.name,
            )
        reply = replies[call]
        if reply.error:
            raise NodeOperationError(reply.error, node=self._ctx.node.name)
        delay = self._params.options.tokenDelayMs / 1000.0
        if reply.text and (on_token is not None or delay):
            for piece in _TOKEN.findall(reply.text):
                if delay:
                    await asyncio.sleep(delay)
                if on_token is not None:
                    on_token(piece)
        calls = [
            ToolCall(id=c.id or f"call_{call + 1}_{j + 1}", name=c.name, args=self._args(c.args))
            for j, c in enumerate(reply.toolCalls)
        ]
        if reply.usage is not None:
            usage = Usage.model_validate(reply.usage)
        else:
            prompt = sum(estimate_tokens(m.content) + 4 for m in messages)
            completion = estimate_tokens(reply.text) + sum(
                estimate_tokens(c.name + json.dumps(c.args)) for c in calls
            )
            usage = Usage(promptTokens=prompt, completionTokens=completion)
        return ModelReply(content=reply.text, toolCalls=calls, usage=usage)

    @staticmethod
    def _args(args: dict[str, Any] | str) -> dict[str, Any] | str:
        if isinstance(args, str):
            try:
                parsed = json.loads(args)
            except json.JSONDecodeError:
                return args
            return parsed if isinstance(parsed, dict) else args
        return args


class ScriptedChatModel(NodeType):
    type = "mini-n8n.lmChatScripted"
    display_name = "Scripted Chat Model"
    description = "Plays back scripted replies in order: for tests and offline demos, not a real model"
    group = "Models"
    icon = "scripted-model"
    inputs = ()
    outputs = (PortSpec(AI_LANGUAGE_MODEL, "Model"),)
    Params = ScriptedParams

    async def supply_data(self, ctx: SupplyContext) -> ScriptedModel:
        return ScriptedModel(ctx, ctx.params())
