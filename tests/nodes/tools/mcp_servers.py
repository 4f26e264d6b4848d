"""Start the test MCP server over HTTP in a subprocess on a free loopback port."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

SERVER = Path(__file__).with_name("mcp_http_server.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_listening(port: int, process: subprocess.Popen[bytes], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the test MCP server exited with code {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"the test MCP server did not listen on port {port} within {seconds} s")


@contextlib.contextmanager
def http_mcp_server(*extra: str) -> Iterator[str]:
    """The endpoint URL of a running test server; the process is stopped afterwards."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(port), *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait_listening(port, process)
        yield f"http://127.0.0.1:{port}/{'sse' if '--sse' in extra else 'mcp'}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
