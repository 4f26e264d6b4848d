"""Simple Memory (window buffer): the last `contextWindowLength` turns of each session."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from engine.chat import ChatMessage
from engine.connection_types import AI_MEMORY, PortSpec
from engine.context import SupplyContext
from engine.errors import NodeOperationError
from engine.expressions import resolve_parameters
from engine.node_type import NodeParams, NodeType
from engine.services import MemoryStore


class BufferWindowParams(NodeParams):
    sessionIdType: Literal["fromInput", "customKey"] = Field("fromInput", title="Session ID")
    sessionKey: str = Field("={{ $json.sessionId }}", title="Key")
    contextWindowLength: int = Field(5, ge=1, le=1000, title="Context Window Length")


class WindowMemory:
    """A conversation's window: loads the last k turns, saves one question and answer."""

    def __init__(self, store: MemoryStore, key: tuple[str, str], turns: int) -> None:
        self.store = store
        self.key = key
        self.turns = turns

    async def load_messages(self) -> list[ChatMessage]:
        messages = self.store.load(self.key)
        return messages[-2 * self.turns:]

    async def save_context(self, user_input: str, output: str) -> None:
        self.store.append(
            self.key, [ChatMessage(role="user", content=user_input), ChatMessage(role="assistant", content=output)]
        )


class BufferWindowMemory(NodeType):
    type = "@n8n/n8n-nodes-langchain.memoryBufferWindow"
    version = 1.3
    display_name = "Simple Memory"
    description = "Remembers the last turns of each chat session, for as long as the app runs"
    group = "Memory"
    icon = "memory"
    inputs = ()
    outputs = (PortSpec(AI_MEMORY, "Memory"),)
    Params = BufferWindowParams

    async def supply_data(self, ctx: SupplyContext) -> WindowMemory:
        params: BufferWindowParams = ctx.params()
        data = (ctx.item or {}).get("json", {})
        if params.sessionIdType == "fromInput":
            session = data.get("sessionId")
        else:
            session = resolve_parameters(params.sessionKey, data)
        if session is None or str(session).strip() == "":
            raise NodeOperationError(
                "No session ID found: the input has no 'sessionId' field. Connect a Chat Trigger, "
                "or set 'Session ID' to a custom key",
                node=ctx.node.name,
            )
        return WindowMemory(ctx.services.memory, (ctx.workflow_id, str(session)), params.contextWindowLength)
