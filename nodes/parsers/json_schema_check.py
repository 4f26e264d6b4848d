"""A JSON schema applied to a value as n8n applies it: converted to a Zod schema
(@n8n/json-schema-to-zod) and parsed with Zod.

That is not a plain JSON-schema validation: keys an object's `properties` do not name are
dropped from the result (unless `additionalProperties` allows them; `false` refuses them),
`default`s fill in missing values, and the keys come out in the schema's order. Problems are
Zod's messages with their paths ("output.state: Expected string, received number"). Keywords
the conversion knows but we do not check (`allOf`, `not`, `$ref`, `if`, `patternProperties`,
tuple `items`...) are refused up front by `unsupported_keywords`, never skipped.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

UNSUPPORTED = ("allOf", "not", "$ref", "if", "then", "else", "patternProperties", "dependencies",
               "dependentSchemas", "dependentRequired", "contentEncoding", "propertyNames")
FORMATS = ("email", "uri", "uuid", "date-time", "date", "int64")
_MISSING = object()


@dataclass
class Issue:
    path: list[str | int]
    message: str
    code: str = "custom"
    fields: dict[str, Any] = field(default_factory=dict)  # Zod's issue fields before path and message, in its order
    from_check: bool = False  # raised by a check (Zod writes its message before the path)

    def __str__(self) -> str:
        where = ".".join(str(p) for p in self.path)
        return f"{where}: {self.message}" if where else self.message


class SchemaViolation(ValueError):
    """The value does not fit the schema; `issues` says where and why, in Zod's words."""

    def __init__(self, issues: list[Issue]) -> None:
        super().__init__("; ".join(str(i) for i in issues))
        self.issues = issues


def unsupported_keywords(schema: Any, path: str = "") -> list[str]:
    """Keywords of the schema (anywhere in it) we do not check, each with where it is."""
    found: list[str] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            here = f"{path}.{key}" if path else key
            if key in UNSUPPORTED:
                found.append(here)
            elif key == "items" and isinstance(value, list):
                found.append(f"{here} (a list of schemas)")
            elif key == "format" and isinstance(value, str) and schema.get("type") == "string" and value not in FORMATS:
                found.append(f"{here} ({value})")
            elif key in ("properties", "definitions", "$defs") and isinstance(value, dict):
                for name, sub in value.items():
                    found.extend(unsupported_keywords(sub, f"{here}.{name}"))
            elif key in ("items", "additionalProperties") and isinstance(value, dict):
                found.extend(unsupported_keywords(value, here))
            elif key in ("anyOf", "oneOf") and isinstance(value, list):
                for i, sub in enumerate(value):
                    found.extend(unsupported_keywords(sub, f"{here}[{i}]"))
    return found


def _js_type(value: Any) -> str:
    """What Zod says it received."""
    if value is _MISSING:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "nan" if isinstance(value, float) and math.isnan(value) else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _num(n: Any) -> str:
    return str(int(n)) if isinstance(n, float) and n.is_integer() else str(n)


def _literal(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)


