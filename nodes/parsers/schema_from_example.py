"""A JSON schema guessed from an example, as n8n's "Generate From JSON Example" makes it.

n8n runs the `generate-schema` package on the example (draft-04 schema: an object's properties
by the type of each value, an array's items by the type of its elements, `oneOf` when elements
differ, `required` for keys every object of an array has) and, from the Structured Output
Parser's v1.3 on, marks every property of every object required.
"""

from __future__ import annotations

import json
from typing import Any

DRAFT_04 = "http://json-schema.org/draft-04/schema#"


class ExampleError(ValueError):
    """The example is not JSON."""


def type_name(value: Any) -> str:
    """The JSON type of a value as `generate-schema` names it (every number is a "number")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _unique_keys(known: dict[str, Any], value: dict[str, Any], required: list[str] | None) -> list[str]:
    """Keys of `value` that every object seen so far has: those of `known` present in `value`."""
    required = list(required or [])
    for key in value:
        if key not in known:
            if key in required:
                required.remove(key)
        elif key not in required:
            required.append(key)
    return required


def _process_array(array: list[Any], output: dict[str, Any] | None = None, nested: bool = False) -> dict[str, Any]:
    kind: str | None = None
    one_of = False
    if nested and output:
        output = {"items": output}
    else:
        output = output or {}
        output["type"] = "array"
        output["items"] = output.get("items") or {}
        kind = output["items"].get("type")
    for element in array:
        element_type = type_name(element)
        if kind and element_type != kind:
            output["items"]["oneOf"] = []
            one_of = True
            break
        kind = element_type
    if not one_of and kind:
        output["items"]["type"] = kind
    elif one_of and kind != "object":
        items: dict[str, Any] = {"oneOf": [{"type": kind}]}
        if output["items"].get("required") is not None:
            items["required"] = output["items"]["required"]
        output["items"] = items
    if "oneOf" in output["items"] or kind == "object":
        for value in array:
            value_type = type_name(value)
            if value_type == "object":
                if output["items"].get("properties"):
                    output["items"]["required"] = _unique_keys(output["items"]["properties"], value, output["items"].get("required"))
                item = _process_object(value, {} if one_of else output["items"].get("properties"), True)
            elif value_type == "array":
                item = _process_array(value, {} if one_of else output["items"].get("properties"), True)
            else:
                item = {"type": value_type}
            if one_of:
                if "type" not in item and value_type == "object":
                    item = {"properties": item, "type": "object"}
                output["items"]["oneOf"].append(item)
            elif output["items"].get("type") == "object":
                output["items"]["properties"] = item
    return output["items"] if nested else output


def _process_object(obj: dict[str, Any], output: dict[str, Any] | None = None, nested: bool = False) -> dict[str, Any]:
    if nested and output:
        output = {"properties": output}
    else:
        output = output or {}
        output["type"] = "object"
        output["properties"] = output.get("properties") or {}
    properties = output["properties"]
    for key, value in obj.items():
        kind = type_name(value)
        if kind == "object":
            properties[key] = _process_object(value, properties.get(key))
        elif kind == "array":
            properties[key] = _process_array(value, properties.get(key))
        elif key in properties:
            entry = properties[key]
            if isinstance(entry.get("type"), list):
                if kind not in entry["type"]:
                    entry["type"].append(kind)
            elif entry.get("type") != kind:
                entry["type"] = [entry.get("type"), kind]
        else:
            properties[key] = {"type": kind}
    return properties if nested else output


def schema_of(example: Any) -> dict[str, Any]:
    """The draft-04 schema `generate-schema` gives for a parsed example."""
    out: dict[str, Any] = {"$schema": DRAFT_04, "type": type_name(example)}
    if out["type"] == "object":
        processed = _process_object(example)
        out["type"], out["properties"] = processed["type"], processed["properties"]
    elif out["type"] == "array":
        processed = _process_array(example)
        out["type"], out["items"] = processed["type"], processed["items"]
    return out


def all_required(schema: dict[str, Any]) -> dict[str, Any]:
    """Every property of every object required (n8n from the parser's v1.3 on)."""
    if schema.get("type") == "object" and schema.get("properties"):
        keys = list(schema["properties"])
        schema["required"] = keys
        for key in keys:
            sub = schema["properties"][key]
            if isinstance(sub, dict) and "type" in sub:
                all_required(sub)
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict) and "type" in schema["items"]:
        schema["items"] = all_required(schema["items"])
    return schema


def schema_from_example(text: str, every_field_required: bool) -> dict[str, Any]:
    """The schema of the JSON example `text`; ExampleError when it is not JSON."""
    try:
        example = json.loads(text)
    except ValueError as exc:
        raise ExampleError(f"the JSON example is not valid JSON: {exc}") from None
    schema = schema_of(example)
    return all_required(schema) if every_field_required else schema
