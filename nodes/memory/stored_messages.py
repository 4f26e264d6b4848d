"""Chat messages as LangChain stores them (mapChatMessagesToStoredMessages), so a conversation
n8n wrote can be read here and the other way round: `{"type": "human" | "ai" | "system",
"data": {"content": ..., "additional_kwargs": {}, "response_metadata": {}, ...}}`."""

from __future__ import annotations

from typing import Any

from engine.chat import ChatMessage

_TYPES = {"user": "human", "assistant": "ai", "system": "system", "tool": "tool"}
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def stored(message: ChatMessage) -> dict[str, Any]:
    """A message as LangChain's toDict gives it (n8n's memories save human and AI turns)."""
    data: dict[str, Any] = {"content": message.content, "additional_kwargs": {}, "response_metadata": {}}
    if message.role == "assistant":
        data.update(tool_calls=[], invalid_tool_calls=[])
    if message.role == "tool":
        data["tool_call_id"] = message.tool_call_id or ""
    return {"type": _TYPES[message.role], "data": data}


def from_stored(doc: Any) -> ChatMessage | None:
    """A stored message as a ChatMessage; None for kinds an agent cannot replay."""
    if not isinstance(doc, dict):
        return None
    role = _ROLES.get(str(doc.get("type")))
    data = doc.get("data") if isinstance(doc.get("data"), dict) else {}
    if role is None or role == "tool":
        return None
    content = data.get("content", "")
    if isinstance(content, list):  # content blocks: their text
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ChatMessage(role=role, content=str(content))  # type: ignore[arg-type]


def window(messages: list[ChatMessage], turns: int | None) -> list[ChatMessage]:
    """BufferWindowMemory's window: the last `turns` question-and-answer pairs (all when None)."""
    return messages if turns is None else messages[-2 * turns:] if turns > 0 else []
