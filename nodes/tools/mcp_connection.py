"""One short MCP session per operation: connect, initialize, do one thing, close.

The stdio client and the SDK's anyio task groups are entered and left inside one call (one
task), under one deadline, so a broken server can neither hang a run nor leak its process.
Every failure comes out as an McpFailure whose message says what went wrong in user terms.
A stdio server that writes lines other than JSON-RPC to its stdout gets one warning naming it
(the SDK's traceback per line is silenced); the session goes on if real messages follow.
The SDK is imported on first use: it takes about a second to import, and most runs need none.
"""

from __future__ import annotations

import contextlib
import json
import logging
import tempfile
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Literal, TypeVar

if TYPE_CHECKING:
    import mcp.types as mcp_types
    from mcp import ClientSession

T = TypeVar("T")
Transport = Literal["stdio", "httpStreamable", "sse"]
STDERR_TAIL = 500
SHOWN_LINE = 120
log = logging.getLogger(__name__)


class McpFailure(Exception):
    """An MCP server that would not start, answer, or run a tool; the message says which."""


class McpRefused(McpFailure):
    """An HTTP MCP server that answered 401 or 403: the node names the credential it sent."""

    def __init__(self, server: "McpServer", status: int, reason: str) -> None:
        super().__init__(f"{server.url} answered {status} {reason}")
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class McpServer:
    """Where the server is: a command to start (stdio) or an endpoint URL (HTTP transports)."""

    transport: Transport
    url: str = ""
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 60.0
    headers: dict[str, str] = field(default_factory=dict, repr=False)  # authentication: never shown

    def describe(self) -> str:
        if self.transport == "stdio":
            return " ".join([self.command, *self.args])
        return self.url


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups from anyio task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


class _StrayOutput:
    """Lines of a server's stdout that were not JSON-RPC: how many, and the first one."""

    def __init__(self) -> None:
        self.count = 0
        self.first = ""

    async def __call__(self, message: Any) -> None:
        """The session's message handler: the transport hands it each line it could not parse."""
        if isinstance(message, Exception):
            self.count += 1
            if self.count == 1:
                self.first = _bad_line(message)

    def warn(self, server: "McpServer") -> None:
        """When the protocol survived the stray lines: one warning per server and process."""
        if self.count and server.describe() not in _warned:
            _warned.add(server.describe())
            log.warning("The MCP server (%s) answered, but %s; they were ignored", server.describe(), self.describe())

    def describe(self) -> str:
        first = f" (first: {self.first!r})" if self.first else ""
        if self.count == 1:
            return f"it wrote a line to stdout that is not an MCP (JSON-RPC) message{first}"
        return f"it wrote {self.count} lines to stdout that are not MCP (JSON-RPC) messages{first}"


def _bad_line(exc: Exception) -> str:
    """The text of the stdout line a parse error is about (pydantic keeps it), shortened."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        for error in exc.errors():
            if isinstance(error.get("input"), str):
                text = error["input"]
                return text if len(text) <= SHOWN_LINE else text[:SHOWN_LINE] + "…"
    return ""


class _QuietParseErrors(logging.Filter):
    """Drops the SDK's traceback for each unparsable stdout line: the session reports them once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Failed to parse JSONRPC message")


_quiet = _QuietParseErrors()
_warned: set[str] = set()


def _stderr_tail(errlog: IO[str] | None) -> str:
    if errlog is None:
        return ""
    try:
        errlog.seek(0)
        text = errlog.read().strip()
    except (OSError, ValueError):
        return ""
    return text[-STDERR_TAIL:]


