"""JSON written as a difference from an earlier JSON value: long lists that extend the earlier
list (an agent's growing messages and steps) keep a count instead of repeating its elements.

`encode(new, old)` compares lists by object identity (values the engine shares between runs),
so it costs little; a dict or list that is the very object in `old` is written as SAME, and a
window on an append-only log (engine.shared_log) that starts with the entries of a window in
`old` (on the same log, or on a log both stand on) costs only what it adds. `decode(encoded,
old)` needs the decoded `old` the encoding was made from; windows are lists there. A writer that
knows which keys of a dict changed writes only those (`changed_keys`); `encode` itself never does.
"""

from __future__ import annotations

import operator
from typing import Any

from .shared_log import LogWindow

MARK = "\u2063delta"  # an invisible separator: no key a node or user writes
MIN_SHARED = 4
SAME = {MARK: "same"}  # the very object `old` holds here (shared, so unchanged)
KEYS = "keys"  # {MARK: KEYS, key: delta, ...}: the dict `old` holds here with these keys' values changed


def _shared_prefix(new: list[Any], old: list[Any]) -> int:
    if not new or not old or new[0] is not old[0]:
        return 0
    same = list(map(operator.is_, new, old))
    return same.index(False) if False in same else len(same)


def encode(new: Any, old: Any) -> Any:
    """`new` with every list that repeats the start of its counterpart in `old` shortened, and
    every dict or list that is its counterpart in `old` itself written as SAME (values the engine
    shares are never changed in place).
    Only lists and dicts are descended into (scalars are returned as they are, without a call),
    and a dict or list in which nothing was shortened is returned itself, not copied."""
    kind = type(new)
    if new is old and (kind is dict or kind is list):
        return SAME
    if kind is dict:
        if type(old) is not dict:
            return new
        out = None
        previous = old.get
        for key, value in new.items():
            value_kind = type(value)
            if value_kind is dict or value_kind is list or value_kind is LogWindow:
                before = previous(key)
                if before is not None:
                    encoded = encode(value, before)
                    if encoded is not value:
                        if out is None:
                            out = dict(new)
                        out[key] = encoded
        return new if out is None else out
    if kind is LogWindow:
        if type(old) is LogWindow:
            n = new.shared_with(old)
            if n >= MIN_SHARED:
                return {MARK: n, "then": new.tail(n)}
            old = old.to_list()
        new, kind = new.to_list(), list
    if kind is list:
        if type(old) is LogWindow:
            old = old.to_list()
        elif type(old) is not list:
            return new
        n = _shared_prefix(new, old)
        if n >= MIN_SHARED:
            return {MARK: n, "then": new[n:]}
        if len(new) > 64:
            return new
        size = len(old)
        out_list = None
        for i, x in enumerate(new):  # small lists (the stack itself): compare element by element
            if i < size and type(x) in (dict, list, LogWindow):
                encoded = encode(x, old[i])
                if encoded is not x:
                    if out_list is None:
                        out_list = list(new)
                    out_list[i] = encoded
        return new if out_list is None else out_list
    return new


def changed_keys(changes: dict[str, Any]) -> dict[str, Any]:
    """The delta of a dict of which only the keys in `changes` changed, each to its value there
    (itself a delta from the key's value before); its other keys are as they were."""
    return {MARK: KEYS, **changes}


class UnknownDelta(ValueError):
    """A value marked as a delta of a kind this code does not write: a newer mini-n8n wrote it."""


def decode(encoded: Any, old: Any, passed: frozenset[str] = frozenset()) -> Any:
    """The value `encode(value, old)` (or `changed_keys`) was made from. Marked values of the kinds
    in `passed` are left as they are (references a later step resolves); a marked value of any
    other kind is an UnknownDelta, and one that does not fit its base (keys of a value that is not
    a dict, a list extended that is not there) a ValueError: never read as data."""
    if isinstance(encoded, dict):
        if MARK in encoded:
            kind = encoded[MARK]
            if kind == KEYS:
                if not isinstance(old, dict):
                    raise ValueError("a delta changes keys of a value its base does not have")
                out = dict(old)
                for key, value in encoded.items():
                    if key != MARK:
                        out[key] = decode(value, old.get(key), passed)
                return out
            if type(kind) is int and len(encoded) == 2 and "then" in encoded:
                if not isinstance(old, list) or not 0 <= kind <= len(old) or not isinstance(encoded["then"], list):
                    raise ValueError("a delta extends a list its base does not have")
                return old[:kind] + [decode(x, None, passed) for x in encoded["then"]]
            if encoded == SAME:
                if old is None:
                    raise ValueError("a delta repeats a value its base does not have")
                return old
            if type(kind) is str and kind in passed:
                return encoded
            raise UnknownDelta(f"a delta of a kind this mini-n8n does not know ({kind!r})")
        base = old if isinstance(old, dict) else {}
        return {k: decode(v, base.get(k), passed) for k, v in encoded.items()}
    if isinstance(encoded, list):
        base = old if isinstance(old, list) else []
        return [decode(x, base[i] if i < len(base) else None, passed) for i, x in enumerate(encoded)]
    return encoded
