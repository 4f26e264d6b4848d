"""The lodash functions n8n's Merge node combines items with, on JSON values: deep `merge`
(arrays merged by position), `assign`, their `...With` forms that keep a value over an empty one,
and `isEqual` (JavaScript types: `true` is not `1`)."""

from __future__ import annotations

import copy
from typing import Any, Callable

from nodes.core.set_values import MISSING, is_nan

Customizer = Callable[[Any, Any], Any]


def _is_empty_source(value: Any) -> bool:
    return value is None or value is MISSING or value == "" and isinstance(value, str)


def keep_over_empty(target: Any, source: Any) -> Any:
    """n8n's overrideEmpty customizer: the target's value where the source's is null, undefined or ''."""
    return target if _is_empty_source(source) else MISSING


def _put(target: dict[str, Any] | list[Any], key: Any, value: Any) -> None:
    if isinstance(target, list):
        while len(target) <= key:
            target.append(None)
    target[key] = value


def merge_into(target: dict[str, Any] | list[Any], source: dict[str, Any] | list[Any],
               customizer: Customizer | None = None, *, in_place: bool = False) -> Any:
    """lodash `merge(target, source)` (`mergeWith` with a customizer): nested objects merged key by
    key, arrays index by index, other values replaced; returns the target (changed in place).
    `in_place` merges into the target's nested objects themselves, as lodash does."""
    entries = source.items() if isinstance(source, dict) else enumerate(source)
    for key, value in entries:
        if isinstance(target, dict):
            current = target.get(key, MISSING)
        else:
            current = target[key] if key < len(target) else MISSING
        if customizer is not None:
            chosen = customizer(current, value)
            if chosen is not MISSING:
                _put(target, key, chosen)
                continue
        if isinstance(value, (dict, list)):
            kind = type(value)
            if isinstance(current, kind):
                base = current if in_place else copy.deepcopy(current)
            else:
                base = kind()
            _put(target, key, merge_into(base, value, customizer, in_place=in_place))
        elif value is not MISSING:
            _put(target, key, value)
    return target


def merge(*objects: dict[str, Any], customizer: Customizer | None = None) -> dict[str, Any]:
    """lodash `merge({}, ...objects)`."""
    out: dict[str, Any] = {}
    for obj in objects:
        merge_into(out, obj or {}, customizer)
    return out


def assign(*objects: dict[str, Any], customizer: Customizer | None = None) -> dict[str, Any]:
    """lodash `assign({}, ...objects)` (or `assignWith` with a customizer): top-level keys only."""
    out: dict[str, Any] = {}
    for obj in objects:
        for key, value in (obj or {}).items():
            if customizer is not None:
                chosen = customizer(out.get(key, MISSING), value)
                if chosen is not MISSING:
                    out[key] = chosen
                    continue
            out[key] = value
    return out


def is_equal(a: Any, b: Any) -> bool:
    """lodash `isEqual` on JSON values."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (is_nan(a) and is_nan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(is_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(is_equal(x, y) for x, y in zip(a, b))
    if a is MISSING or b is MISSING:
        return a is b
    if a is None or b is None:
        return a is b
    return type(a) is type(b) and a == b
