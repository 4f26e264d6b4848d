"""The JSON schema a model is shown for an output parser's schema, as n8n produces it.

n8n converts the parser's JSON schema to Zod (@n8n/json-schema-to-zod) and LangChain converts
that back to JSON schema (zod-to-json-schema, draft-07) for the `format_final_json_response`
tool. The round trip changes the schema: every object gets `additionalProperties: false` (or
its catch-all's schema), `required` lists only the keys that are neither optional nor
defaulted, and unions of plain types become a `type` list.
"""

from __future__ import annotations

from typing import Any

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
_PRIMITIVES = ("string", "number", "integer", "boolean", "null")
_STRING_CHECKS = ("minLength", "maxLength", "pattern", "format")
_NUMBER_CHECKS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "array"


def _has_checks(schema: dict[str, Any]) -> bool:
    return any(k in schema for k in (*_STRING_CHECKS, *_NUMBER_CHECKS, "enum", "const")) or schema.get("type") == "integer"


def _required(schema: dict[str, Any], key: str, sub: Any) -> bool:
    listed = schema.get("required")
    needed = key in listed if isinstance(listed, list) else isinstance(sub, dict) and sub.get("required") is True
    return needed and not (isinstance(sub, dict) and "default" in sub)


def _object(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    if properties is None:
        return {"type": "object", "additionalProperties": convert(extra) if isinstance(extra, dict) or extra is False else {}}
    out: dict[str, Any] = {"type": "object", "properties": {k: convert(v) for k, v in properties.items()}}
    required = [k for k, v in properties.items() if _required(schema, k, v)]
    if required:
        out["required"] = required
    if extra is None or extra is False:
        out["additionalProperties"] = False
    else:
        out["additionalProperties"] = convert(extra)
    return out


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if schema.get("nullable") is True:
        inner_schema = {k: v for k, v in schema.items() if k not in ("nullable", "default", "description")}
        inner = convert(inner_schema)
        if inner.get("type") in _PRIMITIVES and not _has_checks(inner_schema):
            return {"type": [inner["type"], "null"]}
        return {"anyOf": [inner, {"type": "null"}]}
    if kind == "object":
        return _object(schema)
    if kind == "array":
        out: dict[str, Any] = {"type": "array", "items": convert(schema["items"]) if "items" in schema else {}}
        for key in ("minItems", "maxItems"):
            if key in schema:
                out[key] = schema[key]
        return out
    if "anyOf" in schema:
        options = [convert(s) for s in schema["anyOf"]]
        if len(options) == 1:
            return options[0]
        plain = [o for o in options if set(o) == {"type"} and o["type"] in _PRIMITIVES]
        if len(plain) == len(options):  # a union of plain types: a type list
            return {"type": list(dict.fromkeys(o["type"] for o in plain))}
        return {"anyOf": options}
    if "oneOf" in schema:
        return {}  # a refined `any` in Zod: shown to the model without constraints
    if "enum" in schema:
        types = list(dict.fromkeys(_json_type(v) for v in schema["enum"]))
        return {"type": types[0] if len(types) == 1 else types, "enum": list(schema["enum"])}
    if "const" in schema:
        return {"type": _json_type(schema["const"]), "const": schema["const"]}
    if isinstance(kind, list):
        if all(k in _PRIMITIVES for k in kind):
            return {"type": list(kind)}
        return {"anyOf": [convert({**schema, "type": k}) for k in kind]}
    if kind == "string":
        out = {"type": "string"}
        for key in _STRING_CHECKS:
            if key in schema and not (key == "format" and schema[key] == "int64"):
                out[key] = schema[key]
        return out
    if kind in ("number", "integer"):
        integer = kind == "integer" or schema.get("format") == "int64" or schema.get("multipleOf") == 1
        out = {"type": "integer" if integer else "number"}
        for key in _NUMBER_CHECKS:
            value = schema.get(key)
            if key == "multipleOf" and value == 1:
                continue
            if key in ("exclusiveMinimum", "exclusiveMaximum") and value is True:
                bound = "minimum" if key == "exclusiveMinimum" else "maximum"
                out.pop(bound, None)
                out[key] = schema[bound]
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                if key in ("minimum", "maximum") and schema.get("exclusive" + key.title()) is True:
                    continue
                out[key] = value
        return out
    if kind in ("boolean", "null"):
        return {"type": kind}
    return {}


def convert(schema: Any) -> Any:
    """One (sub)schema after the round trip through Zod."""
    if schema is True or schema is None:
        return {}
    if schema is False:
        return {"not": {}}
    out = _body(schema)
    if "default" in schema:
        out["default"] = schema["default"]
    if isinstance(schema.get("description"), str):
        out["description"] = schema["description"]
    return out


def model_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The tool parameters a model is shown for a parser whose Zod schema came from `schema`."""
    out = convert(schema)
    out["$schema"] = DRAFT_07
    return out
