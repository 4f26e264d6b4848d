"""An Ollama peer: POST /api/chat as Ollama's API documentation describes it.

Streamed replies are NDJSON (one JSON object per line, `application/x-ndjson`, chunked); tool
calls arrive whole in a message's `tool_calls` with object arguments; the last line has
`done: true`, `done_reason` and the counts `prompt_eval_count` / `eval_count`.
"""

from __future__ import annotations

import time
from typing import Any

from .http_peer import FILL, Connection, PeerServer, Request, Step

CREATED_AT = "2025-01-01T00:00:00.000000Z"


class OllamaPeer(PeerServer):
    def __init__(self, script: list[Step] | None = None, policy: Any = None, model: str = "llama3.2") -> None:
        super().__init__(script, policy)
        self.model = model

    def respond(self, conn: Connection, request: Request, step: Step) -> bool:
        if request.method == "GET" and request.path == "/api/tags":  # the local models, as Ollama lists them
            tag = self.model if ":" in self.model else f"{self.model}:latest"
            listing = {"models": [{"name": tag, "model": tag, "modified_at": "2025-01-01T00:00:00Z", "size": 2019393189,
                                   "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
                                   "details": {"parent_model": "", "format": "gguf", "family": "llama",
                                               "families": ["llama"], "parameter_size": "3.2B",
                                               "quantization_level": "Q4_K_M"}}]}
            conn.whole(200, "application/json; charset=utf-8", self.json_bytes(listing))
            return True
        if request.path != "/api/chat":
            conn.whole(404, "text/plain; charset=utf-8", b"404 page not found")
            return True
        body = request.json
        if body.get("model") != self.model:
            error = {"error": f'model "{body.get("model")}" not found, try pulling it first'}
            conn.whole(404, "application/json; charset=utf-8", self.json_bytes(error))
            return True
        if step.kind == "status":
            payload = step.body if isinstance(step.body, bytes) else self.json_bytes(step.body or {})
            conn.whole(step.status, "application/json; charset=utf-8", payload, step.headers)
            return True
        if step.kind == "garbage":
            conn.whole(200, "application/json; charset=utf-8", b"Internal proxy failure")
            return True
        if step.kind == "drip":
            conn.drip("application/x-ndjson" if body.get("stream", True) else "application/json", step.interval, self.answering)
        if body.get("stream", True):
            return self._stream(conn, body, step)
        prefix, suffix = self.json_bytes(self.whole_reply(body, Step(text="\0"))).split(b"\\u0000")
        if step.kind == "huge":
            conn.whole_huge("application/json; charset=utf-8", prefix, step.size, suffix)
            return True
        if step.kind == "trickle":  # a JSON body that never ends
            conn.endless("application/json; charset=utf-8", prefix, b"la ", 0.01, self.answering)
        conn.whole(200, "application/json; charset=utf-8", self.json_bytes(self.whole_reply(body, step)))
        return True

    def _message(self, content: str, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = [{"function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
        return message

    def _final(self, body: dict[str, Any], step: Step, message: dict[str, Any]) -> dict[str, Any]:
        prompt, completion = step.usage or (len(str(body["messages"])) // 4, max(1, len(step.text) // 4))
        return {"model": self.model, "created_at": CREATED_AT, "message": message, "done_reason": "stop",
                "done": True, "total_duration": 5_000_000, "load_duration": 1_000_000,
                "prompt_eval_count": prompt, "prompt_eval_duration": 1_000_000,
                "eval_count": completion, "eval_duration": 3_000_000}

    def whole_reply(self, body: dict[str, Any], step: Step) -> dict[str, Any]:
        return self._final(body, step, self._message(step.text, step.tool_calls))

    def lines(self, body: dict[str, Any], step: Step) -> list[bytes]:
        out = []
        for i in range(0, len(step.text), 3):
            line = {"model": self.model, "created_at": CREATED_AT, "message": self._message(step.text[i:i + 3]), "done": False}
            out.append(self.json_bytes(line) + b"\n")
        if step.tool_calls:
            line = {"model": self.model, "created_at": CREATED_AT, "message": self._message("", step.tool_calls), "done": False}
            out.append(self.json_bytes(line) + b"\n")
        out.append(self.json_bytes(self._final(body, step, self._message(""))) + b"\n")
        return out

    def _stream(self, conn: Connection, body: dict[str, Any], step: Step) -> bool:
        conn.head(200, {"Content-Type": "application/x-ndjson", "Transfer-Encoding": "chunked"})
        self.answering.set()
        if step.kind == "trickle":
            while True:
                line = {"model": self.model, "created_at": CREATED_AT, "message": self._message("la "), "done": False}
                conn.chunk(self.json_bytes(line) + b"\n")
                time.sleep(0.01)
        if step.kind == "huge":  # one line of `size` bytes of text, then the final line
            line = {"model": self.model, "created_at": CREATED_AT, "message": self._message("\0"), "done": False}
            prefix, suffix = self.json_bytes(line).split(b"\\u0000")
            conn.sock.sendall(f"{len(prefix) + step.size + len(suffix) + 1:x}\r\n".encode() + prefix)
            for start in range(0, step.size, FILL):
                conn.sock.sendall(b"x" * min(FILL, step.size - start))
            conn.sock.sendall(suffix + b"\n\r\n")
            step = Step(usage=step.usage)
        lines = self.lines(body, step)
        if step.kind == "cut":
            for data in lines[: max(1, len(lines) - 1)]:
                conn.chunk(data)
            return False
        if step.kind == "midstream-error":
            conn.chunk(lines[0])
            conn.chunk(self.json_bytes({"error": "an error was encountered while running the model"}) + b"\n")
            conn.end_chunks()
            return True
        for data in lines:
            conn.chunk(data)
        conn.end_chunks()
        return True
