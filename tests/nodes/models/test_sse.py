"""Server-sent events as the streamed model replies are read: data lines joined, events ended by a
blank line (LF or CRLF), comments and other fields skipped, however the body is cut into chunks."""

from __future__ import annotations

import asyncio
from typing import AsyncGenerator

from nodes.models._client import Reply
from nodes.models._http import Endpoint, sse_data

STREAM = (b": keep-alive comment\r\nevent: message\r\ndata: {\"a\":1}\r\n\r\n"
          b"data: line1\ndata:line2\n\n\n"
          b"id: 7\ndata: [DONE]\n\n")


def events(body: bytes, cuts: list[int]) -> list[tuple[str, bool]]:
    async def chunks() -> AsyncGenerator[bytes, None]:
        start = 0
        for end in [*cuts, len(body)]:
            yield body[start:end]
            start = end

    async def close() -> None:
        pass

    async def read() -> list[tuple[str, bool]]:
        ep = Endpoint(url="http://127.0.0.1:1/v1/chat/completions", base_url="http://127.0.0.1:1/v1", model="m", node="M")
        return [event async for batch in sse_data(ep, Reply(200, "OK", {}, chunks(), close)) for event in batch]

    return asyncio.run(read())


def test_events_are_the_same_wherever_the_body_is_cut() -> None:
    expected = [('{"a":1}', True), ("line1\nline2", True), ("[DONE]", True)]
    assert events(STREAM, []) == expected
    for cut in range(1, len(STREAM)):
        assert events(STREAM, [cut]) == expected, cut
    assert events(STREAM, list(range(1, len(STREAM)))) == expected  # a byte at a time


def test_an_event_the_body_ends_in_is_given_as_unfinished() -> None:
    assert events(b"data: {\"a\":1}\n\ndata: tail", []) == [('{"a":1}', True), ("tail", False)]
    assert events(b"data: tail\r\n", [5]) == [("tail", False)]
    assert events(b"data: tail\n\r", []) == [("tail", True)]  # a last line that is only CR is blank
    assert events(b": only a comment\n", []) == []


def test_text_is_decoded_as_utf_8_wherever_the_body_is_cut() -> None:
    body = 'data: {"t":"é😀"}\r\n\r\ndata: bad \xff\xfe end\n\n'.encode("utf-8").replace(b"\xc3\xbf\xc3\xbe", b"\xff\xe2\x82")
    expected = [('{"t":"é😀"}', True), ("bad \ufffd\ufffd end", True)]
    assert events(body, []) == expected
    for cut in range(1, len(body)):
        assert events(body, [cut]) == expected, cut
    assert events(body, list(range(1, len(body)))) == expected
