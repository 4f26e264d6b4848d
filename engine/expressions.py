"""n8n expressions of the form `={{ $json.path }}`: read a field of the input item, nothing else.

The one other form is `$fromAI(...)` (engine/from_ai.py) in a node an agent calls as a tool: the
calling model's argument. No Python `eval` is involved; anything else is an ExpressionError.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import from_ai
from .errors import ExpressionError

_SEGMENT = re.compile(r"\{\{(.*?)\}\}", re.S)
_PATH_TOKEN = re.compile(
    r"""\s*(?:
        \.(?P<attr>[A-Za-z_$][\w$]*)           # .field
      | \[\s*(?P<index>-?\d+)\s*\]             # [0]
      | \[\s*(?P<q>["'])(?P<key>.*?)(?P=q)\s*\] # ["field name"]
    )""",
    re.X,
)


def has_expressions(value: Any) -> bool:
    """True when a parameter value (nested dicts and lists included) holds any expression."""
    if isinstance(value, str):
        return value.startswith("=")
    if isinstance(value, dict):
        return any(has_expressions(v) for v in value.values())
    if isinstance(value, list):
        return any(has_expressions(v) for v in value)
    return False


def _resolve(source: str, item: dict[str, Any], args: dict[str, Any] | None) -> Any:
    call = from_ai.parse(source)
    if call is None:
        return _resolve_path(source, item)
    if args is None:
        raise ExpressionError(
            f"$fromAI('{call.key}') is filled in by the model: it works in a node an agent calls as a tool"
        )
    return call.value(args)


def _resolve_path(source: str, item: dict[str, Any]) -> Any:
    text = source.strip()
    if not text.startswith("$json"):
        raise ExpressionError(f"unsupported expression {{{{{source}}}}}: only $json paths are evaluated")
    rest = text[len("$json"):]
    value: Any = item
    pos = 0
    while pos < len(rest):
        match = _PATH_TOKEN.match(rest, pos)
        if not match or match.end() == pos:
            raise ExpressionError(f"unsupported expression {{{{{source}}}}}: cannot read '{rest[pos:].strip()}'")
        pos = match.end()
        if match.group("attr") is not None or match.group("key") is not None:
            key = match.group("attr") if match.group("attr") is not None else match.group("key")
            value = value.get(key) if isinstance(value, dict) else None
        else:
            idx = int(match.group("index"))
            value = value[idx] if isinstance(value, list) and -len(value) <= idx < len(value) else None
        if value is None:
            return None
    return value


def _to_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def evaluate(value: str, item: dict[str, Any], args: dict[str, Any] | None = None) -> Any:
    """Evaluate one expression string against an item's json (and, in a tool run, the calling
    model's `args` for `$fromAI`). A lone `{{ }}` keeps its type."""
    body = value[1:]
    segments = list(_SEGMENT.finditer(body))
    if len(segments) == 1 and segments[0].span() == (0, len(body.strip())) and body == body.strip():
        return _resolve(segments[0].group(1), item, args)
    out, last = [], 0
    for seg in segments:
        out.append(body[last:seg.start()])
        out.append(_to_text(_resolve(seg.group(1), item, args)))
        last = seg.end()
    out.append(body[last:])
    return "".join(out)


def resolve_parameters(value: Any, item: dict[str, Any], args: dict[str, Any] | None = None) -> Any:
    """Return `value` with every expression string evaluated against `item` (a copy)."""
    if isinstance(value, str):
        return evaluate(value, item, args) if value.startswith("=") else value
    if isinstance(value, dict):
        return {k: resolve_parameters(v, item, args) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_parameters(v, item, args) for v in value]
    return value
