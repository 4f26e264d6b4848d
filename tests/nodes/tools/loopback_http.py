"""A loopback HTTP server for the HTTP Request Tool tests: echo, slow, error, huge, endless and redirecting answers."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator
from urllib.parse import parse_qs, urlsplit

import contextlib

HUGE_BYTES = 5 * 1024 * 1024
BIG_BYTES = 50 * 1024 * 1024
DRIPPING = threading.Event()  # set when a /drip or /endless body has begun


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        if parts.path.startswith("/slow"):
            time.sleep(1.5)
            self._send(200, b'{"late": true}')
        elif parts.path.startswith("/status/"):
            code = int(parts.path.rsplit("/", 1)[1])
            self._send(code, b"the thing you asked for is not here " + b"x" * 2000, "text/plain")
        elif parts.path.startswith("/huge") or parts.path.startswith("/big"):
            size = BIG_BYTES if parts.path.startswith("/big") else HUGE_BYTES
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            chunk = b"y" * 65536
            try:
                for _ in range(size // len(chunk)):
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped reading, as it should
        elif parts.path.startswith("/drip") or parts.path.startswith("/endless"):
            # /drip: one byte every 0.2 s; /endless: a body that streams without end
            pause, piece = (0.2, b"z") if parts.path.startswith("/drip") else (0.005, b"z" * 1024)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            DRIPPING.set()
            try:
                while True:
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.flush()
                    time.sleep(pause)
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif parts.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", parse_qs(parts.query)["to"][0])
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            echo = {
                "method": self.command,
                "path": parts.path,
                "query": {k: v[0] for k, v in parse_qs(parts.query).items()},
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": json.loads(body) if body else None,
            }
            self._send(200, json.dumps(echo).encode())

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


@contextlib.contextmanager
def serve() -> Iterator[str]:
    """A server on 127.0.0.1 on a free port for the block; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
