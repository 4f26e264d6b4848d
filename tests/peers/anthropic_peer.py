"""An Anthropic Messages API peer: POST /v1/messages as Anthropic's API reference documents it.

A reply is a `message` whose `content` holds a `text` block and one `tool_use` block per tool
call, `stop_reason` end_turn or tool_use, usage as input/output tokens. Streamed (`stream: true`),
it is server-sent events, each `event: <type>` and `data: {...}`: message_start, then per block
content_block_start, content_block_delta (text_delta or input_json_delta)..., content_block_stop,
a ping after the first block starts, then message_delta (stop_reason, output usage) and
message_stop. Errors are `{"type": "error", "error": {"type": ..., "message": ...}}`.
"""

from __future__ import annotations

import json
from typing import Any

from .http_peer import Connection, PeerServer, Request, Step

VERSION = "2023-06-01"
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}}


def usage(body: dict[str, Any], step: Step) -> tuple[int, int]:
    return step.usage or (len(json.dumps(body.get("messages"))) // 4, max(1, len(step.text) // 4))


def _input(call: dict[str, Any]) -> Any:
    return json.loads(call["arguments"]) if isinstance(call["arguments"], str) else call["arguments"]


def blocks(step: Step) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"type": "text", "text": step.text}] if step.text or not step.tool_calls else []
    for i, call in enumerate(step.tool_calls):
        out.append({"type": "tool_use", "id": call.get("id", f"toolu_peer_{i}"), "name": call["name"], "input": _input(call)})
    return out


def message(body: dict[str, Any], step: Step) -> dict[str, Any]:
    prompt, completion = usage(body, step)
    return {
        "id": "msg_peer", "type": "message", "role": "assistant", "model": body.get("model"), "content": blocks(step),
        "stop_reason": "tool_use" if step.tool_calls else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": prompt, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                  "output_tokens": completion, "service_tier": "standard"},
    }


def events(body: dict[str, Any], step: Step) -> list[tuple[str, dict[str, Any]]]:
    prompt, completion = usage(body, step)
    start = {**message(body, Step()), "content": [], "stop_reason": None}
    start["usage"] = {**start["usage"], "input_tokens": prompt, "output_tokens": 1}
    out: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(blocks(step)):
        if block["type"] == "text":
            out.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                 "content_block": {"type": "text", "text": ""}}))
            if index == 0:
                out.append(("ping", {"type": "ping"}))
            for i in range(0, len(block["text"]), 3):
                out.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                    "delta": {"type": "text_delta", "text": block["text"][i:i + 3]}}))
        else:
            out.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                 "content_block": {**block, "input": {}}}))
            if index == 0:
                out.append(("ping", {"type": "ping"}))
            raw = json.dumps(block["input"])
            out.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "input_json_delta", "partial_json": ""}}))
            for i in range(0, len(raw), 5):
                out.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                    "delta": {"type": "input_json_delta", "partial_json": raw[i:i + 5]}}))
        out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": "tool_use" if step.tool_calls else "end_turn", "stop_sequence": None},
                                  "usage": {"output_tokens": completion}}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


def sse(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: ".encode() + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"


def respond_messages(conn: Connection, request: Request, step: Step, models: tuple[str, ...], api_key: str | None,
                     answering: Any) -> bool:
    """One /v1/messages answer (used by AnthropicPeer and by the parity peer)."""
    if api_key is not None and request.headers.get("x-api-key") != api_key:
        conn.whole(401, "application/json", _bytes(error_body(401, "invalid x-api-key")))
        return True
    body = request.json
    if body.get("model") not in models:
        conn.whole(404, "application/json", _bytes(error_body(404, f"model: {body.get('model')}")))
        return True
    if step.kind == "status":
        payload = step.body if isinstance(step.body, bytes) else _bytes(step.body or error_body(step.status, "error"))
        conn.whole(step.status, "application/json", payload, step.headers)
        return True
    if not body.get("stream"):
        conn.whole(200, "application/json", _bytes(message(body, step)))
        return True
    conn.head(200, {"Content-Type": "text/event-stream; charset=utf-8", "Transfer-Encoding": "chunked", "Cache-Control": "no-cache"})
    answering.set()
    stream = events(body, step)
    if step.kind == "cut":
        stream = stream[: max(2, len(stream) // 2)]
    elif step.kind == "overloaded":  # an error event in the middle of a stream
        stream = stream[:2] + [("error", error_body(529, "Overloaded"))]
    for kind, data in stream:
        conn.chunk(sse(kind, data))
    if step.kind == "cut":
        return False
    conn.end_chunks()
    return True


def _bytes(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


class AnthropicPeer(PeerServer):
    """Speaks the Messages API; `model` is the model it knows (or a tuple of them)."""

    def __init__(self, script: list[Step] | None = None, policy: Any = None, model: str | tuple[str, ...] = "claude-peer",
                 api_key: str | None = None) -> None:
        super().__init__(script, policy)
        self.model = model
        self.api_key = api_key

    def respond(self, conn: Connection, request: Request, step: Step) -> bool:
        if request.path != "/v1/messages":
            conn.whole(404, "application/json", _bytes(error_body(404, f"Not found: {request.path}")))
            return True
        models = self.model if isinstance(self.model, tuple) else (self.model,)
        return respond_messages(conn, request, step, models, self.api_key, self.answering)
