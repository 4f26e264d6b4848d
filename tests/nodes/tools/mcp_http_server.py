"""A small MCP server over streamable HTTP, built with the SDK's own server API, for the tests.

Run as `python mcp_http_server.py PORT [--no-tools]` to serve on 127.0.0.1:PORT/mcp, or as
`python mcp_http_server.py stdio STARTS_FILE` to speak stdio and note each start in STARTS_FILE.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build(with_tools: bool) -> MCPServer:
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

    return server


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        with open(sys.argv[2], "a", encoding="utf-8") as starts:
            starts.write("start\n")
        build(True).run("stdio")
    else:
        build("--no-tools" not in sys.argv).run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