class _Checker:
    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def fail(self, path: list[str | int], message: str, code: str = "custom", from_check: bool = False, **fields: Any) -> Any:
        self.issues.append(Issue(list(path), message, code, {"code": code, **fields} if code != "invalid_enum_value"
                                 else {"received": fields["received"], "code": code, "options": fields["options"]}, from_check))
        return _MISSING

    def wrong_type(self, path: list[str | int], expected: str, value: Any) -> Any:
        received = _js_type(value)
        return self.fail(path, "Required" if value is _MISSING else f"Expected {expected}, received {received}",
                         "invalid_type", expected=expected, received=received)

    def check(self, schema: Any, value: Any, path: list[str | int]) -> Any:
        """The parsed value (Zod's output), or _MISSING when it did not fit (issues added)."""
        if schema is True or (isinstance(schema, dict) and not schema):
            return value
        if schema is False:
            return self.wrong_type(path, "never", value)
        if value is _MISSING and "default" in schema:
            return schema["default"]
        if schema.get("nullable") is True:
            if value is None:
                return None
            return self.check({k: v for k, v in schema.items() if k != "nullable"}, value, path)
        kind = schema.get("type")
        if kind == "object":
            return self._object(schema, value, path)
        if kind == "array":
            return self._array(schema, value, path)
        if "anyOf" in schema or "oneOf" in schema:
            return self._union(schema["anyOf"] if "anyOf" in schema else schema["oneOf"], value, path, "oneOf" in schema)
        if "enum" in schema:
            return self._enum(schema["enum"], value, path)
        if "const" in schema:
            if value != schema["const"] or type(value) is not type(schema["const"]):
                return self.fail(path, f"Invalid literal value, expected {_quoted(schema['const'])}", "invalid_literal",
                                 received=None if value is _MISSING else value, expected=schema["const"])
            return value
        if isinstance(kind, list):
            return self._union([{**schema, "type": k} for k in kind], value, path, False)
        if kind == "string":
            return self._string(schema, value, path)
        if kind in ("number", "integer"):
            return self._number(schema, value, path)
        if kind == "boolean":
            return value if isinstance(value, bool) else self.wrong_type(path, "boolean", value)
        if kind == "null":
            return value if value is None else self.wrong_type(path, "null", value)
        return value if value is not _MISSING else self.wrong_type(path, "any", value)

    def _object(self, schema: dict[str, Any], value: Any, path: list[str | int]) -> Any:
        if not isinstance(value, dict):
            return self.wrong_type(path, "object", value)
        properties = schema.get("properties")
        extra = schema.get("additionalProperties", _MISSING)
        if properties is None:  # a record: every key kept, checked against additionalProperties
            out: dict[str, Any] = {}
            for key, sub in value.items():
                parsed = self.check(extra if extra is not _MISSING else True, sub, [*path, key])
                if parsed is not _MISSING:
                    out[key] = parsed
            return out
        required = schema.get("required")
        out = {}
        before = len(self.issues)
        for key, sub in properties.items():
            given = value.get(key, _MISSING)
            needed = key in required if isinstance(required, list) else isinstance(sub, dict) and sub.get("required") is True
            optional = not needed and not (isinstance(sub, dict) and "default" in sub)
            if given is _MISSING and optional:
                continue
            parsed = self.check(sub, given, [*path, key])
            if parsed is not _MISSING:
                out[key] = parsed
        others = [k for k in value if k not in properties]
        if extra is False:
            if others:
                self.fail(path, "Unrecognized key(s) in object: " + ", ".join(f"'{k}'" for k in others),
                          "unrecognized_keys", keys=others)
        elif extra is not _MISSING:
            for key in others:
                parsed = self.check(extra, value[key], [*path, key])
                if parsed is not _MISSING:
                    out[key] = parsed
        return out if len(self.issues) == before else _MISSING

    def _array(self, schema: dict[str, Any], value: Any, path: list[str | int]) -> Any:
        if not isinstance(value, list):
            return self.wrong_type(path, "array", value)
        items = schema.get("items", True)
        before = len(self.issues)
        out = [self.check(items, element, [*path, i]) for i, element in enumerate(value)]
        if "minItems" in schema and len(value) < schema["minItems"]:
            self.fail(path, f"Array must contain at least {_num(schema['minItems'])} element(s)", "too_small", True,
                      minimum=schema["minItems"], type="array", inclusive=True, exact=False)
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            self.fail(path, f"Array must contain at most {_num(schema['maxItems'])} element(s)", "too_big", True,
                      maximum=schema["maxItems"], type="array", inclusive=True, exact=False)
        return out if len(self.issues) == before else _MISSING

    def _union(self, options: list[Any], value: Any, path: list[str | int], exactly_one: bool) -> Any:
        fits = []
        for option in options:
            trial = _Checker()
            parsed = trial.check(option, value, path)
            if not trial.issues:
                fits.append(parsed)
        if fits and (not exactly_one or len(fits) == 1):
            return fits[0]
        if value is _MISSING:
            return self.wrong_type(path, "any", value)
        return self.fail(path, "Invalid input", "invalid_union", unionErrors=[])

    def _enum(self, choices: list[Any], value: Any, path: list[str | int]) -> Any:
        if any(value == c and type(value) is type(c) for c in choices):
            return value
        if all(isinstance(c, str) for c in choices):
            if value is _MISSING or not isinstance(value, str):
                return self.wrong_type(path, " | ".join(f"'{c}'" for c in choices), value)
            return self.fail(path, f"Invalid enum value. Expected {' | '.join(repr_js(c) for c in choices)}, received {repr_js(value)}",
                             "invalid_enum_value", received=value, options=list(choices))
        if value is _MISSING:
            return self.wrong_type(path, "any", value)
        return self.fail(path, "Invalid input", "invalid_union", unionErrors=[])

    def _string(self, schema: dict[str, Any], value: Any, path: list[str | int]) -> Any:
        if not isinstance(value, str):
            return self.wrong_type(path, "string", value)
        ok = True
        fmt = schema.get("format")
        if fmt is not None and not _format_ok(fmt, value):
            word = _FORMAT_WORDS.get(fmt, fmt)
            ok = self.fail(path, f"Invalid {word}", "invalid_string", True, validation=word) is None
        if "pattern" in schema and re.search(schema["pattern"], value) is None:
            ok = self.fail(path, "Invalid", "invalid_string", True, validation="regex") is None
        length = len(value.encode("utf-16-le")) // 2  # JavaScript counts UTF-16 units
        if "minLength" in schema and length < schema["minLength"]:
            ok = self.fail(path, f"String must contain at least {_num(schema['minLength'])} character(s)", "too_small", True,
                           minimum=schema["minLength"], type="string", inclusive=True, exact=False) is None
        if "maxLength" in schema and length > schema["maxLength"]:
            ok = self.fail(path, f"String must contain at most {_num(schema['maxLength'])} character(s)", "too_big", True,
                           maximum=schema["maxLength"], type="string", inclusive=True, exact=False) is None
        return value if ok else _MISSING

    def _number(self, schema: dict[str, Any], value: Any, path: list[str | int]) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and math.isnan(value)):
            return self.wrong_type(path, "number", value)
        ok = True
        integer = schema.get("type") == "integer" or schema.get("format") == "int64" or schema.get("multipleOf") == 1
        if integer and not float(value).is_integer():
            ok = self.fail(path, "Expected integer, received float", "invalid_type", True, expected="integer", received="float") is None
        step = schema.get("multipleOf")
        if step not in (None, 1) and not _multiple(value, step):
            ok = self.fail(path, f"Number must be a multiple of {_num(step)}", "not_multiple_of", True, multipleOf=step) is None
        low, low_strict = _bound(schema, "minimum", "exclusiveMinimum")
        if low is not None and (value <= low if low_strict else value < low):
            word = "greater than" if low_strict else "greater than or equal to"
            ok = self.fail(path, f"Number must be {word} {_num(low)}", "too_small", True,
                           minimum=low, type="number", inclusive=not low_strict, exact=False) is None
        high, high_strict = _bound(schema, "maximum", "exclusiveMaximum")
        if high is not None and (value >= high if high_strict else value > high):
            word = "less than" if high_strict else "less than or equal to"
            ok = self.fail(path, f"Number must be {word} {_num(high)}", "too_big", True,
                           maximum=high, type="number", inclusive=not high_strict, exact=False) is None
        return value if ok else _MISSING


