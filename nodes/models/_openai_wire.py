"""The Chat Completions wire format: messages and tools out, replies and stream chunks back in.

Shared by the OpenAI Chat Model (over HTTP) and the Local Model (llama-cpp-python returns the
same shapes). Tool-call deltas are assembled by their `index`; arguments that are not valid
JSON are kept as the raw text so the Agent can show the model its mistake. A reply or a chunk
from a server is decoded by msgspec into the fields read (read_completion, read_chunk) where
they have the types servers send, else read as a dict, to the same effect.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence, TypeVar

import msgspec

from engine.chat import ChatMessage, ModelReply, TokenCallback, ToolSpec
from engine.shared_log import LogWindow

from ._common import loads_exact


WIRE, WIRE_TEXT = "openai-wire", "openai-wire-text"  # the parallel logs of an agent's messages in the wire format
_decode_json = msgspec.json.decode


def encode_args(args: dict[str, Any] | str) -> str:
    """Arguments as LangChain writes them (JSON.stringify: no spaces)."""
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def decode_args(raw: str | dict[str, Any] | None) -> dict[str, Any] | str:
    """Tool-call arguments as a dict, or the raw text when they are not a JSON object. Read as
    `json.loads` reads them: by msgspec (the reply's decoder: one pass, no check for long
    integers) where it reads the text, else by loads_exact (NaN, a number out of range, a lone
    surrogate: msgspec refuses them)."""
    if isinstance(raw, dict):
        return raw
    if raw is None or not raw.strip():
        return {}
    try:
        parsed = _decode_json(raw)
    except msgspec.MsgspecError:
        try:
            parsed = loads_exact(raw)
        except ValueError:
            return raw
    return parsed if isinstance(parsed, dict) else raw


def to_wire_messages(messages: Sequence[ChatMessage], call_text: bool = False) -> list[dict[str, Any]]:
    """The messages in the wire format. An agent passes a window on its append-only message log:
    each message's wire form (its tool calls' JSON arguments) is then made once for all requests.
    An assistant turn with tool calls has no text, as LangChain's ChatOpenAI writes it, unless
    `call_text` (ChatGroq keeps it)."""
    convert = wire_message_with_text if call_text else wire_message
    if isinstance(messages, LogWindow):
        return messages.mapped(WIRE_TEXT if call_text else WIRE, convert).to_list()
    return [convert(m) for m in messages]


def wire_message_with_text(m: ChatMessage) -> dict[str, Any]:
    return wire_message(m, call_text=True)


def wire_message(m: ChatMessage, call_text: bool = False) -> dict[str, Any]:
    if m.parts is not None:  # text and image_url parts, as LangChain passes them on
        return {"role": m.role, "content": m.parts}
    if m.role == "assistant" and m.tool_calls:
        return {
            "role": "assistant",
            "content": m.content if call_text else "",  # a string even when empty: some servers reject null
            "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": encode_args(c.args)}}
                for c in m.tool_calls
            ],
        }
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    return {"role": m.role, "content": m.content}


def to_wire_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


def usage_of(doc: dict[str, Any] | None) -> dict[str, int] | None:
    """The usage a reply or chunk reports, as the JSON of a reply's Usage (validated with the reply)."""
    usage = doc.get("usage") if isinstance(doc, dict) else None
    if not isinstance(usage, dict):
        return None
    return {"promptTokens": int(usage.get("prompt_tokens") or 0), "completionTokens": int(usage.get("completion_tokens") or 0)}


# a reply, its tool calls and its usage validated from one dict in one call: the same ModelReply as
# building each model and then the reply, for half the instructions (once per model call)
_validate_reply = ModelReply.__pydantic_validator__.validate_python


def reply_from_completion(doc: dict[str, Any]) -> ModelReply | None:
    """A non-streamed `chat.completion` as a ModelReply; None when it has no choice."""
    choices = doc.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message") or {}
    calls = [
        {"id": str(c.get("id") or f"call_{i + 1}"), "name": str(fn.get("name", "")), "args": decode_args(fn.get("arguments"))}
        for i, c in enumerate(message.get("tool_calls") or [])
        if isinstance(c, dict) and isinstance(fn := c.get("function") or {}, dict)
    ]
    return _validate_reply({"content": message.get("content") or "", "toolCalls": calls, "usage": usage_of(doc) or {}})


