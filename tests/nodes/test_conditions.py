"""n8n's filter conditions where JavaScript and Python part ways (the parity corpus covers each
operator; these are the value rules underneath)."""

from __future__ import annotations

import pytest

from engine.errors import NodeOperationError
from nodes.core.set_values import MISSING
from nodes.flow.conditions import FilterError, execute_condition, filter_options, js_to_string
from nodes.flow.js_values import JsValues

STRICT = filter_options({"caseSensitive": True, "typeValidation": "strict", "version": 2})
LOOSE = filter_options({"caseSensitive": True, "typeValidation": "loose", "version": 2})
JS = JsValues(None)


def check(left, kind, op, right=None, options=STRICT, **operator) -> bool:
    condition = {"leftValue": left, "rightValue": right, "operator": {"type": kind, "operation": op, **operator}}
    return execute_condition(condition, options, 0, 0, JS, "If")


def test_array_contains_uses_javascript_equality() -> None:
    assert check([1, 2], "array", "contains", 1.0, rightType="any")
    assert not check([1, 2], "array", "contains", True, rightType="any")  # Python's True == 1 is not JavaScript's
    assert not check([{"a": 1}], "array", "contains", {"a": 1}, rightType="any")  # objects never equal


def test_undefined_and_null_compare_as_in_javascript() -> None:
    assert not check(MISSING, "number", "gte", 0)  # undefined >= 0 is false
    assert check(None, "number", "gte", 0)  # null >= 0 is true
    assert check(MISSING, "string", "notExists")


def test_javascript_string_forms_in_messages() -> None:
    assert js_to_string([1, None, "a"]) == "1,,a" and js_to_string({"a": 1}) == "[object Object]"
    with pytest.raises(FilterError, match=r"^Wrong type: '1,2' is an object but was expecting a string \[condition 0, item 0\]$"):
        check([1, 2], "string", "equals", "x")


def test_a_bad_regular_expression_fails_the_node_with_the_engines_message() -> None:
    with pytest.raises(NodeOperationError) as caught:
        check("text", "string", "regex", "(unclosed")
    assert caught.value.node == "If" and caught.value.message


def test_loose_booleans_by_filter_version() -> None:
    v1 = filter_options({"caseSensitive": True, "typeValidation": "loose", "version": 1})
    assert check("false", "boolean", "true", options=v1)  # Boolean("false") is true in version 1
    assert not check("false", "boolean", "true", options=LOOSE)
