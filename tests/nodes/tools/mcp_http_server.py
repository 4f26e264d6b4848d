"""A small MCP server over streamable HTTP, built with the SDK's own server API, for the tests.

Run as `python mcp_http_server.py PORT [--no-tools] [--sse] [--require NAME=VALUE ...]` to serve
on 127.0.0.1:PORT/mcp (or /sse with --sse), answering 401 to any request that lacks each required
header (as a server behind an API gateway does), or as `python mcp_http_server.py stdio STARTS_FILE` to speak stdio, note
each start's process id in STARTS_FILE and offer a slow `wait` tool that notes its start there.
"""

from __future__ import annotations

import os
import sys

import anyio

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build(with_tools: bool, starts_file: str | None = None) -> MCPServer:
    server = MCPServer("mini-n8n test server")
    if with_tools:

        @server.tool(description="Add two integers")
        def add(a: int, b: int) -> str:
            return str(a + b)

        @server.tool(description="Shout a word back in capitals")
        def shout(word: str) -> str:
            return word.upper() + "!"

        @server.tool(description="Always fails")
        def explode(reason: str) -> str:
            raise ToolError(f"exploded because {reason}")

    if starts_file is not None:

        @server.tool(description="Wait some seconds")
        async def wait(seconds: float) -> str:
            with open(starts_file, "a", encoding="utf-8") as notes:
                notes.write("waiting\n")
            await anyio.sleep(seconds)
            return "waited"

    return server


def guarded(app, required: dict[str, str]):
    """The ASGI app behind a check: every request must carry each required header with its value."""

    async def guard(scope, receive, send):
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            if any(headers.get(name.lower()) != value for name, value in required.items()):
                body = b'{"error":"unauthorized"}'
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guard


def serve_guarded(server: MCPServer, port: int, sse: bool, required: dict[str, str]) -> None:
    import uvicorn

    app = server.sse_app(host="127.0.0.1") if sse else server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(guarded(app, required), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    required = dict(arg.split("=", 1) for i, arg in enumerate(sys.argv) if i and sys.argv[i - 1] == "--require")
    if required:
        serve_guarded(build(True), int(sys.argv[1]), "--sse" in sys.argv, required)
    elif sys.argv[1] == "stdio":
        with open(sys.argv[2], "a", encoding="utf-8") as starts:
            starts.write(f"start {os.getpid()}\n")
        build(True, starts_file=sys.argv[2]).run("stdio")
    elif "--sse" in sys.argv:
        build(True).run("sse", host="127.0.0.1", port=int(sys.argv[1]))
    else:
        build("--no-tools" not in sys.argv).run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
