"""A small threaded HTTP/1.1 server for protocol peers: raw bytes out, every request recorded.

Subclasses turn a scripted step into the bytes of one response. Steps are taken in order from
`script`; when it is empty, `policy(request)` decides (a peer that answers forever). Responses
are written by hand (status line, headers, chunked body) so a peer can also misbehave on
purpose: hang, cut a stream mid-reply, send text that is not JSON.
"""

from __future__ import annotations

import functools
import json
import socket
import socketserver
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import orjson

DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x78 for byte in range(256))  # any digit a 0, any other byte an x
LONG_NUMBER = b"0" * 20
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @functools.cached_property
    def json(self) -> Any:
        """The body parsed, once: the policy and the response both read it. orjson reads it unless
        it refuses it or it may hold an integer past 64 bits (orjson reads those as floats)."""
        body = self.body or b"null"
        if LONG_NUMBER not in body.translate(DIGITS):
            try:
                return orjson.loads(body)
            except orjson.JSONDecodeError:
                pass
        return json.loads(body)


@dataclass
class Step:
    """One scripted response. kind: reply | status | hang | cut | garbage | trickle | drip | huge | late.

    drip: the response begins, then one byte every `interval` seconds, forever.
    huge: a well-formed reply whose text is `size` bytes long.
    late: a streamed reply whose first byte comes `interval` seconds after its head.
    """

    kind: str = "reply"
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: tuple[int, int] | None = None
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    interval: float = 0.0
    size: int = 0


FILL = 65536  # bytes of text per piece of a huge reply
# json.dumps(doc, separators=(",", ":")) without building an encoder per call (a streamed reply encodes many pieces)
compact_json = json.JSONEncoder(separators=(",", ":")).encode


class Connection:
    """Writes one response on a socket, chunk by chunk."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # answer at once, as servers do

    @staticmethod
    def _head(status: int, headers: dict[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def head(self, status: int, headers: dict[str, str]) -> None:
        self.sock.sendall(self._head(status, headers))

    def whole(self, status: int, content_type: str, body: bytes, extra: dict[str, str] | None = None) -> None:
        headers = {"Content-Type": content_type, "Content-Length": str(len(body)), **(extra or {})}
        self.sock.sendall(self._head(status, headers) + body)

    def chunk(self, data: bytes) -> None:
        self.sock.sendall(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def end_chunks(self) -> None:
        self.sock.sendall(b"0\r\n\r\n")

    def chunked(self, status: int, headers: dict[str, str], pieces: list[bytes]) -> None:
        """A whole chunked response in one write: the bytes of `head`, `chunk` for each piece and
        `end_chunks` (a reply whose every piece is ready, as a fast server's is)."""
        frames = [self._head(status, headers)]
        for data in pieces:
            frames += (f"{len(data):x}\r\n".encode(), data, b"\r\n")
        frames.append(b"0\r\n\r\n")
        self.sock.sendall(b"".join(frames))

    def drip(self, content_type: str, interval: float, started: threading.Event) -> None:
        """A chunked response that sends one byte every `interval` seconds until the client leaves."""
        self.head(200, {"Content-Type": content_type, "Transfer-Encoding": "chunked"})
        started.set()
        while True:
            self.chunk(b" ")
            time.sleep(interval)

    def endless(self, content_type: str, prefix: bytes, piece: bytes, interval: float, started: threading.Event) -> None:
        """A chunked response that begins with `prefix`, then repeats `piece` until the client leaves."""
        self.head(200, {"Content-Type": content_type, "Transfer-Encoding": "chunked"})
        started.set()
        self.chunk(prefix)
        while True:
            self.chunk(piece)
            time.sleep(interval)

    def whole_huge(self, content_type: str, prefix: bytes, size: int, suffix: bytes) -> None:
        """One response with a Content-Length whose middle is `size` bytes of text, sent in pieces."""
        self.head(200, {"Content-Type": content_type, "Content-Length": str(len(prefix) + size + len(suffix))})
        self.sock.sendall(prefix)
        piece = b"x" * FILL
        for start in range(0, size, FILL):
            self.sock.sendall(piece[: min(FILL, size - start)])
        self.sock.sendall(suffix)


class PeerServer:
    """Base of the protocol peers; use as a context manager, read `url`, `requests`, `closed`."""

    def __init__(self, script: list[Step] | None = None, policy: Callable[[Request], Step] | None = None,
                 keep_requests: bool = True) -> None:
        self.script: deque[Step] = deque(script or [])
        self.policy = policy
        self.requests: list[Request] = []  # every request, unless `keep_requests` is off (a peer serving forever)
        self.keep_requests = keep_requests
        self.connections = 0  # TCP connections accepted: a client that reuses one keeps this at 1
        self.closed = threading.Event()  # set when a client closed a connection mid-response
        self.answering = threading.Event()  # set when a streamed response has begun
        self._lock = threading.Lock()
        peer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                peer._serve_connection(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> "PeerServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def next_step(self, request: Request) -> Step:
        with self._lock:
            if self.script:
                return self.script.popleft()
        if self.policy is not None:
            return self.policy(request)
        return Step("status", status=500, body={"error": {"message": "the test peer has no scripted reply left"}})

    def _serve_connection(self, sock: socket.socket) -> None:
        reader = sock.makefile("rb")
        conn = Connection(sock)
        with self._lock:
            self.connections += 1
        try:
            while True:
                request = _read_request(reader)
                if request is None:
                    return
                if self.keep_requests:
                    with self._lock:
                        self.requests.append(request)
                step = self.next_step(request)
                if step.kind == "hang":
                    while sock.recv(1024):
                        pass
                    self.closed.set()
                    return
                keep = self.respond(conn, request, step)
                if not keep:
                    return
        except (ConnectionError, BrokenPipeError, OSError):
            self.closed.set()
        finally:
            reader.close()

    def respond(self, conn: Connection, request: Request, step: Step) -> bool:
        """Write the response for `step`; False closes the connection afterwards."""
        raise NotImplementedError

    @staticmethod
    def json_bytes(doc: Any) -> bytes:
        return compact_json(doc).encode()


def _read_request(reader: Any) -> Request | None:
    line = reader.readline()
    if not line:
        return None
    method, path, _version = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        h = reader.readline().decode("latin-1")
        if h in ("\r\n", "\n", ""):
            break
        name, _, value = h.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = reader.read(length) if length else b""
    return Request(method, path, headers, body)