def _bound(schema: dict[str, Any], key: str, exclusive: str) -> tuple[float | None, bool]:
    if isinstance(schema.get(key), (int, float)) and not isinstance(schema.get(key), bool):
        return schema[key], schema.get(exclusive) is True
    if isinstance(schema.get(exclusive), (int, float)) and not isinstance(schema.get(exclusive), bool):
        return schema[exclusive], True
    return None, False


def _multiple(value: float, step: float) -> bool:
    ratio = value / step
    return abs(ratio - round(ratio)) < 1e-9


def repr_js(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else _literal(value)


def _quoted(value: Any) -> str:
    import json

    return json.dumps(value)


_FORMAT_WORDS = {"uri": "url", "date-time": "datetime"}
_EMAIL = re.compile(r"^(?!\.)(?!.*\.\.)([A-Z0-9_'+\-\.]*)[A-Z0-9_+-]@([A-Z0-9][A-Z0-9\-]*\.)+[A-Z]{2,}$", re.I)
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)$")


def _format_ok(fmt: str, value: str) -> bool:
    if fmt == "email":
        return _EMAIL.match(value) is not None
    if fmt == "uuid":
        try:
            uuid.UUID(value)
        except ValueError:
            return False
        return len(value) == 36
    if fmt == "uri":
        return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", value) is not None
    if fmt == "date-time":
        return _DATETIME.match(value) is not None
    if fmt == "date":
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            return False
        return len(value) == 10
    return True


def parse_with_schema(schema: dict[str, Any], value: Any) -> Any:
    """`value` as Zod parses it under the converted schema; SchemaViolation when it does not fit."""
    checker = _Checker()
    parsed = checker.check(schema, value, [])
    if checker.issues:
        raise SchemaViolation(checker.issues)
    return parsed
