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
    standard library, so orjson alone may read each of them."""

    __slots__ = ("plain_numbers",)

    def __init__(self, events: Iterable[tuple[str, bool]] = (), plain: bool = False) -> None:
        super().__init__(events)
        self.plain_numbers = plain


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


async def sse_data(ep: Endpoint, response: Reply) -> AsyncIterator[Events]:
    """The `data` of each server-sent event of a streamed body, with whether a blank line ended it
    (False for what is left when the body ends mid-event); comments and other fields are skipped.
    Given as the events each piece of the body completes (a fast server's whole reply can come in
    one piece). Lines end with LF or CRLF; the idle limit and the size cap hold as for
    `_http.lines`. The lines a piece completes are decoded together (a line end is never inside a
    UTF-8 sequence, so the text is the same as line by line)."""
    data: list[str] = []  # of an event not yet ended
    data_plain = True  # whether the text `data` came from has no long integer
    rest = b""  # of a line not yet ended
    async with aclosing(body_chunks(ep, response)) as chunks:
        async for chunk in chunks:
            end = chunk.rfind(b"\n") + 1
            if not end:
                rest += chunk
                continue
            raw = rest + chunk[:end] if rest else chunk[:end] if end < len(chunk) else chunk
            rest = chunk[end:]
            plain = plain_numbers(raw) and data_plain
            text = raw.decode("utf-8", "replace")
            found, start = _simple_events(text) if not data else ([], 0)
            events = Events(zip(found, repeat(True)), plain)
            if start == len(text):  # the common case: nothing but whole events
                yield events
                continue
            lines = text[start:].split("\n")
            lines.pop()  # after the last line end
            for line in lines:
                if line.startswith("data:"):
                    if line.endswith("\r"):
                        line = line[:-1]
                    data.append(line[6:] if line.startswith("data: ") else line[5:])
                elif data and (not line or line == "\r"):
                    events.append(("\n".join(data) if len(data) > 1 else data[0], True))
                    data = []
            data_plain = plain if data else True
            if events:
                yield events
    if rest.startswith(b"data:"):
        line = rest.removesuffix(b"\r").decode("utf-8", "replace")
        data.append(line[6:] if line.startswith("data: ") else line[5:])
    if data:
        yield Events([("\n".join(data), rest == b"\r")])  # a last line that is only CR is a blank line
