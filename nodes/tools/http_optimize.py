"""The HTTP Request Tool's "Optimize Response" (n8n's response optimizers) and its default.

Without the option n8n hands the model a JSON body re-written as `JSON.stringify(body, null, 2)`
and any other body as its text. With it, for a JSON body: the records (the body, or its
`dataField`), each with only the `fields` selected, or without those excepted, as indented
JSON. The HTML and Text optimizers need an HTML parser and Readability, which mini-n8n does not
have: they are refused with an error, never skipped.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from engine.errors import NodeOperationError

_PATH = re.compile(r"[^.\[\]]+")


def js_pretty(value: Any) -> str:
    """JSON.stringify(value, null, 2): integral numbers without `.0`, text as itself."""
    def plain(v: Any) -> Any:
        if isinstance(v, float) and math.isfinite(v) and v.is_integer() and abs(v) < 1e21:
            return int(v)
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        if isinstance(v, list):
            return [plain(x) for x in v]
        return v

    return json.dumps(plain(value), indent=2, ensure_ascii=False)


def is_json_type(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or kind.endswith("+json")


def default_text(text: str, content_type: str) -> str:
    """What the model reads without the option: a JSON body indented as n8n writes it."""
    if not is_json_type(content_type):
        return text
    try:
        return js_pretty(json.loads(text))
    except ValueError:
        return text


def _keys(path: str) -> list[str]:
    return _PATH.findall(path)


def _get(obj: Any, path: str) -> Any:
    for key in _keys(path):
        if isinstance(obj, dict):
            obj = obj.get(key)
        elif isinstance(obj, list) and key.isdigit() and int(key) < len(obj):
            obj = obj[int(key)]
        else:
            return None
    return obj


def _set(obj: dict[str, Any], path: str, value: Any) -> None:
    keys = _keys(path)
    for key in keys[:-1]:
        obj = obj.setdefault(key, {})
    if keys:
        obj[keys[-1]] = value


def _unset(obj: Any, path: str) -> None:
    keys = _keys(path)
    for key in keys[:-1]:
        obj = obj.get(key) if isinstance(obj, dict) else None
    if isinstance(obj, dict) and keys:
        obj.pop(keys[-1], None)


def optimize_json(text: str, data_field: str, include: str, fields: str, node: str) -> str:
    """n8n's JSON optimizer over a response body's text."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise NodeOperationError(f"The response is not JSON: {exc}", node=node) from None
    if not isinstance(data, (dict, list)) or not data and data != []:
        raise NodeOperationError("The response type must be an object or an array of objects", node=node)
    if isinstance(data, dict):
        records = data.get(data_field) if data_field else data
        records = records if isinstance(records, list) and data_field else [records]
    else:
        records = [r.get(data_field) if isinstance(r, dict) else None for r in data] if data_field else data
    if include == "all":
        return js_pretty(records)
    names = [f.strip() for f in fields.split(",")] if fields else []
    out = []
    for record in records:
        if include == "selected":
            picked: dict[str, Any] = {}
            for name in names:
                _set(picked, name, _get(record, name))
            out.append(picked)
        else:
            kept = copy.deepcopy(record)
            for name in names:
                _unset(kept, name)
            out.append(kept)
    return js_pretty(out)