class _Function(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class _ToolCallPiece(msgspec.Struct):
    index: int | None = None
    id: str | None = None
    function: _Function | None = None


class _Delta(msgspec.Struct):
    content: str | None = None
    tool_calls: list[_ToolCallPiece] | None = None


class _Choice(msgspec.Struct):
    delta: _Delta | None = None
    finish_reason: str | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _Replied(msgspec.Struct):
    """What a reply and a streamed chunk both may carry: usage, an error."""

    usage: _Usage | None = None
    error: Any = None


class StreamChunk(_Replied):
    """The fields of a `chat.completion.chunk` the assembler reads, of the types servers send them in."""

    choices: list[_Choice] | None = None


class _CalledFunction(msgspec.Struct):
    name: str = ""  # not null: reply_from_completion writes a null name as "None", a reply read as a dict does that
    arguments: str | None = None


class _Call(msgspec.Struct):
    id: str | None = None
    function: _CalledFunction | None = None


class _Message(msgspec.Struct):
    content: str | None = None
    tool_calls: list[_Call] | None = None


class _ReplyChoice(msgspec.Struct):
    message: _Message | None = None


class Completion(_Replied):
    """The fields of a `chat.completion` a reply is made of, of the types servers send them in."""

    choices: list[_ReplyChoice] | None = None


T = TypeVar("T")


def _typed_reader(decode: Callable[[str | bytes], T]) -> Callable[[str | bytes], T | None]:
    """`decode`, a msgspec Decoder's, with None for what it refuses. msgspec decodes JSON into the
    fields its type reads, the others skipped unread (half the cost of a dict of every field), and
    refuses what is not JSON as it reads it or a field read of another type; JSON it reads, it
    reads as the standard library does (integers of any size, the last of repeated keys)."""

    def read(data: str | bytes) -> T | None:
        try:
            return decode(data)
        except msgspec.MsgspecError:
            return None

    return read


# a streamed event's chunk (a stream is a chunk per token); None: read as a dict, StreamAssembler.feed
_decode_chunk = msgspec.json.Decoder(StreamChunk).decode  # raises: read_chunks' loop catches once for all chunks
read_chunk = _typed_reader(_decode_chunk)
# a non-streamed reply; None: read as a dict, reply_from_completion (to the same effect either way)
read_completion = _typed_reader(msgspec.json.Decoder(Completion).decode)


DONE = b"[DONE]"


def read_chunks(payloads: list[bytes]) -> tuple[list[StreamChunk], bool] | None:
    """read_chunk of each event's data, up to the first `[DONE]` or the first chunk that reports
    an error (the last then), and whether a `[DONE]` ended them; None when one of them is not read
    so, a `[DONE]` written otherwise included (then read the events one by one, as dicts where
    need be: StreamAssembler.feed)."""
    out: list[StreamChunk] = []
    decode = _decode_chunk
    try:  # once around the loop, not in a call per chunk: a chunk per streamed token
        for payload in payloads:
            if payload[-1:] != b"}":
                return (out, True) if payload == DONE else None
            read = decode(payload)
            out.append(read)
            if read.error:
                break
    except msgspec.MsgspecError:
        return None
    return out, False


_NO_MESSAGE = _Message()


def reply_from_read(completion: Completion) -> ModelReply | None:
    """reply_from_completion of a reply read by `read_completion`."""
    choices = completion.choices
    if not choices:
        return None
    message = choices[0].message or _NO_MESSAGE
    calls = [
        {"id": c.id or f"call_{i + 1}", "name": fn.name if (fn := c.function) is not None else "",
         "args": decode_args(fn.arguments if fn is not None else None)}
        for i, c in enumerate(message.tool_calls or ())
    ]
    return _validate_reply({"content": message.content or "", "toolCalls": calls, "usage": _usage_json(completion.usage)})


def _usage_json(usage: _Usage | None) -> dict[str, int]:
    """usage_of's JSON of a usage read by msgspec ({} when there is none)."""
    if usage is None:
        return {}
    return {"promptTokens": usage.prompt_tokens or 0, "completionTokens": usage.completion_tokens or 0}


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class StreamAssembler:
    """Builds one reply from `chat.completion.chunk`s: text, tool calls by index, usage."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    usage: dict[str, int] | None = None  # as usage_of reads it
    finish_reason: str | None = None
    deltas: int = 0  # chunks that carried text or a tool-call piece: about one token each

    def feed(self, chunk: dict[str, Any], on_token: TokenCallback | None) -> None:
        """One chunk: its text (to `on_token` too), tool-call pieces, finish reason and usage.
        (Once per streamed token: the tool-call pieces are added here, not by a call each.)"""
        if "usage" in chunk:
            self.usage = usage_of(chunk) or self.usage
        choices = chunk.get("choices")
        if not choices:
            return
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            reason = choice.get("finish_reason")
            if reason:
                self.finish_reason = reason
            delta = choice.get("delta")
            if not delta:
                continue
            piece = delta.get("content")
            parts = delta.get("tool_calls")
            if piece or parts:
                self.deltas += 1
            if piece and isinstance(piece, str):
                self.text.append(piece)
                if on_token is not None:
                    on_token(piece)
            if not parts:
                continue
            calls = self.calls
            for position, part in enumerate(parts):
                index = part.get("index", position)
                key = int(index) if isinstance(index, int) else position
                call = calls.get(key)
                if call is None:
                    call = calls[key] = _PartialCall()
                part_id = part.get("id")
                if part_id:
                    call.id = str(part_id)
                fn = part.get("function")
                if not fn:
                    continue
                name = fn.get("name")
                if name and isinstance(name, str) and name != call.name:
                    call.name += name
                args = fn.get("arguments")
                if isinstance(args, str):
                    call.arguments += args
                elif isinstance(args, dict):
                    call.arguments += json.dumps(args)

    def feed_reads(self, chunks: Iterable[StreamChunk], on_token: TokenCallback | None) -> None:
        """Chunks of `read_chunk`, in order: the same as `feed` of each one's dict, for the types
        they were read in. (All of a body's chunks in one call where they came together.)"""
        text, calls = self.text, self.calls
        for chunk in chunks:
            if chunk.usage is not None:
                self.usage = _usage_json(chunk.usage)
            for choice in chunk.choices or ():
                reason = choice.finish_reason
                if reason:
                    self.finish_reason = reason
                delta = choice.delta
                if delta is None:
                    continue
                piece, parts = delta.content, delta.tool_calls
                if piece or parts:
                    self.deltas += 1
                if piece:
                    text.append(piece)
                    if on_token is not None:
                        on_token(piece)
                if not parts:
                    continue
                for position, part in enumerate(parts):
                    index = part.index
                    key = position if index is None else index
                    call = calls.get(key)
                    if call is None:
                        call = calls[key] = _PartialCall()
                    if part.id:
                        call.id = part.id
                    fn = part.function
                    if fn is None:
                        continue
                    name = fn.name
                    if name and name != call.name:
                        call.name += name
                    if fn.arguments is not None:
                        call.arguments += fn.arguments

    def reply(self, prompt_estimate: int = 0) -> ModelReply:
        """The assembled reply; servers that send no usage get one estimated from the stream."""
        calls = [
            {"id": c.id or f"call_{i + 1}", "name": c.name, "args": decode_args(c.arguments)}
            for i, (_index, c) in enumerate(sorted(self.calls.items()))
        ]
        usage = self.usage or {"promptTokens": prompt_estimate, "completionTokens": self.deltas}
        return _validate_reply({"content": "".join(self.text), "toolCalls": calls, "usage": usage})


def estimate_prompt_tokens(body: dict[str, Any]) -> int:
    """About four characters a token: for servers that report no usage."""
    return (len(json.dumps(body.get("messages", []), ensure_ascii=False)) + 3) // 4
