"""JavaScript value rules the Edit Fields (Set) node follows in n8n: String(), Number(),
n8n's type validation of a field (`validateFieldType`), JSON parsing with its recovery, and
lodash's dotted paths (`a.b[0].c`) for setting, reading and removing fields."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import json5

from engine.errors import NodeOperationError

MISSING = object()  # JavaScript's `undefined` where it differs from `null`


# ----- String() and Number() ----------------------------------------------------------------
def js_number_text(value: float | int) -> str:
    """How JavaScript writes a number: 3 not 3.0, 1e+21, NaN, Infinity."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) < 10**21 else js_number_text(float(value))
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exp = text.split("e")
        sign = "-" if exp.startswith("-") else "+"
        return f"{mantissa}e{sign}{exp.lstrip('+-').lstrip('0') or '0'}"
    return text


def js_string(value: Any) -> str:
    """JavaScript's String(value); objects as JSON (as n8n renders them)."""
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
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_JS_NUMBER = re.compile(r"^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|Infinity)$")


def js_number(value: Any) -> float | int:
    """JavaScript's Number(value): NaN (float('nan')) where JavaScript gives NaN."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0
        low = text.lower()
        for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
            if low.startswith(prefix):
                try:
                    return int(text[2:], base)
                except ValueError:
                    return math.nan
        if not _JS_NUMBER.match(text):
            return math.nan
        number = float(text)
        return int(number) if number.is_integer() and "e" not in low and "." not in text and abs(number) < 2**53 else number
    if isinstance(value, list):
        return js_number(js_string(value[0]) if len(value) == 1 else ("" if not value else "x"))
    return math.nan


def is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def js_truthy(value: Any) -> bool:
    """JavaScript's `!!value`."""
    if value is None or value is MISSING or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return not (value == 0 or is_nan(value))
    if isinstance(value, str):
        return value != ""
    return True


def js_integral(value: float | int) -> float | int:
    """A whole float as an int, as JSON would write it from JavaScript."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


# ----- parsing JSON as n8n does ---------------------------------------------------------------
def parse_js_object(text: str) -> Any:
    """n8n's jsonParse with acceptJSObject/repairJSON: JSON, else a JavaScript object literal
    (unquoted keys, single quotes, trailing commas). Raises ValueError when neither fits."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        pass
    try:
        return json5.loads(text)
    except Exception as exc:  # json5 raises ValueError and others for text it cannot read
        raise ValueError(str(exc)) from None


def describe_value(value: Any) -> str:
    """n8n's getValueDescription: `'text'`, `'null'`, array, object."""
    if value is None:
        return "'null'"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return f"'{js_string(value)}'"


class ConversionFailed(Exception):
    """A value that does not convert to a field type (n8n's validateFieldType said invalid)."""


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not (isinstance(value, str) and value.strip() == ""):
        number = js_number(value)
        if number == 0 and not is_nan(number):
            return False
        if number == 1:
            return True
    raise ConversionFailed()


