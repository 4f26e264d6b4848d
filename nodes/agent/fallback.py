"""The Agent's fallback model (`needsFallback`, "Enable Fallback Model"), as n8n runs it.

With the option on, a second Chat Model is connected to the Agent's input 1 ("Fallback Model").
Every model call goes to the Chat Model first; when that call fails, the same call goes to the
fallback model (LangChain's `withFallbacks`, which n8n uses). When both fail, the Chat Model's
error is the Agent's. Both calls are recorded runs of their own nodes, the fallback's marked
`fallback`, and the Agent's run log line notes each time the fallback answered.
"""

from __future__ import annotations

from typing import Callable, Sequence

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ChatModel, ModelReply, TokenCallback, ToolSpec
from engine.connection_types import AI_LANGUAGE_MODEL
from engine.context import NodeContext
from engine.errors import NodeOperationError

MISSING_FALLBACK = "A Fallback Model sub-node must be connected and enabled"


class FallbackChatModel:
    """A chat model that asks `fallback` when `primary` fails."""

    def __init__(self, primary: ChatModel, fallback: ChatModel, note: Callable[[str], None]) -> None:
        self.primary = primary
        self.fallback = fallback
        self._note = note

    async def invoke(
        self,
        messages: Sequence[ChatMessage],
        tools: list[ToolSpec],
        signal: AbortSignal,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        try:
            return await self.primary.invoke(messages, tools, signal, on_token)  # type: ignore[arg-type]
        except NodeOperationError as first:
            if signal.aborted:
                raise
            try:
                reply = await self.fallback.invoke(messages, tools, signal, on_token)  # type: ignore[arg-type]
            except NodeOperationError:
                raise first from None
            self._note(f'the Chat Model "{first.node}" failed ({first.message}); the Fallback Model answered')
            return reply


def _connected_at(ctx: NodeContext, input_index: int) -> bool:
    memo = ctx.memo("fallback")
    if input_index not in memo:
        name = ctx.node.name
        memo[input_index] = any(
            ctype == AI_LANGUAGE_MODEL and target.node == name and target.index == input_index
            and not ctx.workflow.node(src).is_disabled
            for src, ctype, _i, target in ctx.workflow.links()
        )
    return memo[input_index]


async def agent_model(ctx: NodeContext) -> ChatModel | None:
    """The model the Agent calls: its Chat Model, with the Fallback Model behind it when the
    option is on (an error when nothing is connected there, as in n8n)."""
    primary = await ctx.get_input_data_at(AI_LANGUAGE_MODEL, 0)
    if ctx.node.parameters.get("needsFallback") is not True:
        if primary is None:  # a file may connect its only model to another input index
            primary = await ctx.get_input_connection_data(AI_LANGUAGE_MODEL, 0)
        elif _connected_at(ctx, 1):
            ctx.note('a model is connected as Fallback Model but "Enable Fallback Model" is off: it is not used (as in n8n)')
        return primary
    fallback = await ctx.get_input_data_at(AI_LANGUAGE_MODEL, 1)
    if fallback is None:
        raise NodeOperationError(MISSING_FALLBACK, node=ctx.node.name)
    if primary is None:
        return None
    return FallbackChatModel(primary, fallback, ctx.note)
