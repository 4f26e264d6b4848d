"""A streamed Chat Completions reply reads the same whether all of it came with the head (read at
once) or it arrives piece by piece: the same reply, tokens and errors."""

from __future__ import annotations

import json
from typing import Any, AsyncGenerator

import pytest

from engine.errors import NodeOperationError
from nodes.models._client import Reply
from nodes.models._openai_wire import read_chunks
from nodes.models._sse import simple_payloads
from nodes.models.openai_chat import OpenAIParams, chat_model

BASE = "http://127.0.0.1:9/v1"


def event(choices: list[dict[str, Any]], **extra: Any) -> bytes:
    return b"data: " + json.dumps({"object": "chat.completion.chunk", "choices": choices, **extra}).encode() + b"\n\n"


def delta(content: dict[str, Any], reason: str | None = None) -> bytes:
    return event([{"index": 0, "delta": content, "finish_reason": reason}])


CALL = (delta({"role": "assistant", "content": ""})
        + delta({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "Calculator", "arguments": ""}}]})
        + delta({"tool_calls": [{"index": 0, "function": {"arguments": "{\"expression\": "}}]})
        + delta({"tool_calls": [{"index": 0, "function": {"arguments": "\"2 + 2\"}"}}]})
        + delta({}, "tool_calls") + event([], usage={"prompt_tokens": 12, "completion_tokens": 3}) + b"data: [DONE]\n\n")
TEXT = delta({"content": "Hel"}) + b": keep-alive\r\n\r\n" + delta({"content": "lo"}) + delta({}, "stop") + b"data: [DONE]\n\n"
FAILING = delta({"content": "part"}) + b'data: {"error": {"message": "Overloaded"}}\n\n' + b"data: [DONE]\n\n"
CUT = delta({"content": "an answer that"}) + delta({"content": " gets"})  # no finish reason, no [DONE]
CUT_MID_EVENT = delta({"content": "an answer that"}) + b'data: {"choices": [{"index": 0, "del'
UNENDED = delta({"content": "done"}) + delta({}, "stop")[:-2]  # its last event has no blank line after it
# only `data: ` events, but one that msgspec does not read into its types (read as a dict instead)
UNTYPED = delta({"content": "a"}) + event([{"index": 0, "delta": {"content": 7}}]) + delta({}, "stop") + b"data: [DONE]\n\n"
AFTER_DONE = delta({"content": "a"}) + delta({}, "stop") + b"data: [DONE]\n\n" + b"data: {not json\n\n"
SPACED_DONE = delta({"content": "a"}) + delta({}, "stop") + b"data: [DONE] \n\n"
MULTI_LINE = delta({"content": "a"}) + b'data: {"choices": [{"index": 0,\ndata: "delta": {"content": "b"}}]}\n\n' + delta({}, "stop")
NOT_UTF_8 = delta({"content": "a\u00e9"}).replace("\\u00e9".encode(), b"\xff") + delta({}, "stop") + b"data: [DONE]\n\n"


def reply(body: bytes, whole: bool, pieces: int = 7) -> Reply:
    """The reply as the client hands it over: all of it with the head, or in pieces."""
    taken = False

    async def raw() -> AsyncGenerator[bytes, None]:
        nonlocal taken
        size = max(1, len(body) // pieces)
        for start in range(0, len(body), size):
            yield body[start:start + size]
        taken = True

    async def close() -> None:
        pass

    return Reply(200, "OK", {"content-type": "text/event-stream"}, raw(), close, lambda: taken,
                 (lambda: body) if whole else None)


async def read(body: bytes, whole: bool, max_bytes: int | None = None) -> tuple[Any, list[str]]:
    model = chat_model(OpenAIParams.model_validate({"model": "m", "options": {"baseURL": BASE}}), {}, None, "Model")
    if max_bytes is not None:
        model.endpoint.max_bytes = max_bytes
    tokens: list[str] = []
    try:
        got: Any = await model._read_stream(reply(body, whole), tokens.append, {"messages": [{"role": "user", "content": "hi"}]})
    except NodeOperationError as exc:
        got = exc.message
    return got, tokens


@pytest.mark.parametrize("body", [CALL, TEXT, FAILING, CUT, CUT_MID_EVENT, UNENDED, UNTYPED, AFTER_DONE, SPACED_DONE, MULTI_LINE,
                                  NOT_UTF_8],
                         ids=["call", "text", "failing", "cut", "cut mid-event", "unended", "untyped", "after done", "spaced done",
                              "multi-line", "not utf-8"])
async def test_a_stream_reads_the_same_whole_or_in_pieces(body: bytes) -> None:
    assert await read(body, whole=True) == await read(body, whole=False)


async def test_what_a_whole_stream_reads_as() -> None:
    call, _tokens = await read(CALL, whole=True)
    assert [(c.id, c.name, c.args) for c in call.tool_calls] == [("call_1", "Calculator", {"expression": "2 + 2"})]
    assert (call.usage.prompt_tokens, call.usage.completion_tokens) == (12, 3)
    text, tokens = await read(TEXT, whole=True)
    assert text.content == "Hello" and tokens == ["Hel", "lo"]
    failing, tokens = await read(FAILING, whole=True)
    assert failing == f"the model server at {BASE} reported an error mid-reply: Overloaded" and tokens == ["part"]
    assert (await read(CUT, whole=True)) == (f"the model server at {BASE} ended the stream mid-reply", ["an answer that", " gets"])
    assert (await read(UNENDED, whole=True))[0].content == "done"
    assert (await read(UNTYPED, whole=True))[0].content == "a"  # read as a dict, whose content that is not text is skipped
    assert (await read(AFTER_DONE, whole=True))[0].content == "a"
    assert (await read(SPACED_DONE, whole=True))[0].content == "a"
    assert (await read(MULTI_LINE, whole=True))[0].content == "ab"
    assert (await read(NOT_UTF_8, whole=True))[0].content == "a\ufffd"


def test_which_whole_streams_are_read_without_the_event_reader() -> None:
    """The usual body is read at the bytes (every chunk by msgspec); anything else event by event."""
    read = [read_chunks(simple_payloads(body) or []) for body in (CALL, FAILING, CUT, AFTER_DONE)]
    assert [(len(chunks), done) for chunks, done in read] == [(6, True), (2, False), (2, False), (2, True)]  # FAILING: to its error
    assert [simple_payloads(body) for body in (TEXT, UNENDED, MULTI_LINE, CUT_MID_EVENT)] == [None] * 4
    assert [read_chunks(simple_payloads(body) or []) for body in (UNTYPED, SPACED_DONE, NOT_UTF_8)] == [None] * 3


async def test_the_size_cap_holds_for_a_stream_that_came_with_its_head() -> None:
    refused, tokens = await read(TEXT, whole=True, max_bytes=len(TEXT) - 1)
    assert "sent a reply larger than" in refused and tokens == []
    assert (await read(TEXT, whole=True, max_bytes=len(TEXT)))[0].content == "Hello"
