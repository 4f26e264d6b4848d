"""n8n's filter parameter (the conditions of IF v2, Filter v2 and Switch v3): each condition's
values are checked against its operator's type (strict, or converted when loose), then compared.
The rules and the error messages are n8n's (n8n-workflow's filter-parameter and type-validation).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine.errors import NodeOperationError
from nodes.core.set_values import (MISSING, ConversionFailed, _to_array, _to_boolean, _to_object, is_nan,
                                   js_number, js_number_text, js_truthy)

from .js_values import JsValues

LESS_STRICT_HINT = ("Try changing the type of comparison. Alternatively you can enable "
                    "'Convert types where required'.")
ENABLE_LESS_STRICT = LESS_STRICT_HINT  # n8n-nodes-base's ENABLE_LESS_STRICT_TYPE_VALIDATION


class FilterError(NodeOperationError):
    """A condition whose values do not fit its operator's type."""


def js_typeof(value: Any) -> str:
    if value is MISSING:
        return "undefined"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def js_to_string(value: Any) -> str:
    """JavaScript's String(value): arrays joined by commas, objects as "[object Object]"."""
    if value is MISSING:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number_text(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ",".join("" if v is None or v is MISSING else js_to_string(v) for v in value)
    return "[object Object]"


def _json_stringify(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _article(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' and noun else 'a'} {noun}"


def _nullish(value: Any) -> bool:
    return value is None or value is MISSING


_INVALID = object()


def validate_type(value: Any, kind: str, strict: bool, js: JsValues) -> Any:
    """n8n's validateFieldType with parseStrings: the converted value, or _INVALID."""
    if _nullish(value):
        return value
    kind = kind.lower()
    if kind == "string":
        if strict and not isinstance(value, str):
            return _INVALID
        if isinstance(value, (dict, list)):
            return _json_stringify(value)
        return js_to_string(value)
    if kind == "number":
        if strict and (not isinstance(value, (int, float)) or isinstance(value, bool)):
            return _INVALID
        number = js_number(value)
        return _INVALID if is_nan(number) else number
    if kind == "boolean":
        if strict and not isinstance(value, bool):
            return _INVALID
        try:
            return _to_boolean(value)
        except ConversionFailed:
            return _INVALID
    if kind == "datetime":
        millis = js.date_millis(value)
        return _INVALID if millis is None else millis
    if kind == "object":
        if strict and not isinstance(value, (dict, list)):
            return _INVALID
        try:
            return _to_object(value)
        except ConversionFailed:
            return _INVALID
    if kind == "array":
        if strict and not isinstance(value, list):
            return _INVALID
        try:
            return _to_array(value)
        except ConversionFailed:
            return _INVALID
    return value


def parse_single(value: Any, kind: str, strict: bool, version: float, js: JsValues) -> Any:
    """n8n's parseSingleFilterValue."""
    if kind == "any" or _nullish(value):
        return value
    if kind == "boolean" and not strict:
        if version >= 2:
            parsed = validate_type(value, kind, False, js)
            if parsed is not _INVALID:
                return parsed
        return js_truthy(value)
    if kind == "number":
        if is_nan(value):
            return value
        empty = (isinstance(value, str) and value.strip() == "") or value == []
        if empty and version >= 3:
            return None
    return validate_type(value, kind, strict, js)


@dataclass
class FilterOptions:
    case_sensitive: bool = True
    strict: bool = True
    version: float = 1


def filter_options(raw: Any) -> FilterOptions:
    """The options as n8n reads them: a missing `caseSensitive` ignores case, a missing
    `typeValidation` is loose (only "strict" is strict), a missing `version` is 1."""
    raw = raw if isinstance(raw, dict) else {}
    version = js_number(raw.get("version", 1))
    return FilterOptions(
        case_sensitive=js_truthy(raw.get("caseSensitive")),
        strict=raw.get("typeValidation") == "strict",
        version=1.0 if is_nan(version) or not version else float(version),
    )


def _values(condition: dict[str, Any], options: FilterOptions, index: int, item_index: int,
            js: JsValues, node: str, error_format: str = "full") -> tuple[Any, Any]:
    operator = condition.get("operator") or {}
    kind = operator.get("type", "string")
    right_kind = operator.get("rightType") or kind
    strict, version = options.strict, options.version
    left_raw, right_raw = condition.get("leftValue", ""), condition.get("rightValue", "")
    left = parse_single(left_raw, kind, strict, version, js)
    right = parse_single(right_raw, right_kind, strict, version, js)
    left_ok = left is not _INVALID
    right_ok = right is not _INVALID or bool(operator.get("singleValue"))
    suffix = f"[condition {index}, item {item_index}]" if error_format == "full" else f"[item {item_index}]"

    def invalid_message(expected: str, value: Any) -> str:
        from_type = js_typeof(value)
        text = js_to_string(value)
        if strict:
            return f"Wrong type: '{text}' is {_article(from_type)} but was expecting {_article(expected)} {suffix}"
        return f"Conversion error: the {from_type} '{text}' can't be converted to {_article(expected)} {suffix}"

    def invalid_description(expected: str, position: str) -> str:
        function = {"string": ".toString()", "number": ".toNumber()", "boolean": ".toBoolean()"}.get(expected, "")
        if strict and function:
            return (f"\n<p>Try either:</p>\n<ol>\n  <li>Enabling 'Convert types where required'</li>\n"
                    f"  <li>Converting the {position} field to {_article(expected)} by adding <code>{function}</code></li>\n"
                    "</ol>\n\t\t\t")
        return LESS_STRICT_HINT if strict else "Try changing the type of the comparison."

    if not left_ok and not right_ok and js_typeof(left_raw) == js_typeof(right_raw):
        raise FilterError(f"Comparison type expects {_article(kind)} but both fields are {_article(js_typeof(left_raw))}",
                          node=node, description=LESS_STRICT_HINT if strict else "Try changing the type of the comparison.")
    if not left_ok:
        raise FilterError(invalid_message(kind, left_raw), node=node, description=invalid_description(kind, "first"))
    if not right_ok:
        raise FilterError(invalid_message(right_kind, right_raw), node=node,
                          description=invalid_description(right_kind, "second"))
    return left, (MISSING if right is _INVALID else right)


def _same_value_zero(a: Any, b: Any) -> bool:
    """JavaScript's Array.prototype.includes equality on JSON values (objects never equal)."""
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    if _nullish(a) or _nullish(b):
        return (a is None and b is None) or (a is MISSING and b is MISSING)
    if js_typeof(a) != js_typeof(b):
        return False
    if is_nan(a) and is_nan(b):
        return True
    return a == b


def _array_contains(array: list[Any], value: Any, ignore_case: bool) -> bool:
    if ignore_case and isinstance(value, str):
        low = value.lower()
        return any(isinstance(v, str) and v.lower() == low for v in array)
    return any(_same_value_zero(v, value) for v in array)


def _compare(op: str, left: Any, right: Any) -> bool:
    """JavaScript's relational operators on numbers (undefined and NaN compare false)."""
    if left is MISSING or right is MISSING or is_nan(left) or is_nan(right):
        return False
    a = 0 if left is None else left
    b = 0 if right is None else right
    try:
        return {"gt": a > b, "lt": a < b, "gte": a >= b, "lte": a <= b}[op]
    except TypeError:
        return False


def _length(value: Any) -> int:
    return len(value) if isinstance(value, (list, str)) else 0


def execute_condition(condition: dict[str, Any], options: FilterOptions, index: int, item_index: int,
                      js: JsValues, node: str) -> bool:
    """n8n's executeFilterCondition: whether one condition holds for one item."""
    operator = condition.get("operator") or {}
    kind, operation = operator.get("type", "string"), operator.get("operation", "equals")
    left, right = _values(condition, options, index, item_index, js, node)
    ignore_case = not options.case_sensitive
    exists = not _nullish(left) and not is_nan(left)
    if operation == "exists":
        return exists
    if operation == "notExists":
        return not exists
    if kind == "string":
        regex = operation in ("regex", "notRegex")
        if ignore_case:  # n8n lowers the text even for a regex, the pattern only for other operations
            left = left.lower() if isinstance(left, str) else left
            right = right.lower() if isinstance(right, str) and not regex else right
        a = "" if _nullish(left) else js_to_string(left)
        b = "" if _nullish(right) else js_to_string(right)
        string_ops = {
            "empty": lambda: len(a) == 0, "notEmpty": lambda: len(a) != 0,
            "equals": lambda: a == b, "notEquals": lambda: a != b,
            "contains": lambda: b in a, "notContains": lambda: b not in a,
            "startsWith": lambda: a.startswith(b), "notStartsWith": lambda: not a.startswith(b),
            "endsWith": lambda: a.endswith(b), "notEndsWith": lambda: not a.endswith(b),
        }
        if operation in string_ops:
            return string_ops[operation]()
        if regex:
            try:
                found = js.regex_test(b, a, ignore_case)
            except ValueError as exc:
                raise NodeOperationError(str(exc), node=node) from None
            return found if operation == "regex" else not found
    elif kind == "number":
        if operation == "empty":
            return not exists
        if operation == "notEmpty":
            return exists
        if operation == "equals":
            return strict_equal(left, right)
        if operation == "notEquals":
            return not strict_equal(left, right)
        if operation in ("gt", "lt", "gte", "lte"):
            return _compare(operation, left, right)
    elif kind == "dateTime":
        if operation == "empty":
            return not exists
        if operation == "notEmpty":
            return exists
        if _nullish(left) or _nullish(right):
            return False
        date_ops = {"equals": left == right, "notEquals": left != right, "after": left > right,
                    "before": left < right, "afterOrEquals": left >= right, "beforeOrEquals": left <= right}
        if operation in date_ops:
            return date_ops[operation]
    elif kind == "boolean":
        if operation == "empty":
            return not exists
        if operation == "notEmpty":
            return exists
        if operation == "true":
            return js_truthy(left)
        if operation == "false":
            return not js_truthy(left)
        if operation == "equals":
            return strict_equal(left, right)
        if operation == "notEquals":
            return not strict_equal(left, right)
    elif kind == "array":
        array = [] if _nullish(left) else left
        if operation == "contains":
            return _array_contains(array, right, ignore_case)
        if operation == "notContains":
            return not _array_contains(array, right, ignore_case)
        if operation.startswith("length"):
            size = _length(array)
            length_ops = {"lengthEquals": lambda: strict_equal(size, right),
                          "lengthNotEquals": lambda: not strict_equal(size, right),
                          "lengthGt": lambda: _compare("gt", size, right), "lengthLt": lambda: _compare("lt", size, right),
                          "lengthGte": lambda: _compare("gte", size, right), "lengthLte": lambda: _compare("lte", size, right)}
            if operation in length_ops:
                return length_ops[operation]()
        if operation == "empty":
            return _length(array) == 0
        if operation == "notEmpty":
            return _length(array) != 0
    elif kind == "object":
        if operation == "empty":
            return not js_truthy(left) or (isinstance(left, dict) and not left)
        if operation == "notEmpty":
            return js_truthy(left) and not (isinstance(left, dict) and not left)
    return False


def strict_equal(a: Any, b: Any) -> bool:
    """JavaScript's `===` on JSON values."""
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    if a is MISSING or b is MISSING:
        return a is b
    if a is None or b is None:
        return a is b
    if js_typeof(a) != js_typeof(b):
        return False
    if is_nan(a) or is_nan(b):
        return False
    return a == b


def execute_filter(value: Any, item_index: int, js: JsValues, node: str) -> bool:
    """n8n's executeFilter: the conditions combined with "and" (every) or "or" (some)."""
    value = value if isinstance(value, dict) else {}
    conditions = value.get("conditions") or []
    raw_options = value.get("options", MISSING)
    if conditions and not isinstance(raw_options, dict):  # n8n reads options.caseSensitive first
        what = "null" if raw_options is None else "undefined"
        raise NodeOperationError(f"Cannot read properties of {what} (reading 'caseSensitive')", node=node)
    options = filter_options(raw_options)
    combinator = value.get("combinator", "and")
    if combinator == "and":
        return all(execute_condition(c, options, i, item_index, js, node) for i, c in enumerate(conditions))
    if combinator == "or":
        return any(execute_condition(c, options, i, item_index, js, node) for i, c in enumerate(conditions))
    return False


__all__ = ["ENABLE_LESS_STRICT", "FilterError", "JsValues", "execute_filter", "strict_equal"]
