"""Request bodies are the bytes the standard library writes (json.dumps, compact, UTF-8, no NaN),
whichever encoder writes them; what it refuses is still refused."""

from __future__ import annotations

import dataclasses
import datetime
import json
import random
from typing import Any, Callable

import pytest

from nodes.models._common import encode_json, encode_json_bytes


class Text(str):
    pass


@dataclasses.dataclass
class Point:
    x: int = 1


def outcome(write: Callable[[Any], Any], value: Any) -> tuple[str, Any]:
    """What `write` makes of `value`, or the kind of error it raises."""
    try:
        return "ok", write(value)
    except Exception as exc:  # noqa: BLE001 - the kind of failure is what is compared
        return "error", type(exc)


def standard_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def standard(value: Any) -> tuple[str, Any]:
    return outcome(standard_text, value)


def ours(value: Any) -> tuple[str, Any]:
    return outcome(encode_json, value)


def standard_bytes(value: Any) -> tuple[str, Any]:
    return outcome(lambda v: standard_text(v).encode(), value)


def ours_bytes(value: Any) -> tuple[str, Any]:
    return outcome(encode_json_bytes, value)


@pytest.mark.parametrize("value", [
    {"a": 1}, {"a": 1.5}, {"temperature": 1e-05}, {"a": 100.0}, {"a": 1e16}, {"a": -0.0}, {"a": None},
    {"a": float("nan")}, {"a": float("inf")}, {1: 2}, {"a": 2**70}, {"a": -2**63 - 1}, {"a": 2**64 - 1}, "\ud800",
    {"a": Text("x")}, Point(), datetime.date(2026, 1, 2), [True, False, ""], (1, 2), {"a": "v1.2 e"},
    {"a": "é😀\u2028\u2029\x00\x1f\x7f\"\\\b\f\n\r\t"}, [[[]]],
])
def test_a_value_is_written_as_the_standard_library_writes_it(value: Any) -> None:
    assert ours(value) == standard(value)
    assert ours_bytes(value) == standard_bytes(value)  # a body's bytes: its UTF-8 (a lone surrogate refused)


def test_random_values_are_written_as_the_standard_library_writes_them() -> None:
    rng = random.Random(3)

    def value(depth: int = 0) -> Any:
        kind = rng.randint(0, 7 if depth < 4 else 4)
        if kind == 0:
            return rng.randint(-2**70, 2**70)
        if kind == 1:
            return rng.choice([0.1, 1e-7, 3.0, -0.0, 1e300, 12.5])
        if kind == 2:
            return "".join(chr(rng.randint(0, 0x3000)) for _ in range(rng.randint(0, 6)))
        if kind == 3:
            return rng.choice([True, False, None])
        if kind == 4:
            return rng.randint(-1000, 1000)
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {"".join(chr(rng.randint(32, 0x300)) for _ in range(3)): value(depth + 1) for _ in range(rng.randint(0, 4))}

    for _ in range(5000):
        sample = value()
        assert ours(sample) == standard(sample), sample
        assert ours_bytes(sample) == standard_bytes(sample), sample
