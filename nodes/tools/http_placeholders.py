"""`{placeholder}`s of the HTTP Request Tool: found in templates, turned into a JSON schema, filled.

A placeholder is `{name}` with a name of letters, digits and `_`; n8n's placeholder definitions
give each one a description and a type (string, number, boolean, json, or not specified).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable
from urllib.parse import quote

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

SCHEMA_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "json": {"type": ["object", "array", "string", "number", "boolean"]},
    "not specified": {"type": "string"},
}


class PlaceholderError(ValueError):
    """A request that cannot be built from its templates; the message names what and where."""


def names_in(text: str) -> list[str]:
    """Placeholder names in a template, in order of first appearance."""
    seen: list[str] = []
    for match in PLACEHOLDER.finditer(text or ""):
        if match.group(1) not in seen:
            seen.append(match.group(1))
    return seen


def schema_entry(kind: str, description: str) -> dict[str, Any]:
    entry = dict(SCHEMA_TYPES.get(kind, SCHEMA_TYPES["not specified"]))
    if description:
        entry["description"] = description
    return entry


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _value(name: str, args: dict[str, Any], where: str) -> Any:
    if name not in args:
        raise PlaceholderError(f"no value for the placeholder {{{name}}} in the {where}")
    return args[name]


def fill_text(template: str, args: dict[str, Any], where: str) -> str:
    """Each `{name}` replaced by the model's value as text."""
    return PLACEHOLDER.sub(lambda m: as_text(_value(m.group(1), args, where)), template)


def fill_url(template: str, args: dict[str, Any]) -> str:
    """Fill a URL template; values are percent-encoded, except one that starts the URL (the whole base)."""

    def replace(match: re.Match[str]) -> str:
        text = as_text(_value(match.group(1), args, "URL"))
        return text if match.start() == 0 else quote(text, safe="")

    return PLACEHOLDER.sub(replace, template)


def fill_json(template: str, args: dict[str, Any], where: str) -> Any:
    """Fill a JSON template: `"{name}"` takes the typed value, `{name}` inside a string its escaped text."""
    quoted = re.compile(r'"\{([A-Za-z_][A-Za-z0-9_]*)\}"')
    text = quoted.sub(lambda m: json.dumps(_value(m.group(1), args, where), ensure_ascii=False), template)

    def inner(match: re.Match[str]) -> str:
        value = _value(match.group(1), args, where)
        return json.dumps(as_text(value), ensure_ascii=False)[1:-1] if isinstance(value, str) else json.dumps(value)

    text = PLACEHOLDER.sub(inner, text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlaceholderError(f"the {where} is not valid JSON once filled in ({exc.msg} at position {exc.pos}): {text[:200]}") from None


def unused(defined: Iterable[str], used: Iterable[str]) -> list[str]:
    used_set = set(used)
    return [name for name in defined if name not in used_set]
