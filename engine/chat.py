"""Messages, tool specs and model replies: what flows between an Agent, its model and its tools."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from .abort import AbortSignal


class _CamelModel(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


class ToolCall(_CamelModel):
    """A tool call a model asked for. `args` is a dict, or the raw text when it was not valid JSON."""

    id: str
    name: str
    args: dict[str, Any] | str = Field(default_factory=dict)


class Usage(_CamelModel):
    prompt_tokens: int = Field(0, alias="promptTokens")
    completion_tokens: int = Field(0, alias="completionTokens")


class ModelReply(_CamelModel):
    """What `ChatModel.invoke` returns: text, tool calls and token usage."""

    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list, alias="toolCalls")
    usage: Usage = Field(default_factory=Usage)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class ChatMessage(_CamelModel):
    """One message of a conversation, in the roles of the Chat Completions API."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] | None = Field(None, alias="toolCalls")
    tool_call_id: str | None = Field(None, alias="toolCallId")

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class ToolSpec(_CamelModel):
    """A tool as the model sees it (name, description, JSON schema) and the node that runs it."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    source_node_name: str = Field("", alias="sourceNodeName")
    is_from_toolkit: bool = Field(False, alias="isFromToolkit")


TokenCallback = Callable[[str], None]


@runtime_checkable
class ChatModel(Protocol):
    """A chat model as sub-nodes supply it to an Agent."""

    async def invoke(
        self,
        messages: list[ChatMessage],
        tools: list[ToolSpec],
        signal: AbortSignal,
        on_token: TokenCallback | None = None,
    ) -> ModelReply: ...


@runtime_checkable
class ChatMemory(Protocol):
    """Conversation memory as a memory sub-node supplies it."""

    async def load_messages(self) -> list[ChatMessage]: ...

    async def save_context(self, user_input: str, output: str) -> None: ...


ToolRunner = Callable[[dict[str, Any]], Awaitable[Any]]
