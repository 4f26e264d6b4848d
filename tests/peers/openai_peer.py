"""A Chat Completions peer: POST /v1/chat/completions as the OpenAI API reference documents it.

Streamed replies are server-sent events (`data: {chunk}` lines, a blank line after each, then
`data: [DONE]`) with chunked transfer encoding; tool calls are split across deltas by index;
usage comes in a last chunk with empty `choices` when `stream_options.include_usage` is set.
Run as a module it serves a policy forever (for benchmarks and CLI tests):
`python -m tests.peers.openai_peer --rounds N` answers with a Calculator call until the request
holds N tool results, then with a final answer; it prints its URL on the first line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from . import openai_responses
from .http_peer import FILL, Connection, PeerServer, Request, Step, compact_json

CREATED = 1_700_000_000


class OpenAIPeer(PeerServer):
    """Speaks the Chat Completions protocol and the Responses API (/v1/responses); `model` is the
    only model it knows (or a tuple of the models it knows)."""

    def __init__(self, script: list[Step] | None = None, policy: Any = None, model: str | tuple[str, ...] = "peer-model",
                 api_key: str | None = None, token_delay: float = 0.0, send_usage: bool = True,
                 keep_requests: bool = True) -> None:
        super().__init__(script, policy, keep_requests)
        self.send_usage = send_usage
        self.model = model
        self.api_key = api_key
        self.token_delay = token_delay
        self._chunk_heads: dict[str, bytes] = {}

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def respond(self, conn: Connection, request: Request, step: Step) -> bool:
        if request.method == "GET" and request.path == "/v1/models":
            return self._models(conn, request)
        if request.path not in ("/v1/chat/completions", "/v1/responses"):
            conn.whole(404, "application/json", self.json_bytes({"error": {"message": f"Unknown path {request.path}"}}))
            return True
        if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
            given = request.headers.get("authorization", "").removeprefix("Bearer ")
            error = {"message": f"Incorrect API key provided: {given}.", "type": "invalid_request_error",
                     "param": None, "code": "invalid_api_key"}
            conn.whole(401, "application/json", self.json_bytes({"error": error}))
            return True
        body = request.json
        if body.get("model") not in (self.model if isinstance(self.model, tuple) else (self.model,)):
            error = {"message": f"The model `{body.get('model')}` does not exist or you do not have access to it.",
                     "type": "invalid_request_error", "param": None, "code": "model_not_found"}
            conn.whole(404, "application/json", self.json_bytes({"error": error}))
            return True
        if step.kind == "status":
            payload = step.body if isinstance(step.body, bytes) else self.json_bytes(step.body or {})
            conn.whole(step.status, "application/json", payload, step.headers)
            return True
        if step.kind == "garbage":
            conn.whole(200, "application/json", b"<html>502 proxy error</html>")
            return True
        if request.path == "/v1/responses":
            return self._responses(conn, body, step)
        if step.kind == "drip":
            conn.drip("text/event-stream" if body.get("stream") else "application/json", step.interval, self.answering)
        if body.get("stream"):
            return self._stream(conn, body, step)
        if step.kind in ("huge", "trickle"):
            prefix, suffix = self.json_bytes(self.completion(body, Step(text="\0"))).split(b"\\u0000")
            if step.kind == "huge":
                conn.whole_huge("application/json", prefix, step.size, suffix)
                return True
            conn.endless("application/json", prefix, b"la ", 0.01, self.answering)  # a JSON body that never ends
        conn.whole(200, "application/json", self.json_bytes(self.completion(body, step)))
        return True

    def _responses(self, conn: Connection, body: dict[str, Any], step: Step) -> bool:
        model = str(body.get("model"))
        if not body.get("stream"):
            conn.whole(200, "application/json", self.json_bytes(openai_responses.response(body, step, model)))
            return True
        conn.head(200, {"Content-Type": "text/event-stream; charset=utf-8", "Transfer-Encoding": "chunked",
                        "Cache-Control": "no-cache"})
        self.answering.set()
        stream = openai_responses.events(body, step, model)
        if step.kind == "cut":
            stream = stream[: max(2, len(stream) // 2)]
        for kind, data in stream:
            conn.chunk(openai_responses.sse(kind, data))
        if step.kind == "cut":
            return False
        conn.end_chunks()
        return True

    def _models(self, conn: Connection, request: Request) -> bool:
        """GET /v1/models: the one model, as OpenAI lists models (a wrong key is a 401 as for chat)."""
        if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
            given = request.headers.get("authorization", "").removeprefix("Bearer ")
            error = {"message": f"Incorrect API key provided: {given}.", "type": "invalid_request_error",
                     "param": None, "code": "invalid_api_key"}
            conn.whole(401, "application/json", self.json_bytes({"error": error}))
            return True
        listing = {"object": "list", "data": [{"id": self.model, "object": "model", "created": CREATED,
                                               "owned_by": "system"}]}
        conn.whole(200, "application/json", self.json_bytes(listing))
        return True

    def usage(self, body: dict[str, Any], step: Step) -> dict[str, int]:
        prompt, completion = step.usage or (len(json.dumps(body["messages"])) // 4, max(1, len(step.text) // 4))
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def completion(self, body: dict[str, Any], step: Step) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": step.text or None, "refusal": None}
        if step.tool_calls:
            message["tool_calls"] = [
                {"id": c.get("id", f"call_{i}"), "type": "function",
                 "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"])}}
                for i, c in enumerate(step.tool_calls)
            ]
        return {
            "id": "chatcmpl-peer", "object": "chat.completion", "created": CREATED, "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if step.tool_calls else "stop"}],
            "usage": self.usage(body, step),
        }

    def _chunk(self, choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> bytes:
        return self._event(self.json_bytes(choices), usage)

    def _event(self, choices: bytes, usage: dict[str, int] | None = None) -> bytes:
        """One `data:` event around `choices` (JSON already): the fields every chunk shares are encoded
        once per model (the same bytes as encoding the whole object, for a fraction of the time per chunk)."""
        model = self.model if isinstance(self.model, str) else self.model[0]
        head = self._chunk_heads.get(model)
        if head is None:
            shared = {"id": "chatcmpl-peer", "object": "chat.completion.chunk", "created": CREATED, "model": model,
                      "system_fingerprint": "fp_peer", "choices": None}
            head = self._chunk_heads[model] = b"data: " + self.json_bytes(shared).removesuffix(b"null}")
        tail = b"}\n\n" if usage is None else b',"usage":' + self.json_bytes(usage) + b"}\n\n"
        return head + choices + tail

    def _delta(self, delta: bytes, reason: bytes = b"null") -> bytes:
        """The event of one delta (JSON already) of choice 0: the bytes of `_chunk` for
        [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}], pieced together."""
        return self._event(b'[{"index":0,"delta":' + delta + b',"logprobs":null,"finish_reason":' + reason + b"}]")

    def chunks(self, body: dict[str, Any], step: Step) -> list[bytes]:
        out = [self._delta(b'{"role":"assistant","content":""}')]
        text = step.text
        for i in range(0, len(text), 3):
            out.append(self._delta(b'{"content":' + compact_json(text[i:i + 3]).encode() + b"}"))
        for index, call in enumerate(step.tool_calls):
            args = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
            first = {"index": index, "id": call.get("id", f"call_{index}"), "type": "function",
                     "function": {"name": call["name"], "arguments": ""}}
            out.append(self._delta(b'{"tool_calls":[' + self.json_bytes(first) + b"]}"))
            part = b'{"tool_calls":[{"index":%d,"function":{"arguments":' % index
            for j in range(0, len(args), 4):
                out.append(self._delta(part + compact_json(args[j:j + 4]).encode() + b"}}]}"))
        reason = b'"tool_calls"' if step.tool_calls else b'"stop"'
        out.append(self._delta(b"{}", reason))
        if self.send_usage and (body.get("stream_options") or {}).get("include_usage"):
            out.append(self._event(b"[]", self.usage(body, step)))
        out.append(b"data: [DONE]\n\n")
        return out

    def _stream(self, conn: Connection, body: dict[str, Any], step: Step) -> bool:
        head = {"Content-Type": "text/event-stream; charset=utf-8", "Transfer-Encoding": "chunked", "Cache-Control": "no-cache"}
        chunks = self.chunks(body, step)
        if step.kind == "reply" and not self.token_delay:  # every event ready at once: one write
            self.answering.set()
            conn.chunked(200, head, chunks)
            return True
        conn.head(200, head)
        self.answering.set()
        if step.kind == "late":  # the head at once, the first byte `interval` seconds later (a long prompt)
            time.sleep(step.interval)
        if step.kind == "huge":  # `size` bytes of text in 64 KiB deltas, then a proper end
            conn.chunk(chunks[0])
            piece = "x" * FILL
            for start in range(0, step.size, FILL):
                conn.chunk(self._chunk([{"index": 0, "delta": {"content": piece[: step.size - start]}, "finish_reason": None}]))
            chunks = chunks[1:]
        if step.kind == "trickle":  # a reply that never ends: tokens until the client goes away
            while True:
                conn.chunk(self._chunk([{"index": 0, "delta": {"content": "la "}, "finish_reason": None}]))
                time.sleep(0.01)
        if step.kind == "cut":  # half the reply, then the connection drops without [DONE]
            for data in chunks[: max(2, len(chunks) // 2)]:
                conn.chunk(data)
            return False
        for data in chunks:
            if self.token_delay:
                time.sleep(self.token_delay)
            conn.chunk(data)
        conn.end_chunks()
        return True


def rounds_policy(rounds: int) -> Any:
    """Calls of the first tool offered (a Calculator) until the conversation holds `rounds` tool
    results, then an answer."""

    def policy(request: Request) -> Step:
        body = request.json
        done = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
        tools = body.get("tools") or [{"function": {"name": "Calculator"}}]
        name = tools[0]["function"]["name"]  # n8n names its Calculator tool "calculator"
        if done < rounds:
            return Step(tool_calls=[{"id": f"call_{done + 1}", "name": name,
                                     "arguments": {"input": f"{done + 1} * 2"}}], usage=(20, 5))
        return Step(text="All done.", usage=(30, 3))

    return policy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--model", default="peer-model")
    args = parser.parse_args()
    # nothing reads the requests of a peer in its own process: kept, they would grow its heap for good
    with OpenAIPeer(policy=rounds_policy(args.rounds), model=args.model, keep_requests=False) as peer:
        print(peer.base_url, flush=True)
        try:
            sys.stdin.read()  # serve until the parent closes our stdin
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
