"""`={{ $json.path }}` expressions: read a field of the input item, nothing else."""

from __future__ import annotations

import pytest

from engine.errors import ExpressionError
from engine.expressions import evaluate, has_expressions, resolve_parameters

ITEM = {"chatInput": "hi", "user": {"name": "Ada", "tags": ["a", "b"], "n": 3}, "odd key": 1}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("={{ $json.chatInput }}", "hi"),
        ("={{ $json.user.n }}", 3),
        ("={{ $json.user }}", ITEM["user"]),
        ("={{ $json.user.tags[1] }}", "b"),
        ('={{ $json["odd key"] }}', 1),
        ("={{ $json.missing.deeper }}", None),
        ("=Hello {{ $json.user.name }}, you said {{ $json.chatInput }}", "Hello Ada, you said hi"),
        ("=n={{ $json.user.n }} tags={{ $json.user.tags }}", 'n=3 tags=["a","b"]'),
        ("=plain text", "plain text"),
    ],
)
def test_json_paths(expression: str, expected: object) -> None:
    assert evaluate(expression, ITEM) == expected


@pytest.mark.parametrize(
    "expression",
    ["={{ 1 + 1 }}", "={{ $('Node').item.json.x }}", "={{ $json.user.n + 1 }}", "={{ $json.user; process.exit() }}", "={{ __import__('os') }}"],
)
def test_anything_else_is_refused(expression: str) -> None:
    with pytest.raises(ExpressionError, match="unsupported expression"):
        evaluate(expression, ITEM)


def test_resolve_nested_parameters() -> None:
    params = {"text": "={{ $json.chatInput }}", "options": {"list": ["={{ $json.user.n }}", "x"]}, "n": 1}
    assert has_expressions(params)
    assert resolve_parameters(params, ITEM) == {"text": "hi", "options": {"list": [3, "x"]}, "n": 1}
    assert not has_expressions({"a": "b", "c": [1, "d"]})
