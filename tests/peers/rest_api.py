"""A small REST API for the HTTP Request node, byte for byte over a loopback socket: both n8n (when
recording the parity corpus) and mini-n8n call it, so what each sent and read can be compared.

- `/api/echo...`: 200, JSON of what arrived: method, path, the raw query string, the headers
  (transport headers such as host, user-agent and content-length left out), the body as text
  (a multipart body as its fields, its boundary left out, since that is random)
- `/api/status/<code>`: that status with `{"error": {"message": "No item with that id", "code": 4711}}`,
  or with `?body=text` a text body, `?body=plain-json` `{"detail": 7}`, `?body=empty` none
- `/api/items?page=N`: pages 1–3 of `{"items": [...], "page": N, "next": <URL of page N+1>}` (the
  last page has no `next`), after that `{"items": [], "page": N}`
- `/api/list?page=N`: a JSON array of two items for pages 1–3, `[]` after
- `/api/text`: `text/plain` words; `/api/html`: an HTML page; `/api/empty`: 200 with no body;
  `/api/file`: a PDF
- `/api/redirect?to=<path>`: 302 to that path
- `/api/slow?ms=N`: `{"slow": true}` after N milliseconds
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .http_peer import Connection, PeerServer, Request, Step

TRANSPORT_HEADERS = ("host", "user-agent", "accept-encoding", "connection", "content-length", "transfer-encoding")
PAGES = 3


def _json(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def _multipart_fields(content_type: str, body: bytes) -> dict[str, str]:
    boundary = content_type.split("boundary=", 1)[1].strip('"')
    fields: dict[str, str] = {}
    for part in body.split(b"--" + boundary.encode())[1:]:
        if part.startswith(b"--"):
            break
        head, _, value = part.strip(b"\r\n").partition(b"\r\n\r\n")
        name = head.decode().split('name="', 1)[1].split('"', 1)[0]
        fields[name] = value.decode()
    return fields


def echo(request: Request) -> dict[str, Any]:
    parts = urlsplit(request.path)
    headers = {k: v for k, v in sorted(request.headers.items()) if k not in TRANSPORT_HEADERS}
    content_type = headers.get("content-type", "")
    body: Any = request.body.decode("utf-8", errors="replace") if request.body else None
    if content_type.startswith("multipart/form-data"):
        headers["content-type"] = "multipart/form-data; boundary=…"
        body = _multipart_fields(content_type, request.body)
    return {"method": request.method, "path": parts.path, "query": parts.query, "headers": headers, "body": body}


def answer(request: Request) -> tuple[int, str, bytes, dict[str, str]]:
    """(status, content type, body, extra headers) of the API's answer to `request`."""
    parts = urlsplit(request.path)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    path = parts.path
    origin = f"http://{request.headers.get('host', '127.0.0.1')}"
    if path.startswith("/api/echo"):
        return 200, "application/json; charset=utf-8", _json(echo(request)), {"X-Echo": "yes"}
    if path.startswith("/api/status/"):
        code = int(path.rsplit("/", 1)[1])
        kind = query.get("body", "json")
        if kind == "text":
            return code, "text/plain; charset=utf-8", b"Nothing here by that name", {}
        if kind == "plain-json":
            return code, "application/json", _json({"detail": 7}), {}
        if kind == "empty":
            return code, "text/plain", b"", {}
        return code, "application/json", _json({"error": {"message": "No item with that id", "code": 4711}}), {}
    if path in ("/api/items", "/api/list"):
        page = int(query.get("page", "1"))
        rows = [{"id": (page - 1) * 2 + n, "page": page} for n in (1, 2)] if page <= PAGES else []
        if path == "/api/list":
            return 200, "application/json", _json(rows), {}
        doc: dict[str, Any] = {"items": rows, "page": page}
        if page < PAGES:
            doc["next"] = f"{origin}/api/items?page={page + 1}"
        return 200, "application/json", _json(doc), {}
    if path == "/api/text":
        return 200, "text/plain; charset=utf-8", "plain words, ünïcode".encode(), {}
    if path == "/api/html":
        return 200, "text/html", b"<html><body><p>Hello</p></body></html>", {}
    if path == "/api/file":
        return 200, "application/pdf", b"%PDF-1.4 not really", {}
    if path == "/api/empty":
        return 200, "application/json", b"", {}
    if path == "/api/slow":
        time.sleep(int(query.get("ms", "1000")) / 1000.0)
        return 200, "application/json", _json({"slow": True}), {}
    if path == "/api/redirect":
        return 302, "text/plain", b"", {"Location": query.get("to", "/api/echo")}
    return 404, "application/json", _json({"message": f"Unknown path {path}"}), {}


def respond(conn: Connection, request: Request) -> bool:
    status, content_type, body, extra = answer(request)
    conn.whole(status, content_type, body, extra)
    return True


class RestPeer(PeerServer):
    """The API alone, on its own loopback port; `requests` holds what arrived."""

    def __init__(self) -> None:
        super().__init__(policy=lambda request: Step())

    def respond(self, conn: Connection, request: Request, step: Step) -> bool:
        return respond(conn, request)
