"""JSON text that any UTF-8 sink accepts: files, SQLite, a terminal.

JSON allows a lone UTF-16 surrogate (`"\\ud800"`) and Python decodes it into a str that cannot be
encoded as UTF-8. Text is written readable (non-ASCII as itself) with only such code points
written as `\\uXXXX` escapes, so it decodes back to the same string.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR_OR_LONE = re.compile("([\ud800-\udbff][\udc00-\udfff])|[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    pair = match.group(1)
    if pair is not None:  # a high and a low half: the character every JSON reader makes of them
        return pair.encode("utf-16", "surrogatepass").decode("utf-16")
    return f"\\u{ord(match.group()):04x}"


def escape_surrogates(text: str) -> str:
    """`text` with each surrogate pair joined into its character and each lone surrogate as a
    `\\uXXXX` escape (the rest unchanged)."""
    return _PAIR_OR_LONE.sub(_escape, text)


def first_surrogate(text: str) -> str | None:
    """The first surrogate code point in `text`, None when it is all real characters."""
    found = _SURROGATE.search(text)
    return found.group() if found else None


def dumps(value: Any, *, indent: int | None = None, default: Callable[[Any], Any] | None = None) -> str:
    """Compact JSON (or indented with `indent`) that encodes as UTF-8 whatever strings it holds.

    A surrogate can only occur inside a JSON string, where `\\uXXXX` is its exact escape."""
    separators = (",", ": ") if indent is not None else (",", ":")
    text = json.dumps(value, ensure_ascii=False, indent=indent, separators=separators, default=default)
    return escape_surrogates(text) if _SURROGATE.search(text) else text
