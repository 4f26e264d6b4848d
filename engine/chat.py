"""Messages, tool specs and model replies: what flows between an Agent, its model and its tools."""

from typing import Any, Awaitable, Callable, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from .abort import AbortSignal
from .defaults import new_list


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

    def to_json(self) -> dict[str, Any]:
        """As `model_dump(by_alias=True)`, without the serializer's cost (once per model call)."""
        return {"promptTokens": self.prompt_tokens, "completionTokens": self.completion_tokens}


class ModelReply(_CamelModel):
    """What `ChatModel.invoke` returns: text, tool calls and token usage."""

    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=new_list, alias="toolCalls")
    usage: Usage = Field(default_factory=Usage)

    def to_json(self) -> dict[str, Any]:
        """As `model_dump(mode="json", by_alias=True)`; written directly when every argument is
        plain JSON (strings, integers, booleans, null, lists, dicts), the serializer otherwise."""
        calls = []
        for call in self.tool_calls:
            args = call.args if type(call.args) is str else _plain_json_copy(call.args)
            if args is _NOT_PLAIN:
                return self.model_dump(mode="json", by_alias=True)
            calls.append({"id": call.id, "name": call.name, "args": args})
        return {"content": self.content, "toolCalls": calls, "usage": self.usage.to_json()}


_NOT_PLAIN = object()
_SCALARS = (str, int, bool, type(None))  # exactly these types: what the serializer writes unchanged


def _plain_json_copy(value: Any) -> Any:
    """A copy of `value` (new dicts and lists) if it holds only plain JSON, else _NOT_PLAIN."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                return _NOT_PLAIN
            copy = _plain_json_copy(item)
            if copy is _NOT_PLAIN:
                return _NOT_PLAIN
            out[key] = copy
        return out
    if kind is list:
        items = [_plain_json_copy(item) for item in value]
        return _NOT_PLAIN if any(item is _NOT_PLAIN for item in items) else items
    return _NOT_PLAIN


class ChatMessage(_CamelModel):
    """One message of a conversation, in the roles of the Chat Completions API."""

    # the message's JSON once made (to_json): a slot, not a pydantic private attribute, whose
    # per-message set-up was half of what making a message cost; not part of its value (equality,
    # copies and dumps ignore it)
    __slots__ = ("_json_cache",)

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] | None = Field(None, alias="toolCalls")
    tool_call_id: str | None = Field(None, alias="toolCallId")
    # a user message of content parts instead of text (an Agent's input files): LangChain's
    # {"type": "text", "text"} and {"type": "image_url", "image_url": {"url"}}
    parts: list[dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        """The message as JSON, made once per message: run data records every message of every
        model call, so the runs of one execution share these dicts (treat them as read-only)."""
        try:
            return _made_json(self)
        except AttributeError:  # not made yet
            pass
        made: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls is not None:
            made["toolCalls"] = [{"id": c.id, "name": c.name, "args": c.args} for c in self.tool_calls]
        if self.tool_call_id is not None:
            made["toolCallId"] = self.tool_call_id
        if self.parts is not None:
            made["parts"] = self.parts
        object.__setattr__(self, "_json_cache", made)
        return made


# the slot read through its descriptor: a missing attribute read the usual way goes on to
# pydantic's __getattr__, which costs twice the rest of making the JSON
_made_json = ChatMessage.__dict__["_json_cache"].__get__


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


@runtime_checkable
class OutputParser(Protocol):
    """An output parser as an output-parser sub-node supplies it: the schema of the answer (the
    parameters of the Agent's final-response tool) and `parse`, which raises a
    NodeOperationError naming what does not fit."""

    def tool_schema(self) -> dict[str, Any]: ...

    async def parse(self, text: str) -> Any: ...


ToolRunner = Callable[[dict[str, Any]], Awaitable[Any]]
