"""A small JSON-schema check for tool arguments: types, required keys, enums, extra keys.

Enough to tell a model, in words, why its arguments do not fit a tool; not a full validator.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def _type_ok(value: Any, expected: str | list[str]) -> bool:
    names = expected if isinstance(expected, list) else [expected]
    for name in names:
        if name == "null" and value is None:
            return True
        kinds = _TYPES.get(name)
        if kinds is None:
            return True  # a type we do not check
        if isinstance(value, bool) and name in ("number", "integer"):
            continue
        if name == "integer" and isinstance(value, float) and value.is_integer():
            return True
        if isinstance(value, kinds):
            return True
    return False


def schema_problems(schema: dict[str, Any], value: Any, where: str = "arguments") -> list[str]:
    """What is wrong with `value` under `schema`, one sentence each; empty when it fits."""
    problems: list[str] = []
    expected = schema.get("type")
    if expected is not None and not _type_ok(value, expected):
        return [f"{where} should be {expected if isinstance(expected, str) else ' or '.join(expected)}, not {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where} must be one of {schema['enum']}")
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key in schema.get("required") or []:
            if key not in value:
                problems.append(f"{where} miss the required field '{key}'")
        for key, sub in value.items():
            if key in props:
                problems.extend(schema_problems(props[key], sub, f"field '{key}'"))
            elif schema.get("additionalProperties") is False:
                problems.append(f"{where} have an unknown field '{key}'")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, sub in enumerate(value):
            problems.extend(schema_problems(schema["items"], sub, f"{where}[{i}]"))
    return problems
