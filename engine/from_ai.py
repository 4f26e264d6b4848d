"""n8n's `$fromAI(key, description, type, default)`: a parameter the calling model fills in.

When an agent calls a tool node, each `$fromAI(...)` in the node's parameters becomes an argument
of the tool's JSON schema, and resolves to the value the model gave for it. For the schema the
call's arguments are read as literals (strings, numbers, booleans, null) by a small tokenizer;
when the tool runs, the expression engine evaluates the call and `FromAI.value` answers it.
"""

import json
import re
from typing import Any, Iterator, NamedTuple

from .errors import ExpressionError
from .expressions.template import split

CALL = re.compile(r"^\s*\$from(?:AI|Ai|ai)\s*\((?P<args>.*)\)\s*$", re.S)
KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_LITERAL = re.compile(
    r"""\s*(?:
        (?P<q>['"`])(?P<text>(?:\\.|(?!(?P=q)).)*)(?P=q)   # a quoted string
      | (?P<number>-?\d+(?:\.\d+)?)
      | (?P<word>true|false|null|undefined)
    )\s*(?P<sep>,|$)""",
    re.X | re.S,
)
SCHEMA_TYPES = {"string": "string", "number": "number", "boolean": "boolean", "json": "object"}
MISSING = object()
_NEUTRAL: dict[str, Any] = {"string": "", "number": 0, "boolean": False, "json": {}}


class Unfilled(dict):  # type: ignore[type-arg]
    """The arguments while a tool node only describes itself (supply_data): no model has
    answered yet, so each `$fromAI` reads as its default or an empty value of its type."""


UNFILLED = Unfilled()


class FromAI(NamedTuple):
    """One `$fromAI(...)`: the argument's name, what the model is told, its type and default."""

    key: str
    description: str = ""
    type: str = "string"
    default: Any = MISSING

    @property
    def required(self) -> bool:
        return self.default is MISSING

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": SCHEMA_TYPES[self.type]}
        if self.description:
            out["description"] = self.description
        return out

    def value(self, args: dict[str, Any]) -> Any:
        """The model's value for this argument, converted to its type (the default when absent)."""
        if isinstance(args, Unfilled):
            return _NEUTRAL[self.type] if self.required else self.default
        if self.key not in args or args[self.key] is None:
            if self.required:
                raise ExpressionError(f"the model gave no value for '{self.key}' ($fromAI)")
            return self.default
        value = args[self.key]
        try:
            if self.type == "string":
                return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            if self.type == "number":
                return value if isinstance(value, (int, float)) and not isinstance(value, bool) else float(value)
            if self.type == "boolean":
                return value if isinstance(value, bool) else str(value).strip().lower() == "true"
            return json.loads(value) if isinstance(value, str) else value
        except (TypeError, ValueError):
            raise ExpressionError(f"the model's value for '{self.key}' is not a {self.type}: {value!r}") from None


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), text)


def _literals(args: str, source: str) -> Iterator[Any]:
    pos = 0
    while pos < len(args) and args[pos:].strip():
        match = _LITERAL.match(args, pos)
        if match is None:
            raise ExpressionError(f"unsupported expression {{{{{source}}}}}: $fromAI takes literal arguments only")
        if match.group("q") is not None:
            yield _unescape(match.group("text"))
        elif match.group("number") is not None:
            number = match.group("number")
            yield float(number) if "." in number else int(number)
        else:
            yield {"true": True, "false": False}.get(match.group("word"))
        pos = match.end()


def parse(source: str) -> FromAI | None:
    """The `$fromAI` call an expression segment consists of, or None if it is not one."""
    match = CALL.match(source)
    if match is None:
        return None
    values = list(_literals(match.group("args"), source))
    if not values or not isinstance(values[0], str) or not KEY.match(values[0]):
        raise ExpressionError(
            f"$fromAI needs a name of letters, digits, _ or - (at most 64) as its first argument: {{{{{source}}}}}"
        )
    kind = values[2] if len(values) > 2 and values[2] else "string"
    if kind not in SCHEMA_TYPES:
        raise ExpressionError(f"$fromAI type must be one of {', '.join(SCHEMA_TYPES)}, not '{kind}'")
    description = values[1] if len(values) > 1 and isinstance(values[1], str) else ""
    default = values[3] if len(values) > 3 and values[3] is not None else MISSING
    return FromAI(values[0], description, kind, default)


def fields_in(parameters: Any) -> list[FromAI]:
    """Every `$fromAI(...)` in a node's raw parameters, first occurrence of each key."""
    found: dict[str, FromAI] = {}

    def walk(value: Any) -> None:
        if isinstance(value, str) and value.startswith("=") and "$from" in value:
            for segment in (text for is_code, text in split(value[1:]) if is_code):
                field = parse(segment)
                if field is not None:
                    found.setdefault(field.key, field)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(parameters)
    return list(found.values())


def with_fields(schema: dict[str, Any], fields: list[FromAI]) -> dict[str, Any]:
    """A tool's JSON schema with the `$fromAI` arguments added (the tool's own ones win)."""
    if not fields:
        return schema
    properties = dict(schema.get("properties") or {})
    required = list(schema.get("required") or [])
    for field in fields:
        properties.setdefault(field.key, field.schema())
        if field.required and field.key not in required:
            required.append(field.key)
    return {**schema, "type": "object", "properties": properties, "required": required}
