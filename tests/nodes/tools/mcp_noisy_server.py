"""A stdio MCP server that also prints lines that are not JSON-RPC to its stdout, for the tests.

`python mcp_noisy_server.py before`: three stray lines (a banner, a print left in, a blank
line's worth of noise), then the test server of mcp_http_server.py over stdio.
`python mcp_noisy_server.py only`: answers every line it reads with a stray line, never JSON.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    if sys.argv[1] == "only":
        for line in sys.stdin:
            print(f"I do not speak JSON, you said {len(line)} bytes", flush=True)
    else:
        print("Starting noisy server v1.0 ...", flush=True)
        print("DEBUG: loaded 3 tools", flush=True)
        print("{not json at all", flush=True)
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        from mcp_http_server import build

        build(True).run("stdio")
