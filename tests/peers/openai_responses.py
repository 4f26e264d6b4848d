"""The Responses API side of the OpenAI peer: POST /v1/responses as OpenAI's API reference shows it.

A reply is a `response` object whose `output` holds a `message` item (its `output_text` part)
and one `function_call` item per tool call; usage counts `input_tokens` / `output_tokens`.
Streamed, it is server-sent events, each `event: <type>` then `data: {...}` with a growing
`sequence_number`: response.created, response.in_progress, then per item output_item.added,
content_part.added / output_text.delta... / output_text.done / content_part.done (a message) or
function_call_arguments.delta... / .done (a call), output_item.done, and response.completed.
No `[DONE]` line ends it.
"""

from __future__ import annotations

import json
from typing import Any

from .http_peer import Step

CREATED = 1_700_000_000


def usage(body: dict[str, Any], step: Step) -> dict[str, Any]:
    prompt, completion = step.usage or (len(json.dumps(body.get("input"))) // 4, max(1, len(step.text) // 4))
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": prompt + completion}


def _message(text: str, status: str = "completed") -> dict[str, Any]:
    content = [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}] if status == "completed" else []
    return {"id": "msg_peer_0", "type": "message", "status": status, "content": content, "role": "assistant"}


def _call(index: int, call: dict[str, Any], status: str = "completed") -> dict[str, Any]:
    args = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
    return {"id": f"fc_peer_{index}", "type": "function_call", "status": status,
            "arguments": args if status == "completed" else "", "call_id": call.get("id", f"call_{index}"), "name": call["name"]}


def output(step: Step) -> list[dict[str, Any]]:
    items = [_message(step.text)] if step.text or not step.tool_calls else []
    return items + [_call(i, c) for i, c in enumerate(step.tool_calls)]


def response(body: dict[str, Any], step: Step, model: str, status: str = "completed") -> dict[str, Any]:
    """The response object (with its output and usage once completed)."""
    done = status == "completed"
    text = body.get("text") or {"format": {"type": "text"}, "verbosity": "medium"}
    return {
        "id": "resp_peer", "object": "response", "created_at": CREATED, "status": status, "background": False,
        "error": None, "incomplete_details": None, "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"), "max_tool_calls": None, "model": model,
        "output": output(step) if done else [], "parallel_tool_calls": True, "previous_response_id": None,
        "prompt_cache_key": None, "reasoning": {"effort": (body.get("reasoning") or {}).get("effort"), "summary": None},
        "safety_identifier": None, "service_tier": "default" if done else "auto", "store": True,
        "temperature": body.get("temperature", 1.0), "text": text, "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [], "top_logprobs": 0, "top_p": body.get("top_p", 1.0), "truncation": "disabled",
        "usage": usage(body, step) if done else None, "user": None, "metadata": {},
    }


def events(body: dict[str, Any], step: Step, model: str) -> list[tuple[str, dict[str, Any]]]:
    """The stream's events, in order, each (type, data) with its sequence number."""
    out: list[dict[str, Any]] = [
        {"type": "response.created", "response": response(body, step, model, "in_progress")},
        {"type": "response.in_progress", "response": response(body, step, model, "in_progress")},
    ]
    index = 0
    if step.text or not step.tool_calls:
        item = "msg_peer_0"
        out.append({"type": "response.output_item.added", "output_index": index, "item": _message("", "in_progress")})
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        out.append({"type": "response.content_part.added", "item_id": item, "output_index": index, "content_index": 0, "part": part})
        for i in range(0, len(step.text), 3):
            out.append({"type": "response.output_text.delta", "item_id": item, "output_index": index, "content_index": 0,
                        "delta": step.text[i:i + 3], "logprobs": [], "obfuscation": "peer"})
        out.append({"type": "response.output_text.done", "item_id": item, "output_index": index, "content_index": 0,
                    "text": step.text, "logprobs": []})
        out.append({"type": "response.content_part.done", "item_id": item, "output_index": index, "content_index": 0,
                    "part": {**part, "text": step.text}})
        out.append({"type": "response.output_item.done", "output_index": index, "item": _message(step.text)})
        index += 1
    for i, call in enumerate(step.tool_calls):
        done = _call(i, call)
        out.append({"type": "response.output_item.added", "output_index": index, "item": _call(i, call, "in_progress")})
        for j in range(0, len(done["arguments"]), 4):
            out.append({"type": "response.function_call_arguments.delta", "item_id": done["id"], "output_index": index,
                        "delta": done["arguments"][j:j + 4], "obfuscation": "peer"})
        out.append({"type": "response.function_call_arguments.done", "item_id": done["id"], "output_index": index,
                    "arguments": done["arguments"]})
        out.append({"type": "response.output_item.done", "output_index": index, "item": done})
        index += 1
    out.append({"type": "response.completed", "response": response(body, step, model)})
    return [(e["type"], {"type": e["type"], "sequence_number": n, **{k: v for k, v in e.items() if k != "type"}})
            for n, e in enumerate(out)]


def sse(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: ".encode() + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"
