"""The comparisons of n8n's first-generation conditions (IF v1, Filter v1): lists of boolean,
dateTime, number and string conditions, each `value1 <operation> value2`, with JavaScript's
loose rules (`(value1 || 0) > (value2 || 0)`, `===`, String() for contains)."""

from __future__ import annotations

from typing import Any, Callable

from engine.errors import NodeOperationError
from nodes.core.set_values import MISSING, is_nan, js_number, js_truthy

from .conditions import js_to_string, strict_equal
from .js_values import JsValues

DATA_TYPES = ("boolean", "dateTime", "number", "string")
# what n8n's form fills in for a condition that leaves a field out
DEFAULTS = {
    "boolean": {"value1": False, "operation": "equal", "value2": False},
    "dateTime": {"value1": "", "operation": "after", "value2": ""},
    "number": {"value1": 0, "operation": "smaller", "value2": 0},
    "string": {"value1": "", "operation": "equal", "value2": ""},
}


def _or(value: Any, fallback: Any) -> Any:
    return value if js_truthy(value) else fallback


def js_greater(a: Any, b: Any) -> bool:
    """JavaScript's `a > b` on JSON values: text by code units when both are text, else numbers."""
    if isinstance(a, str) and isinstance(b, str):
        return a > b
    x, y = js_number(_primitive(a)), js_number(_primitive(b))
    return not (is_nan(x) or is_nan(y)) and x > y


def _primitive(value: Any) -> Any:
    if value is MISSING:
        return float("nan")
    if isinstance(value, dict):
        return float("nan")
    return value


def _relation(op: str) -> Callable[[Any, Any], bool]:
    def compare(v1: Any, v2: Any) -> bool:
        a, b = _or(v1, 0), _or(v2, 0)
        if op == ">":
            return js_greater(a, b)
        if op == "<":
            return js_greater(b, a)
        both = isinstance(a, str) and isinstance(b, str)
        if not both:
            x, y = js_number(_primitive(a)), js_number(_primitive(b))
            if is_nan(x) or is_nan(y):
                return False
        return not js_greater(b, a) if op == ">=" else not js_greater(a, b)

    return compare


def _text(value: Any) -> str:
    return js_to_string(_or(value, ""))


def _method(name: str, value: Any) -> str:
    """`value1.<name>(...)`: only text has the method (JavaScript's TypeError otherwise)."""
    if value is MISSING or value is None:
        raise NodeOperationError(f"Cannot read properties of {js_to_string(value)} (reading '{name}')")
    if not isinstance(value, str):
        raise NodeOperationError(f"value1.{name} is not a function")
    return value


def is_empty(value: Any) -> bool:
    if value is MISSING or value is None or value == "" and isinstance(value, str) or is_nan(value):
        return True
    return isinstance(value, (dict, list)) and len(value) == 0


class LegacyComparer:
    """Evaluates one first-generation condition; regex and dates through JavaScript."""

    def __init__(self, js: JsValues, node: str) -> None:
        self.js = js
        self.node = node
        self.ops: dict[str, Callable[[Any, Any], bool]] = {
            "after": _relation(">"), "before": _relation("<"),
            "larger": _relation(">"), "largerEqual": _relation(">="),
            "smaller": _relation("<"), "smallerEqual": _relation("<="),
            "contains": lambda a, b: _text(b) in _text(a),
            "notContains": lambda a, b: _text(b) not in _text(a),
            "endsWith": lambda a, b: _method("endsWith", a).endswith(js_to_string(b)),
            "notEndsWith": lambda a, b: not _method("endsWith", a).endswith(js_to_string(b)),
            "startsWith": lambda a, b: _method("startsWith", a).startswith(js_to_string(b)),
            "notStartsWith": lambda a, b: not _method("startsWith", a).startswith(js_to_string(b)),
            "equal": strict_equal, "notEqual": lambda a, b: not strict_equal(a, b),
            "isEmpty": lambda a, _b: is_empty(a), "isNotEmpty": lambda a, _b: not is_empty(a),
            "regex": self._regex, "notRegex": lambda a, b: not self._regex(a, b),
        }

    def _regex(self, value1: Any, value2: Any) -> bool:
        try:
            return self.js.regex_test(_text(value2), _text(value1), False)
        except ValueError as exc:
            raise NodeOperationError(str(exc), node=self.node) from None

    def date(self, value: Any) -> Any:
        """n8n's convertDateTime: a string through `new Date()`, a number as it is."""
        millis = None
        if isinstance(value, str):
            millis = self.js.js_date_millis(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            millis = None if is_nan(value) else value
        if millis is None:
            raise NodeOperationError(f'The value "{js_to_string(value)}" is not a valid DateTime.', node=self.node)
        return millis

    def passes(self, data_type: str, condition: dict[str, Any]) -> bool:
        entry = {**DEFAULTS[data_type], **condition}
        value1, value2 = entry["value1"], entry["value2"]
        if data_type == "dateTime":
            value1, value2 = self.date(value1), self.date(value2)
        operation = entry["operation"]
        op = self.ops.get(operation)
        if op is None:
            raise NodeOperationError(f"compareOperationFunctions[compareData.operation] is not a function "
                                     f'(operation "{operation}")', node=self.node)
        try:
            return bool(op(value1, value2))
        except NodeOperationError as exc:
            exc.node = exc.node or self.node
            raise


def legacy_conditions(conditions: Any) -> list[tuple[str, dict[str, Any]]]:
    """(data type, condition) in n8n's order: all boolean, then dateTime, number, string."""
    conditions = conditions if isinstance(conditions, dict) else {}
    out = []
    for data_type in DATA_TYPES:
        for condition in conditions.get(data_type) or []:
            out.append((data_type, condition if isinstance(condition, dict) else {}))
    return out


__all__ = ["LegacyComparer", "legacy_conditions"]
