"""What a tool's run means to the model: the observation text the Agent puts in its scratchpad.

`observation`: the tool's own answer, as n8n's v1/v2 agents (LangChain tools) hand it over and as
the steps table shows it: a single `response` field becomes its value; several fields or items
become JSON; a failed run becomes `Error: <message>`.
`items_observation`: what n8n's v3 agent hands over (its buildSteps): the tool run's output items
as JSON (`[{"response":"425"}]`), a failed run as `{"error": <message>, "errorType": <name>}`.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from .connection_types import AI_TOOL


def observation(data: dict[str, Any]) -> tuple[str, bool]:
    """A tool node's run (TaskData as JSON) as the text the model reads, and whether it failed."""
    error = data.get("error")
    if error:
        return f"Error: {error.get('message', 'the tool failed')}", True
    outputs = (data.get("data") or {}).get(AI_TOOL) or [[]]
    items = [item.get("json", {}) for item in (outputs[0] if outputs else [])]
    if len(items) == 1 and isinstance(items[0], dict) and set(items[0]) == {"response"}:
        value = items[0]["response"]
        if _text_blocks(value):  # an MCP tool's content: its text
            return "\n".join(block["text"] for block in value), False
        return (value if isinstance(value, str) else _TEXT_ENCODER.encode(value)), False
    if len(items) == 1:
        return _TEXT_ENCODER.encode(items[0]), False
    return _TEXT_ENCODER.encode(items), False


def _text_blocks(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str) for b in value)


# made once: json.dumps with options builds an encoder per call, a good part of a small value's cost
_JS_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_TEXT_ENCODER = json.JSONEncoder(ensure_ascii=False)
_PLAIN = (str, int, bool, type(None))  # kinds written as they are (bool and int: exactly these types)


def js_json(value: Any) -> str:
    """`JSON.stringify(value)`: compact, non-ASCII as itself, integral floats as integers."""
    return compact_json(_js_numbers(value))


def compact_json(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"))`, written by orjson when
    `value` is plain JSON without floats (the same text at a third of the cost: a tool call's log
    and observation are written every agent iteration). orjson writes floats otherwise (exponents,
    NaN, infinities); they, and what it refuses (an integer beyond 64 bits, a lone surrogate), go
    to the standard library."""
    if _plain(value):
        try:
            return orjson.dumps(value).decode()
        except orjson.JSONEncodeError:
            pass
    return _JS_ENCODER.encode(value)


def _plain(value: Any) -> bool:
    """Whether `value` holds only strings, integers, booleans, null, lists and string-keyed dicts
    (exactly these types)."""
    kind = type(value)
    if kind in _PLAIN:
        return True
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or (type(item) not in _PLAIN and not _plain(item)):
                return False
        return True
    if kind is list:
        for item in value:
            if type(item) not in _PLAIN and not _plain(item):
                return False
        return True
    return False


def _js_numbers(value: Any) -> Any:
    """`value` with floats as JSON.stringify writes them; containers without floats are returned
    themselves (only what is written out matters here)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return int(value) if value.is_integer() and abs(value) < 1e21 else value
    if isinstance(value, dict):
        out: dict[Any, Any] | None = None
        for k, v in value.items():
            converted = v if type(v) in _PLAIN else _js_numbers(v)
            if converted is not v:
                if out is None:
                    out = dict(value)
                out[k] = converted
        return value if out is None else out
    if isinstance(value, (list, tuple)):
        return [_js_numbers(v) for v in value]
    return value


def items_observation(data: dict[str, Any]) -> tuple[str, bool]:
    """A tool node's run (TaskData as JSON) as n8n's v3 agent shows it to the model, and whether it failed."""
    outputs = (data.get("data") or {}).get(AI_TOOL) or [[]]
    items = [item.get("json") for item in (outputs[0] if outputs else [])]
    if items:
        return js_json(items), bool(data.get("error"))
    error = data.get("error")
    if error:
        return js_json({"error": error.get("message") or "Unknown error", "errorType": "NodeOperationError"}), True
    return js_json(""), False


def readable(text: str) -> str:
    """A tool message as the steps table shows it: n8n's v3 items JSON read as `observation` reads
    the run (one `response` as its text, a failed run as `Error: …`); any other text unchanged."""
    if not text.startswith(("[", "{")):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict) and set(value) <= {"error", "errorType"} and "error" in value:
        return observation({"error": {"message": value["error"]}})[0]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return observation({"data": {AI_TOOL: [[{"json": v} for v in value]]}})[0]
    return text


def with_observation(data: dict[str, Any], text: str) -> dict[str, Any]:
    """A copy of a tool run's data that reads as `text` to the model (an edited observation)."""
    edited = {k: v for k, v in data.items() if k != "error"}
    edited["executionStatus"] = "success"
    edited["data"] = {AI_TOOL: [[{"json": {"response": text}}]]}
    return edited
