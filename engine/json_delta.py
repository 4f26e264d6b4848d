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
    if not new or not old or new[0] is not old[0]:
        return 0
    same = list(map(operator.is_, new, old))
    return same.index(False) if False in same else len(same)


def encode(new: Any, old: Any) -> Any:
    """`new` with every list that repeats the start of its counterpart in `old` shortened.
    Only lists and dicts are descended into (scalars are returned as they are, without a call),
    and a dict or list in which nothing was shortened is returned itself, not copied."""
    kind = type(new)
    if kind is dict:
        if type(old) is not dict:
            return new
        out = None
        previous = old.get
        for key, value in new.items():
            value_kind = type(value)
            if value_kind is dict or value_kind is list:
                before = previous(key)
                if before is not None:
                    encoded = encode(value, before)
                    if encoded is not value:
                        if out is None:
                            out = dict(new)
                        out[key] = encoded
        return new if out is None else out
    if kind is list:
        if type(old) is not list:
            return new
        n = _shared_prefix(new, old)
        if n >= MIN_SHARED:
            return {MARK: n, "then": new[n:]}
        if len(new) > 64:
            return new
        size = len(old)
        out_list = None
        for i, x in enumerate(new):  # small lists (the stack itself): compare element by element
            if i < size and type(x) in (dict, list):
                encoded = encode(x, old[i])
                if encoded is not x:
                    if out_list is None:
                        out_list = list(new)
                    out_list[i] = encoded
        return new if out_list is None else out_list
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
