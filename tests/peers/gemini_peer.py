"""A Gemini API peer: POST /v1beta/models/<model>:generateContent and :streamGenerateContent as
Google's API reference documents them (and as the API writes them).

A reply is a GenerateContentResponse: `candidates[0].content` (`role: model`, `parts`: a text part
and one `functionCall` part per tool call), `finishReason: STOP`, `usageMetadata`
(promptTokenCount, candidatesTokenCount, totalTokenCount), `modelVersion`, `responseId`; written
indented, as the API does. Streamed (`?alt=sse`) it is server-sent events, one `data: {...}`
line per chunk ending in CRLF CRLF, each chunk a whole response with some of the text; the last
carries `finishReason` and the usage; the body then ends (no end marker). The key is the
`x-goog-api-key` header (or `?key=`); a wrong key is a 400 INVALID_ARGUMENT, as the API answers.
Errors are `{"error": {"code", "message", "status"}}`.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .http_peer import Connection, PeerServer, Request, Step

_PATH = re.compile(r"^/v1beta/(?P<model>(?:models|tunedModels)/[^:]+):(?P<task>generateContent|streamGenerateContent)$")
_STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
           500: "INTERNAL", 503: "UNAVAILABLE"}


def error_body(status: int, message: str, details: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}
    if details is not None:
        error["details"] = details
    return {"error": error}


def bad_key() -> dict[str, Any]:
    return error_body(400, "API key not valid. Please pass a valid API key.", [
        {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com",
         "metadata": {"service": "generativelanguage.googleapis.com"}}])


def indented(doc: Any) -> bytes:
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


def _args(call: dict[str, Any]) -> Any:
    return json.loads(call["arguments"]) if isinstance(call["arguments"], str) else call["arguments"]


def usage(body: dict[str, Any], step: Step) -> dict[str, Any]:
    prompt, completion = step.usage or (len(json.dumps(body.get("contents"))) // 4, max(1, len(step.text) // 4))
    return {"promptTokenCount": prompt, "candidatesTokenCount": completion, "totalTokenCount": prompt + completion,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}]}


def parts(step: Step, call_ids: bool = False) -> list[dict[str, Any]]:
    """The reply's parts; `call_ids`: each functionCall carries the call's id (the API's optional
    field, which LangChain uses when given: recordings then have no random ids)."""
    out: list[dict[str, Any]] = [{"text": step.text}] if step.text or not step.tool_calls else []
    for call in step.tool_calls:
        function = {"name": call["name"], "args": _args(call)}
        if call_ids and call.get("id"):
            function["id"] = call["id"]
        out.append({"functionCall": function})
    return out


def response(model: str, body: dict[str, Any], step: Step, call_ids: bool = False) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"parts": parts(step, call_ids), "role": "model"}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": usage(body, step),
        "modelVersion": model.removeprefix("models/"),
        "responseId": "peer-response",
    }


def chunks(model: str, body: dict[str, Any], step: Step, call_ids: bool = False) -> list[dict[str, Any]]:
    """The stream: the text in pieces of 4 characters, the calls whole with the last piece."""
    pieces = [step.text[i:i + 4] for i in range(0, len(step.text), 4)] or [""]
    out = []
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        chunk_parts = ([{"text": piece}] if piece or not step.tool_calls else []) + \
            (parts(Step(tool_calls=step.tool_calls), call_ids)[-len(step.tool_calls):] if last and step.tool_calls else [])
        candidate: dict[str, Any] = {"content": {"parts": chunk_parts, "role": "model"}}
        if last:
            candidate["finishReason"] = "STOP"
        candidate["index"] = 0
        chunk: dict[str, Any] = {"candidates": [candidate]}
        u = usage(body, step)
        chunk["usageMetadata"] = u if last else {"promptTokenCount": u["promptTokenCount"],
                                                 "totalTokenCount": u["promptTokenCount"]}
        chunk["modelVersion"] = model.removeprefix("models/")
        chunk["responseId"] = "peer-response"
        out.append(chunk)
    return out


def sse(chunk: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(chunk, separators=(",", ": "), ensure_ascii=False).encode() + b"\r\n\r\n"


def respond_generate_content(conn: Connection, request: Request, step: Step, models: tuple[str, ...],
                             api_key: str | None, answering: Any, call_ids: bool = False) -> bool:
    """One generateContent answer (used by GeminiPeer and by the parity peer)."""
    url = urlsplit(request.path)
    match = _PATH.match(url.path)
    json_type = "application/json; charset=UTF-8"
    if request.method != "POST" or match is None:
        conn.whole(404, "text/html; charset=UTF-8", b"<!DOCTYPE html>\n<title>Error 404 (Not Found)!!1</title>")
        return True
    given = request.headers.get("x-goog-api-key") or (parse_qs(url.query).get("key") or [None])[0]
    if api_key is not None and given != api_key:
        conn.whole(400, json_type, indented(bad_key()))
        return True
    model = match.group("model")
    if model.removeprefix("models/") not in models:
        message = (f"{model} is not found for API version v1beta, or is not supported for {match.group('task')}. "
                   "Call ListModels to see the list of available models and their supported methods.")
        conn.whole(404, json_type, indented(error_body(404, message)))
        return True
    if step.kind == "status":
        payload = step.body if isinstance(step.body, bytes) else indented(step.body or error_body(step.status, "error"))
        conn.whole(step.status, json_type, payload, step.headers)
        return True
    body = request.json
    streamed = match.group("task") == "streamGenerateContent"
    if not streamed:
        conn.whole(200, json_type, indented(response(model, body, step, call_ids)))
        return True
    sse_mode = parse_qs(url.query).get("alt") == ["sse"]
    if not sse_mode:  # without alt=sse the stream is one JSON array
        conn.whole(200, json_type, indented(chunks(model, body, step, call_ids)))
        return True
    conn.head(200, {"Content-Type": "text/event-stream", "Transfer-Encoding": "chunked",
                    "Content-Disposition": "attachment"})
    answering.set()
    stream = chunks(model, body, step, call_ids)
    if step.kind == "cut":
        stream = [{**c, "candidates": [{k: v for k, v in c["candidates"][0].items() if k != "finishReason"}]}
                  for c in stream[: max(1, len(stream) // 2)]]
    elif step.kind == "overloaded":  # an error in the middle of a stream
        stream = stream[:1] + [error_body(503, "The model is overloaded. Please try again later.")]
    for chunk in stream:
        conn.chunk(sse(chunk))
    if step.kind == "cut":
        return False
    conn.end_chunks()
    return True


class GeminiPeer(PeerServer):
    """Speaks the Gemini API; `model` is the model it knows (or a tuple of them), without `models/`."""

    def __init__(self, script: list[Step] | None = None, policy: Any = None, model: str | tuple[str, ...] = "gemini-peer",
                 api_key: str | None = None) -> None:
        super().__init__(script, policy)
        self.model = model
        self.api_key = api_key

    def respond(self, conn: Connection, request: Request, step: Step) -> bool:
        models = self.model if isinstance(self.model, tuple) else (self.model,)
        if request.method == "GET" and urlsplit(request.path).path == "/v1beta/models":
            if self.api_key is not None and request.headers.get("x-goog-api-key") != self.api_key:
                conn.whole(400, "application/json; charset=UTF-8", indented(bad_key()))
                return True
            listing = {"models": [{"name": f"models/{m}", "displayName": m, "supportedGenerationMethods":
                                   ["generateContent", "countTokens"]} for m in models]}
            conn.whole(200, "application/json; charset=UTF-8", indented(listing))
            return True
        return respond_generate_content(conn, request, step, models, self.api_key, self.answering)
