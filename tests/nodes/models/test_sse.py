"""Server-sent events as the streamed model replies are read: data lines joined, events ended by a
blank line (LF or CRLF), comments and other fields skipped, however the body is cut into chunks."""

from __future__ import annotations

import asyncio
import random
from typing import AsyncGenerator

from nodes.models._client import Reply
from nodes.models._http import Endpoint
from nodes.models._sse import simple_payloads, sse_data

STREAM = (b": keep-alive comment\r\nevent: message\r\ndata: {\"a\":1}\r\n\r\n"
          b"data: line1\ndata:line2\n\n\n"
          b"id: 7\ndata: [DONE]\n\n")


def batches(body: bytes, cuts: list[int]) -> list[tuple[list[tuple[str, bool]], bool]]:
    """The batches sse_data reads from `body` cut at `cuts`: each batch's events and whether it is plain."""
    async def chunks() -> AsyncGenerator[bytes, None]:
        start = 0
        for end in [*cuts, len(body)]:
            yield body[start:end]
            start = end

    async def close() -> None:
        pass

    async def read() -> list[tuple[list[tuple[str, bool]], bool]]:
        ep = Endpoint(url="http://127.0.0.1:1/v1/chat/completions", base_url="http://127.0.0.1:1/v1", model="m", node="M")
        return [(list(batch), batch.plain_numbers) async for batch in sse_data(ep, Reply(200, "OK", {}, chunks(), close))]

    return asyncio.run(read())


def events(body: bytes, cuts: list[int]) -> list[tuple[str, bool]]:
    return [event for batch, _plain in batches(body, cuts) for event in batch]


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


def reference(body: bytes) -> list[tuple[str, bool]]:
    """Server-sent events read line by line, as the specification words it (LF or CRLF ends)."""
    found, data = [], []
    *lines, last = body.split(b"\n")
    for raw in lines:
        line = raw.removesuffix(b"\r").decode("utf-8", "replace")
        if line.startswith("data:"):
            data.append(line[6:] if line.startswith("data: ") else line[5:])
        elif not line and data:
            found.append(("\n".join(data), True))
            data = []
    if last.startswith(b"data:"):
        line = last.removesuffix(b"\r").decode("utf-8", "replace")
        data.append(line[6:] if line.startswith("data: ") else line[5:])
    if data:
        found.append(("\n".join(data), last == b"\r"))
    return found


def test_bodies_of_one_line_events_and_others_read_as_line_by_line() -> None:
    pieces = [b'data: {"a":1}\n\n', b"data: [DONE]\n\n", b"data:  two spaces\n\n", b"data: x\n", b": comment\n",
              b"\n", b"data: crlf\r\n\r\n", b"event: e\n", b"data: \xc3\xa9\n\n", b"data: \n\n", b"data: a\rb\n\n",
              b"data:\n\n", b"dat", b"a: split\n\n"]
    rng = random.Random(12)
    for _ in range(300):
        body = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        expected = reference(body)
        assert events(body, []) == expected, body
        cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, rng.randint(0, 4)))) if len(body) > 1 else []
        assert events(body, cuts) == expected, (body, cuts)


def test_a_whole_body_of_one_line_data_events_reads_at_the_bytes_as_line_by_line() -> None:
    """simple_payloads gives the events of the bodies it takes exactly as read line by line (all
    of them ended), and takes no other body."""
    pieces = [b'data: {"a":1}\n\n', b"data: [DONE]\n\n", b"data:  two spaces\n\n", b"data: x\n", b": comment\n",
              b"\n", b"data: crlf\r\n\r\n", b"data: \xc3\xa9\n\n", b"data: \n\n", b"data: a\rb\n\n", b"data:\n\n",
              b"data: data: b\n\n", b"data: a\n\n\n"]
    rng = random.Random(13)
    taken = 0
    for _ in range(2000):
        body = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 5)))
        found = simple_payloads(body)
        expected = reference(body)
        if found is not None:
            taken += 1
            assert [(p.decode("utf-8", "replace"), True) for p in found] == expected, body
        else:
            assert not (body.startswith(b"data: ") and b"\r" not in body and all(
                ended and "\n" not in text for text, ended in expected) and body == b"".join(
                b"data: " + text.encode() + b"\n\n" for text, _ended in expected)), body
    assert taken > 300  # the usual bodies are among them


def test_a_batch_is_plain_only_when_no_long_integer_went_into_its_events() -> None:
    short, negative = b'data: {"n":123456789012345678}\n\n', b'data: {"n":-9223372036854775809}\n\n'
    assert batches(short + short, []) == [([('{"n":123456789012345678}', True)] * 2, True)]
    assert batches(short + negative, []) == [([('{"n":123456789012345678}', True), ('{"n":-9223372036854775809}', True)], False)]
    # an event whose long integer came in an earlier piece, ended in a later one
    assert batches(b'data: {"n":-9223372036854775809}\n' + b"\n" + short, [len(negative) - 1]) == [
        ([('{"n":-9223372036854775809}', True), ('{"n":123456789012345678}', True)], False)]
    assert batches(b'data: {"n":-92233720368547758\n' + b"data: 09}\n\n", [31]) == [
        ([('{"n":-92233720368547758\n09}', True)], True)]
