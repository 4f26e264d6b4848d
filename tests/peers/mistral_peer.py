"""A Mistral chat completions peer: POST /v1/chat/completions as Mistral's API reference documents it.

Close to OpenAI's, with Mistral's own ways: tool-call ids are 9 letters and digits; a streamed
tool call comes whole in one delta, in the chunk that carries `finish_reason`; the last chunk
carries the usage (no `stream_options`); the stream ends with `data: [DONE]`. A reply's
message has `tool_calls: null` when it calls nothing. The key is a Bearer token; errors are
Mistral's: `{"message": "Unauthorized", "request_id": ...}` for a wrong key, `{"object": "error",
"message": "Invalid model: ...", "type": "invalid_model", "param": null, "code": "1500"}` (400)
for an unknown model, a 422 with the validation details for a malformed body.
"""

from __future__ import annotations

import json
from typing import Any

from .http_peer import Connection, PeerServer, Request, Step

CREATED = 1_711_977_238
REQUEST_ID = "0d1f2e3c4b5a69788796a5b4c3d2e1f0"
_JSON = "application/json"


def _arguments(call: dict[str, Any]) -> str:
    return call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])


def tool_calls(step: Step) -> list[dict[str, Any]]:
    return [{"id": call.get("id", f"peer{i:05d}"), "function": {"name": call["name"], "arguments": _arguments(call)}, "index": i}
            for i, call in enumerate(step.tool_calls)]


def usage(body: dict[str, Any], step: Step) -> dict[str, int]:
    prompt, completion = step.usage or (len(json.dumps(body.get("messages"))) // 4, max(1, len(step.text) // 4))
    return {"prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion}


def completion(body: dict[str, Any], step: Step) -> dict[str, Any]:
    message = {"role": "assistant", "tool_calls": tool_calls(step) or None, "content": step.text}
    return {"id": "cf79f7daaee244b1a0ae5c7b1444424a", "object": "chat.completion", "created": CREATED,
            "model": body.get("model"), "choices": [{"index": 0, "message": message,
                                                     "finish_reason": "tool_calls" if step.tool_calls else "stop"}],
            "usage": usage(body, step)}


def chunks(body: dict[str, Any], step: Step) -> list[dict[str, Any]]:
    head = {"id": "cf79f7daaee244b1a0ae5c7b1444424a", "object": "chat.completion.chunk", "created": CREATED,
            "model": body.get("model")}
    out = [{**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    for i in range(0, len(step.text), 4):
        out.append({**head, "choices": [{"index": 0, "delta": {"content": step.text[i:i + 4]}, "finish_reason": None}]})
    last: dict[str, Any] = {"tool_calls": tool_calls(step)} if step.tool_calls else {"content": ""}
    out.append({**head, "choices": [{"index": 0, "delta": last, "finish_reason": "tool_calls" if step.tool_calls else "stop"}],
                "usage": usage(body, step)})
    return out


def _bytes(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def invalid_model(model: Any) -> dict[str, Any]:
    return {"object": "error", "message": f"Invalid model: {model}", "type": "invalid_model", "param": None, "code": "1500"}


class MistralPeer(PeerServer):
    """Speaks Mistral's chat completions; `model` is the model it knows (or a tuple of them)."""

    def __init__(self, script: list[Step] | None = None, policy: Any = None, model: str | tuple[str, ...] = "mistral-peer",
                 api_key: str | None = None) -> None:
        super().__init__(script, policy)
        self.model = model
        self.api_key = api_key

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def respond(self, conn: Connection, request: Request, step: Step) -> bool:
        if request.method == "GET" and request.path == "/v1/models":
            if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
                conn.whole(401, _JSON, _bytes({"message": "Unauthorized", "request_id": REQUEST_ID}))
                return True
            models = self.model if isinstance(self.model, tuple) else (self.model,)
            conn.whole(200, _JSON, _bytes({"object": "list", "data": [
                {"id": m, "object": "model", "created": CREATED, "owned_by": "mistralai"} for m in models]}))
            return True
        if request.path != "/v1/chat/completions":
            conn.whole(404, _JSON, _bytes({"detail": "Not Found"}))
            return True
        if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
            conn.whole(401, _JSON, _bytes({"message": "Unauthorized", "request_id": REQUEST_ID}))
            return True
        body = request.json
        if not isinstance(body, dict) or "messages" not in body:
            detail = [{"type": "missing", "loc": ["body", "messages"], "msg": "Field required", "input": body}]
            conn.whole(422, _JSON, _bytes({"object": "error", "message": {"detail": detail}, "type": "invalid_request_error",
                                           "param": None, "code": None}))
            return True
        if body.get("model") not in (self.model if isinstance(self.model, tuple) else (self.model,)):
            conn.whole(400, _JSON, _bytes(invalid_model(body.get("model"))))
            return True
        if step.kind == "status":
            payload = step.body if isinstance(step.body, bytes) else _bytes(step.body or {"message": "error"})
            conn.whole(step.status, _JSON, payload, step.headers)
            return True
        if not body.get("stream"):
            conn.whole(200, _JSON, _bytes(completion(body, step)))
            return True
        conn.head(200, {"Content-Type": "text/event-stream; charset=utf-8", "Transfer-Encoding": "chunked",
                        "Cache-Control": "no-cache"})
        self.answering.set()
        stream = chunks(body, step)
        if step.kind == "cut":
            stream = stream[:-1]
        for chunk in stream:
            conn.chunk(b"data: " + _bytes(chunk) + b"\n\n")
        if step.kind == "cut":
            return False
        conn.chunk(b"data: [DONE]\n\n")
        conn.end_chunks()
        return True
