"""JSON written as a difference from an earlier JSON value: long lists that extend the earlier
list (an agent's growing messages and steps) keep a count instead of repeating its elements.

`encode(new, old)` compares lists by object identity (values the engine shares between runs),
so it costs little; `decode(encoded, old)` needs the decoded `old` the encoding was made from.
"""

from __future__ import annotations

import operator
from typing import Any

MARK = "\u2063delta"  # an invisible separator: no key a node or user writes
MIN_SHARED = 4


def _shared_prefix(new: list[Any], old: list[Any]) -> int:
    same = list(map(operator.is_, new, old))
    return same.index(False) if False in same else len(same)


def encode(new: Any, old: Any) -> Any:
    """`new` with every list that repeats the start of its counterpart in `old` shortened."""
    if old is None or new is old and not isinstance(new, (list, dict)):
        return new
    if isinstance(new, list) and isinstance(old, list):
        n = _shared_prefix(new, old)
        if n >= MIN_SHARED:
            return {MARK: n, "then": [encode(x, None) for x in new[n:]]}
        if len(new) <= 64:  # small lists (the stack itself): compare element by element
            return [encode(x, old[i] if i < len(old) else None) for i, x in enumerate(new)]
        return new
    if isinstance(new, dict) and isinstance(old, dict):
        return {k: encode(v, old.get(k)) for k, v in new.items()}
    return new


def decode(encoded: Any, old: Any) -> Any:
    """The value `encode(value, old)` was made from."""
    if isinstance(encoded, dict):
        if MARK in encoded and len(encoded) == 2 and "then" in encoded and isinstance(old, list):
            return old[: encoded[MARK]] + [decode(x, None) for x in encoded["then"]]
        base = old if isinstance(old, dict) else {}
        return {k: decode(v, base.get(k)) for k, v in encoded.items()}
    if isinstance(encoded, list):
        base = old if isinstance(old, list) else []
        return [decode(x, base[i] if i < len(base) else None) for i, x in enumerate(encoded)]
    return encoded
