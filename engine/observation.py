"""What a tool's run means to the model: the observation text the Agent puts in its scratchpad.

A single `response` field becomes its value; several fields or items become JSON; a failed
run becomes `Error: <message>`.
"""

from __future__ import annotations

import json
from typing import Any

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
        return (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)), False
    if len(items) == 1:
        return json.dumps(items[0], ensure_ascii=False), False
    return json.dumps(items, ensure_ascii=False), False


def with_observation(data: dict[str, Any], text: str) -> dict[str, Any]:
    """A copy of a tool run's data that reads as `text` to the model (an edited observation)."""
    edited = {k: v for k, v in data.items() if k != "error"}
    edited["executionStatus"] = "success"
    edited["data"] = {AI_TOOL: [[{"json": {"response": text}}]]}
    return edited
