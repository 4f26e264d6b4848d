"""Reading a pydantic JSON schema the way the form needs it: refs resolved, optionals unwrapped."""

from __future__ import annotations

import copy
from typing import Any


def resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """Follow `$ref` (and a single-entry `allOf`) into `$defs`, keeping the outer title/description."""
    out = dict(schema)
    while True:
        if "$ref" in out:
            ref = out.pop("$ref")
            target = root.get("$defs", {}).get(ref.rsplit("/", 1)[-1], {})
            out = {**target, **{k: v for k, v in out.items() if k in ("title", "description", "default")}}
            continue
        if "allOf" in out and len(out["allOf"]) == 1:
            inner = out.pop("allOf")[0]
            out = {**resolve(inner, root), **out}
            continue
        return out


def unwrap_optional(schema: dict[str, Any], root: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """`X | None` as (X, True); other unions are returned unchanged."""
    variants = schema.get("anyOf")
    if not variants:
        return resolve(schema, root), False
    rest = [v for v in variants if v.get("type") != "null"]
    nullable = len(rest) < len(variants)
    if len(rest) == 1:
        inner = resolve(rest[0], root)
        merged = {**inner, **{k: v for k, v in schema.items() if k != "anyOf"}}
        return merged, nullable
    return {**schema, "anyOf": rest}, nullable


def kind_of(schema: dict[str, Any]) -> str:
    """The editor a property gets: text, multiline, code, choice, integer, number, boolean, object, list, json."""
    if "enum" in schema or "const" in schema:
        return "choice"
    kind = schema.get("type")
    if kind == "string" and code_language(schema):
        return "code"
    if kind == "string":
        return "multiline" if schema.get("multiline") else "text"
    if kind in ("integer", "number", "boolean"):
        return kind
    if kind == "object" and "properties" in schema:
        return "object"
    items = schema.get("items")
    if kind == "array" and isinstance(items, dict) and (items.get("type") == "object" or "$ref" in items):
        return "list"
    return "json"


def code_language(schema: dict[str, Any]) -> str | None:
    """The language of a code parameter: `code` in its schema, or n8n's `typeOptions.editor`."""
    if schema.get("code"):
        return str(schema["code"])
    type_options = schema.get("typeOptions")
    editor = type_options.get("editor") if isinstance(type_options, dict) else None
    return {"codeNodeEditor": "code", "jsEditor": "javascript", "sqlEditor": "sql", "htmlEditor": "html",
            "cssEditor": "css", "jsonEditor": "json"}.get(editor, editor) if editor else None


def choices_of(schema: dict[str, Any]) -> list[Any]:
    if "enum" in schema:
        return list(schema["enum"])
    return [schema["const"]]


def default_of(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """The value a new field starts with: its default, else an empty value of its kind."""
    if "default" in schema:
        return copy.deepcopy(schema["default"])
    inner, nullable = unwrap_optional(schema, root)
    if "default" in inner:
        return copy.deepcopy(inner["default"])
    kind = kind_of(inner)
    if kind == "object":
        return {key: default_of(prop, root) for key, prop in inner.get("properties", {}).items()
                if key in inner.get("required", [])}
    if kind == "list" or inner.get("type") == "array":
        return []
    if kind == "choice":
        return choices_of(inner)[0]
    if kind in ("integer", "number"):
        return inner.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind in ("text", "multiline", "code"):
        return ""
    if inner.get("type") == "object":
        return {}
    return None if nullable else ""


def item_schema(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    return resolve(schema.get("items", {}), root)