class _Refusals:
    """The first 401/403 an HTTP transport got: the SDK reports it as a generic error, if at all."""

    def __init__(self) -> None:
        self.status = 0
        self.reason = ""

    async def __call__(self, response: Any) -> None:
        if response.status_code in (401, 403) and not self.status:
            self.status, self.reason = response.status_code, response.reason_phrase

    def client(self, headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
        """The SDK's HTTP client with its defaults, noting refusals (an McpHttpClientFactory)."""
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        client.event_hooks = {"request": [], "response": [self]}
        return client


@contextlib.asynccontextmanager
async def _streams(server: McpServer, errlog: IO[str], refusals: _Refusals) -> AsyncIterator[Any]:
    from mcp import StdioServerParameters
    from mcp.client.sse import sse_client
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if server.transport == "stdio":
        params = StdioServerParameters(command=server.command, args=server.args, env=server.env or None)
        async with stdio_client(params, errlog=errlog) as streams:
            yield streams
    elif server.transport == "httpStreamable":
        async with refusals.client(headers=dict(server.headers)) as client:
            async with streamable_http_client(server.url, http_client=client) as streams:
                yield streams[0], streams[1]
    else:
        async with sse_client(server.url, headers=dict(server.headers), timeout=server.timeout_s,
                              httpx_client_factory=refusals.client) as streams:
            yield streams[0], streams[1]


def _explain(server: McpServer, exc: BaseException, phase: str, errlog: IO[str], stray: _StrayOutput) -> McpFailure:
    from mcp import MCPError

    leaf = _leaf(exc)
    stderr = _stderr_tail(errlog)
    said = f"; it wrote: {stderr}" if stderr else ""
    if stray.count:
        said = f"; {stray.describe()}{said}"
    where = server.describe()
    if server.transport == "stdio" and isinstance(leaf, FileNotFoundError):
        return McpFailure(f"Could not start the MCP server: the command '{server.command}' was not found")
    if server.transport == "stdio" and isinstance(leaf, PermissionError):
        return McpFailure(f"Could not start the MCP server: the command '{server.command}' cannot be run (permission denied)")
    if isinstance(leaf, TimeoutError):
        return McpFailure(f"The MCP server ({where}) did not answer within {server.timeout_s:g} s while {phase}{said}")
    if isinstance(leaf, MCPError) and "closed" in str(leaf).lower():
        if phase == "starting":
            return McpFailure(f"The MCP server ({where}) exited during start-up{said}")
        return McpFailure(f"The MCP server ({where}) closed the connection while {phase}{said}")
    if phase == "starting" and server.transport != "stdio":
        return McpFailure(f"Could not connect to your MCP server at {where}: {leaf or type(leaf).__name__}")
    return McpFailure(f"The MCP server ({where}) failed while {phase}: {type(leaf).__name__}: {leaf}{said}")


async def with_session(server: McpServer, phase: str, action: Callable[["ClientSession"], Awaitable[T]]) -> T:
    """Open a session, run `action` on it, close it: all in this task and under one deadline."""
    import anyio
    from mcp import ClientSession

    if server.transport == "stdio" and not server.command.strip():
        raise McpFailure("No command is set to start the MCP server")
    if server.transport != "stdio" and not server.url.strip():
        raise McpFailure("No endpoint URL is set for the MCP server")
    logging.getLogger("mcp.client.stdio").addFilter(_quiet)  # the same filter object is added once
    current = "starting"
    stray = _StrayOutput()
    refusals = _Refusals()
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
        try:
            with anyio.fail_after(server.timeout_s):
                async with _streams(server, errlog, refusals) as (read, write):
                    handler = stray if server.transport == "stdio" else None  # stdout lines are stdio's only
                    async with ClientSession(read, write, message_handler=handler) as session:
                        await session.initialize()
                        current = phase
                        result = await action(session)
        except McpFailure:
            stray.warn(server)
            raise
        except Exception as exc:  # noqa: BLE001 - every transport/SDK failure becomes one clear message
            leaf = _leaf(exc)
            if isinstance(leaf, McpFailure):
                stray.warn(server)
                raise leaf from None
            if refusals.status:
                raise McpRefused(server, refusals.status, refusals.reason) from None
            raise _explain(server, exc, current, errlog, stray) from None
    stray.warn(server)
    return result


async def list_tools(server: McpServer) -> list["mcp_types.Tool"]:
    """Every tool the server offers (all pages)."""
    import mcp.types as mcp_types

    async def action(session: ClientSession) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(100):  # a server that pages forever is cut off
            page = await session.list_tools(params=mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    return await with_session(server, "listing its tools", action)


def result_text(result: "mcp_types.CallToolResult") -> str:
    """A tool result as the text the model reads: text parts joined, other parts as JSON."""
    import mcp.types as mcp_types

    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, (mcp_types.ImageContent, mcp_types.AudioContent)):
            parts.append(f"[{block.type}: {block.mime_type}]")
        else:
            parts.append(block.model_dump_json(by_alias=True, exclude_none=True))
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


async def call_tool(server: McpServer, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    """Run one tool; its result's content blocks as JSON (what n8n's MCP Client Tool outputs), or
    an McpFailure with the server's error text when it reports one."""

    async def action(session: ClientSession) -> list[dict[str, Any]]:
        result = await session.call_tool(name, args)
        if result.is_error:
            raise McpFailure(result_text(result) or f"the tool '{name}' failed without saying why")
        return [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]

    return await with_session(server, f"running the tool '{name}'", action)