def _to_array(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    text = js_string(value)
    for candidate in (text, text.replace("'", '"')):
        try:
            parsed = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(parsed, list):
            return parsed
        raise ConversionFailed()
    raise ConversionFailed()


def _to_object(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if not js_truthy(value) and not isinstance(value, str):
        raise ConversionFailed()
    try:
        parsed = parse_js_object(js_string(value))
    except ValueError:
        raise ConversionFailed() from None
    if not isinstance(parsed, dict):
        raise ConversionFailed()
    return parsed


def convert_field(name: str, field_type: str, value: Any, *, node: str, item_index: int,
                  ignore_errors: bool, version: float) -> Any:
    """n8n's validateEntry: a field's value converted to its declared type (string, number,
    boolean, array, object), a NodeOperationError naming the field when it does not convert."""
    if version >= 3.2 and (value is None or value is MISSING):
        return None
    description = (f'To fix the error try to change the type for the field "{name}" or activate the option '
                   "“Ignore Type Conversion Errors” to apply a less strict type validation")
    if field_type == "string":
        if version > 3 and (value is None or value is MISSING):
            if ignore_errors:
                return None
            got = "'undefined'" if value is MISSING else "'null'"
            raise NodeOperationError(f"'{name}' expects a string but we got {got} [item {item_index}]",
                                     node=node, description=description)
        return js_string(value)  # JSON.stringify for objects and null, String() otherwise
    if value is None or value is MISSING:
        return None
    try:
        if field_type == "number":
            number = js_number(value)
            if is_nan(number):
                raise ConversionFailed()
            return js_integral(number)
        if field_type == "boolean":
            return _to_boolean(value)
        if field_type == "array":
            return _to_array(value)
        if field_type == "object":
            return _to_object(value)
    except ConversionFailed:
        if ignore_errors:
            return value
        raise NodeOperationError(f"'{name}' expects a {field_type} but we got {describe_value(value)} [item {item_index}]",
                                 node=node, description=description) from None
    raise NodeOperationError(f"Field '{name}' has the type '{field_type}', which mini-n8n does not support", node=node)


# ----- lodash paths ---------------------------------------------------------------------------
_PATH_PART = re.compile(r"""[^.[\]]+|\[(?:(-?\d+(?:\.\d+)?)|(["'])((?:(?!\2)[^\\]|\\.)*?)\2)\]|(?=(?:\.|\[\])(?:\.|\[\]|$))""")
_INDEX = re.compile(r"^(?:0|[1-9]\d*)$")


def path_parts(path: str) -> list[str]:
    """lodash's toPath: `a.b[0]["c.d"]` -> ["a", "b", "0", "c.d"]."""
    parts: list[str] = []
    if path.startswith("."):
        parts.append("")
    for match in _PATH_PART.finditer(path):
        number, quote, quoted = match.group(1), match.group(2), match.group(3)
        if quote:
            parts.append(re.sub(r"\\(.)", r"\1", quoted))
        elif number is not None:
            parts.append(number)
        else:
            parts.append(match.group(0))
    return parts


def _child(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        return container.get(key, MISSING)
    if isinstance(container, list) and _INDEX.match(key):
        i = int(key)
        return container[i] if i < len(container) else MISSING
    return MISSING


def _put(container: Any, key: str, value: Any) -> None:
    if isinstance(container, list) and _INDEX.match(key):
        i = int(key)
        while len(container) <= i:
            container.append(None)  # a hole in a JavaScript array is written as null in JSON
        container[i] = value
    elif isinstance(container, dict):
        container[key] = value


def set_path(target: dict[str, Any], path: str, value: Any) -> None:
    """lodash's set: creates objects (or arrays before an index) along the way."""
    parts = path_parts(path)
    if not parts:
        return
    node: Any = target
    for i, key in enumerate(parts[:-1]):
        existing = _child(node, key)
        if not isinstance(existing, (dict, list)):
            existing = [] if _INDEX.match(parts[i + 1]) else {}
            _put(node, key, existing)
        node = existing
    _put(node, parts[-1], value)


def get_path(source: Any, path: str) -> Any:
    node = source
    for key in path_parts(path):
        node = _child(node, key)
        if node is MISSING:
            return MISSING
    return node


def unset_path(target: dict[str, Any], path: str) -> None:
    parts = path_parts(path)
    parent = get_path(target, ".".join(f"[{json.dumps(p)}]" for p in parts[:-1])) if len(parts) > 1 else target
    if isinstance(parent, dict):
        parent.pop(parts[-1], None)


def plain_key(item: dict[str, Any], key: str) -> str:
    """n8n's sanitizeDataPathKey (dot notation off): `['a.b']` names the key `a.b`."""
    if key in item:
        return key
    if (key.startswith("['") and key.endswith("']")) or (key.startswith('["') and key.endswith('"]')):
        return key[2:-2]
    return key
