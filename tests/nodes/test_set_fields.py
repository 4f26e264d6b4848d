"""Edit Fields (Set) value rules that the parity corpus reaches only through expressions."""

from __future__ import annotations

import math

import pytest

from engine.errors import NodeOperationError
from nodes.core.set_values import (convert_field, get_path, js_number, js_string, parse_js_object, path_parts,
                                   set_path, unset_path, MISSING)


def test_lodash_paths() -> None:
    assert path_parts('a.b[0]["c.d"]') == ["a", "b", "0", "c.d"]
    data: dict = {}
    set_path(data, "list[1]", "second")
    set_path(data, "a.b.c", 1)
    set_path(data, "a.b.d", 2)
    assert data == {"list": [None, "second"], "a": {"b": {"c": 1, "d": 2}}}
    set_path(data, "a.b.c.e", 3)  # a primitive on the way becomes an object, as lodash does
    assert data["a"]["b"]["c"] == {"e": 3}
    assert get_path(data, "list[1]") == "second" and get_path(data, "a.x.y") is MISSING
    unset_path(data, "a.b.d")
    assert data["a"]["b"] == {"c": {"e": 3}}


def test_javascript_number_and_string() -> None:
    assert js_number(" 12 ") == 12 and js_number("") == 0 and js_number("0x10") == 16 and js_number("1e3") == 1000.0
    assert math.isnan(js_number("12px")) and math.isnan(js_number({"a": 1}))
    assert js_string(3.0) == "3" and js_string(1e21) == "1e+21" and js_string(None) == "null"
    assert js_string(True) == "true" and js_string({"a": [1]}) == '{"a":[1]}' and js_string(MISSING) == "undefined"


@pytest.mark.parametrize("field_type, value, expected", [
    ("number", "12.5", 12.5), ("number", "7", 7), ("boolean", "TRUE", True), ("boolean", "0", False),
    ("array", "['x', 'y']", ["x", "y"]), ("object", "{a: 1}", {"a": 1}), ("string", 3, "3"),
    ("string", {"a": 1}, '{"a":1}'),
])
def test_conversions(field_type: str, value: object, expected: object) -> None:
    assert convert_field("f", field_type, value, node="N", item_index=0, ignore_errors=False, version=3.4) == expected


def test_a_value_that_does_not_convert_names_the_field_and_item() -> None:
    with pytest.raises(NodeOperationError) as caught:
        convert_field("age", "number", "old", node="N", item_index=2, ignore_errors=False, version=3.4)
    assert caught.value.message == "'age' expects a number but we got 'old' [item 2]"
    assert "Ignore Type Conversion Errors" in (caught.value.description or "")
    assert convert_field("age", "number", "old", node="N", item_index=2, ignore_errors=True, version=3.4) == "old"


def test_null_per_version() -> None:
    assert convert_field("s", "string", None, node="N", item_index=0, ignore_errors=False, version=3.2) is None
    assert convert_field("s", "string", None, node="N", item_index=0, ignore_errors=False, version=3.0) == "null"
    with pytest.raises(NodeOperationError, match="'s' expects a string but we got 'null' \\[item 0\\]"):
        convert_field("s", "string", None, node="N", item_index=0, ignore_errors=False, version=3.1)


def test_javascript_object_literals() -> None:
    assert parse_js_object("{ a: 1, 'b': \"two\", }") == {"a": 1, "b": "two"}
    with pytest.raises(ValueError):
        parse_js_object('{"broken": Ada Lovelace }')


async def test_duplicate_item_only_in_runs_from_the_editor() -> None:
    from engine.executor import Engine
    from engine.registry import builtin_registry
    from engine.workflow import parse_workflow
    from tests.builders import MANUAL_TRIGGER, SET, link, node

    connections: dict = {}
    link(connections, "Start", "Edit Fields")
    wf = parse_workflow({"name": "dup", "nodes": [node("Start", MANUAL_TRIGGER), node("Edit Fields", SET, {
        "assignments": {"assignments": [{"name": "a", "value": "x", "type": "string"}]},
        "duplicateItem": True, "duplicateCount": 2})], "connections": connections})
    engine = Engine(builtin_registry())
    assert len((await engine.run(wf, mode="manual")).result) == 3
    assert len((await engine.run(wf, mode="cli")).result) == 1


# what n8n 1.123's NodeHelpers.getNodeParameters made of these Set parameters (its loaded form)
_N8N_FORM = [
    (3.4, {}, {"mode": "manual", "duplicateItem": False, "assignments": {}, "includeOtherFields": False, "options": {}}),
    (3.4, {"mode": "raw"}, {"mode": "raw", "duplicateItem": False, "jsonOutput": "{\n  \"my_field_1\": \"value\",\n  \"my_field_2\": 1\n}\n",
                            "includeOtherFields": False, "options": {}}),
    (3.4, {"duplicateItem": True, "includeOtherFields": True},
     {"mode": "manual", "duplicateItem": True, "duplicateCount": 0, "duplicateWarning": "", "assignments": {},
      "includeOtherFields": True, "include": "all", "options": {}}),
    (3.4, {"includeOtherFields": True, "include": "selected"},
     {"mode": "manual", "duplicateItem": False, "assignments": {}, "includeOtherFields": True, "include": "selected",
      "includeFields": "", "options": {}}),
    (3.3, {"assignments": {"assignments": []}, "includeOtherFields": True, "include": "except"},
     {"mode": "manual", "duplicateItem": False, "assignments": {"assignments": []}, "includeOtherFields": True,
      "include": "except", "excludeFields": "", "options": {}}),
    (3, {}, {"mode": "manual", "duplicateItem": False, "fields": {}, "include": "all", "options": {}}),
    (3.1, {"fields": {"values": [{"name": "m", "stringValue": "x"}]}, "include": "selected"},
     {"mode": "manual", "duplicateItem": False, "fields": {"values": [{"name": "m", "type": "stringValue", "stringValue": "x"}]},
      "include": "selected", "includeFields": "", "options": {}}),
    (3.2, {"mode": "raw", "include": "except"},
     {"mode": "raw", "duplicateItem": False, "jsonOutput": "{\n  \"my_field_1\": \"value\",\n  \"my_field_2\": 1\n}\n",
      "include": "except", "excludeFields": "", "options": {}}),
]


@pytest.mark.parametrize(("version", "written", "n8n"), _N8N_FORM)
def test_parameters_as_n8n_holds_them(version: float, written: dict, n8n: dict) -> None:
    from nodes.core.set_fields import SetFields

    got = SetFields.n8n_parameters(written, version)
    assert got == n8n
    assert list(got) == list(n8n)  # n8n's order, as `$parameter` shows when written out whole
