"""Server-sent events of a streamed model reply, read a piece of the body at a time.

A piece made only of one-line `data:` events (what a Chat Completions server sends) is split in
a few passes over the whole piece instead of line by line; anything else (comments, fields,
multi-line data, CRLF, an event cut between pieces) is read line by line. Either way the events
are the same.
"""

from __future__ import annotations

from contextlib import aclosing
from itertools import repeat
from typing import AsyncIterator, Iterable

from ._client import Reply
from ._common import plain_numbers
from ._http import Endpoint, body_chunks


class Events(list[tuple[str, bool]]):
    """The events one piece of a body completes, as (data, ended by a blank line) pairs.
    `plain_numbers`: no integer in them is long enough for orjson to read it otherwise than the
    standard library, so orjson alone may read each of them (found out from the piece's bytes when
    first asked: a reader that decodes the events otherwise never asks)."""

    __slots__ = ("_raw", "_plain")

    def __init__(self, events: Iterable[tuple[str, bool]] = (), raw: bytes = b"", plain: bool = False) -> None:
        """`raw`: the bytes the events were read from; `plain` False: not plain, whatever `raw` holds."""
        super().__init__(events)
        self._raw = raw
        self._plain: bool | None = None if plain else False

    @property
    def plain_numbers(self) -> bool:
        if self._plain is None:
            self._plain = plain_numbers(self._raw)
        return self._plain


def _simple_events(text: str) -> tuple[list[str], int]:
    """The data of the one-line `data: ` events, each ended by a blank line (LF only), that all of
    `text` (whole lines) up to its last blank line is made of, and where they end; ([], 0) when
    that part of it is anything else. Split on the line ends between events, then checked by
    passes over the whole text: no CR, and no line end but those."""
    cut = text.rfind("\n\n") + 2
    if cut < 2 or not text.startswith("data: "):
        return [], 0
    head = text[:cut] if cut < len(text) else text
    if "\r" in head:
        return [], 0
    found = head[6:-2].split("\n\ndata: ")
    if "\n" in "".join(found):
        return [], 0
    return found, cut


def simple_payloads(raw: bytes) -> list[bytes] | None:
    """The data of each event of a whole body made only of one-line `data: ` events, each ended by
    a blank line (LF only), as bytes; None for any other body (EventReader reads it). These are
    the events EventReader reads from such a body, found without decoding it to text: split
    where a blank line is followed by `data: `, with no line end but the two after each event
    (counted)."""
    if not raw.startswith(b"data: ") or not raw.endswith(b"\n\n") or raw.find(b"\r") >= 0:
        return None
    payloads = raw[6:-2].split(b"\n\ndata: ")
    return payloads if raw.count(b"\n") == 2 * len(payloads) else None


class EventReader:
    """Reads server-sent events from the pieces of a body, one piece at a time (`feed`), then what
    is left when it ends (`end`): the `data` of each event, with whether a blank line ended it
    (False for what is left when the body ends mid-event); comments and other fields are skipped.
    Lines end with LF or CRLF. The lines a piece completes are decoded together (a line end is
    never inside a UTF-8 sequence, so the text is the same as line by line)."""

    __slots__ = ("_data", "_data_plain", "_rest")

    def __init__(self) -> None:
        self._data: list[str] = []  # of an event not yet ended
        self._data_plain = True  # whether the text `_data` came from has no long integer
        self._rest = b""  # of a line not yet ended

    def feed(self, chunk: bytes) -> Events:
        """The events this piece completes (perhaps none)."""
        end = chunk.rfind(b"\n") + 1
        if not end:
            self._rest += chunk
            return Events()
        rest = self._rest
        raw = rest + chunk[:end] if rest else chunk[:end] if end < len(chunk) else chunk
        self._rest = chunk[end:]
        data = self._data
        text = raw.decode("utf-8", "replace")
        found, start = _simple_events(text) if not data else ([], 0)
        events = Events(zip(found, repeat(True)), raw, self._data_plain)
        if start == len(text):  # the common case: nothing but whole events
            return events
        lines = text[start:].split("\n")
        lines.pop()  # after the last line end
        for line in lines:
            if line.startswith("data:"):
                if line.endswith("\r"):
                    line = line[:-1]
                data.append(line[6:] if line.startswith("data: ") else line[5:])
            elif data and (not line or line == "\r"):
                events.append(("\n".join(data) if len(data) > 1 else data[0], True))
                data = self._data = []
        self._data_plain = events.plain_numbers if data else True
        return events

    def end(self) -> Events:
        """The event the body ended in the middle of, if any."""
        rest, data = self._rest, self._data
        if rest.startswith(b"data:"):
            line = rest.removesuffix(b"\r").decode("utf-8", "replace")
            data.append(line[6:] if line.startswith("data: ") else line[5:])
        if data:
            return Events([("\n".join(data), rest == b"\r")])  # a last line that is only CR is a blank line
        return Events()


async def sse_data(ep: Endpoint, response: Reply) -> AsyncIterator[Events]:
    """The events of a streamed body (EventReader), given as the events each piece of the body
    completes (a fast server's whole reply can come in one piece); the idle limit and the size
    cap hold as for `_http.lines`."""
    reader = EventReader()
    async with aclosing(body_chunks(ep, response)) as chunks:
        async for chunk in chunks:
            events = reader.feed(chunk)
            if events:
                yield events
    events = reader.end()
    if events:
        yield events
