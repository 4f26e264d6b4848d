"""Simple Memory (window buffer): the last `contextWindowLength` turns of each session.

The session key per version, as n8n's MemoryBufferWindow: v1 `sessionKey` (default
"chat_history"), v1.1 `sessionKey` (default `{{ $json.sessionId }}`), v1.2+ `sessionIdType`:
`fromInput` reads the input's sessionId, else the Chat Trigger's; `customKey` reads `sessionKey`.
"""

from typing import Literal

from pydantic import Field

from engine.chat import ChatMessage
from engine.connection_types import AI_MEMORY, PortSpec
from engine.context import SupplyContext
from engine.errors import NodeOperationError
from engine.run_data import Item
from engine.node_type import NodeParams, NodeType
from engine.services import MemoryStore


class BufferWindowParams(NodeParams):
    sessionIdType: Literal["fromInput", "customKey"] = Field("fromInput", title="Session ID")
    sessionKey: str = Field("={{ $json.sessionId }}", title="Key", json_schema_extra={
        "displayOptions": {"show": {"sessionIdType": ["customKey"]}}})
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
    versions = (1, 1.1, 1.2, 1.3)
    display_name = "Simple Memory"
    description = "Remembers the last turns of each chat session, for as long as the app runs"
    group = "Memory"
    icon = "memory"
    inputs = ()
    outputs = (PortSpec(AI_MEMORY, "Memory"),)
    Params = BufferWindowParams
    implemented_parameters = frozenset({"sessionIdType", "sessionKey", "contextWindowLength"})

    async def supply_data(self, ctx: SupplyContext) -> WindowMemory:
        params: BufferWindowParams = ctx.params()
        session = session_id(ctx, params, float(ctx.node.typeVersion))
        return WindowMemory(ctx.services.memory, (ctx.workflow_id, session), params.contextWindowLength)


def session_id(ctx: SupplyContext, params: BufferWindowParams, version: float) -> str:
    """The conversation's key for this node's typeVersion, with n8n's errors when there is none."""
    name = ctx.node.name
    data = (ctx.item or {}).get("json", {})
    given = "sessionKey" in ctx.node.parameters
    if version < 1.2:
        if version < 1.1:
            raw = params.sessionKey if given else "chat_history"
        else:
            raw = params.sessionKey if given else data.get("sessionId")
        return _as_text(raw, name)
    if params.sessionIdType == "fromInput":
        raw = data.get("sessionId")
        if raw is None or raw == "":
            trigger = _chat_trigger_item(ctx)
            raw = (trigger or {}).get("json", {}).get("sessionId")
        if raw is None or raw == "":
            raise NodeOperationError(
                "No session ID found", node=name,
                description="Expected to find the session ID in an input field called 'sessionId' (this is what the "
                            "chat trigger node outputs). To use something else, change the 'Session ID' parameter",
            )
        return _as_text(raw, name)
    raw = params.sessionKey if given else ""
    if raw is None or raw == "":
        raise NodeOperationError(
            "Key parameter is empty", node=name,
            description="Provide a key to use as session ID in the 'Key' parameter or use the 'Connected Chat Trigger "
                        "Node' option to use the session ID from your Chat Trigger",
        )
    return _as_text(raw, name)


def _chat_trigger_item(ctx: SupplyContext) -> Item | None:
    for node in ctx.workflow.nodes:
        if ctx.node_type_of(node).is_chat_trigger:
            return ctx.first_output_item(node.name)
    return None


def _as_text(value: object, node: str) -> str:
    """n8n's coerceSessionIdToString: text stays, numbers and booleans become text, the rest fails."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(int(value)) if float(value).is_integer() else str(value)
    raise NodeOperationError("Invalid session ID", node=node, description="The session ID must be a text value")
