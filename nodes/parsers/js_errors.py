"""Error texts as n8n's parser produces them, for the prompts that show them to a model (the
Auto-fixing Output Parser's `{error}`): JavaScript's JSON.parse messages (V8, Node 20) and Zod's
error message (its issues as indented JSON)."""

from __future__ import annotations

import json
from typing import Any

from .json_schema_check import Issue

_CONTEXT = 10  # V8's kMaxContextCharacters


def _bracket_at(text: str, pos: int) -> str | None:
    """The innermost `{` or `[` still open before `pos` (strings skipped)."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text[:pos]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _unexpected(text: str, pos: int) -> str:
    token = text[pos]
    if len(text) < 2 * _CONTEXT + 1:
        return f"Unexpected token '{token}', \"{text}\" is not valid JSON"
    start, end = max(0, pos - _CONTEXT), min(len(text), pos + _CONTEXT)
    excerpt = f'"{text[start:end]}"'
    before = "..." if start > 0 else ""
    after = "..." if end < len(text) else ""
    return f"Unexpected token '{token}', {before}{excerpt}{after} is not valid JSON"


def json_parse_message(text: str, error: json.JSONDecodeError) -> str:
    """What JSON.parse(text) says where Python's json says `error`."""
    pos, msg = error.pos, error.msg
    at = f" in JSON at position {pos}"
    if pos >= len(text.rstrip()) and msg in ("Expecting value", "Expecting property name enclosed in double quotes",
                                               "Expecting ',' delimiter", "Expecting ':' delimiter"):
        return "Unexpected end of JSON input"
    if msg == "Expecting value":
        return _unexpected(text, pos)
    if msg == "Expecting property name enclosed in double quotes":
        return "Expected property name or '}'" + at
    if msg == "Expecting ',' delimiter":
        return ("Expected ',' or ']' after array element" if _bracket_at(text, pos) == "[" else
                "Expected ',' or '}' after property value") + at
    if msg == "Expecting ':' delimiter":
        return "Expected ':' after property name" + at
    if msg == "Extra data":
        return "Unexpected non-whitespace character after JSON at position " + str(pos)
    if msg.startswith("Unterminated string"):
        return "Unterminated string in JSON at position " + str(len(text))
    if msg.startswith("Invalid control character"):
        return "Bad control character in string literal" + at
    if msg.startswith("Invalid \\escape"):
        return "Bad escaped character" + at
    return msg + at


def _fields(issue: Issue) -> dict[str, Any]:
    """One issue as Zod writes it: its fields in Zod's order, `path` and `message` among them."""
    extra = dict(issue.fields)
    code = issue.code
    path = list(issue.path)
    if code in ("too_small", "too_big", "invalid_string", "not_multiple_of") or issue.from_check:
        return {**extra, "message": issue.message, "path": path}
    return {**extra, "path": path, "message": issue.message}


def zod_message(issues: list[Issue]) -> str:
    """ZodError.message: the issues as JSON, indented by two spaces."""
    return json.dumps([_fields(i) for i in issues], indent=2, ensure_ascii=False)
