"""httpcore's connections on asyncio's own streams instead of anyio's: the same bytes and errors for
less CPU per request (anyio adds cancel scopes and checkpoints around every read and write).

Errors are httpcore's, raised from the OSError or ssl.SSLError underneath (connection refused,
reset, certificate failures keep their system text for nodes.http_transport.failure_reason);
timeouts, when httpcore passes one, are its ConnectTimeout, ReadTimeout and WriteTimeout.
Connecting to a host name tries its addresses as asyncio does (happy eyeballs, 250 ms apart).
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import ssl
import sys
from typing import Any, Awaitable, Callable, Iterable, Iterator, TypeVar

import httpcore

T = TypeVar("T")
HAPPY_EYEBALLS_DELAY_S = 0.25  # anyio's and RFC 8305's
READ_LIMIT = 2**20  # bytes buffered ahead of the reader before the socket is paused


@contextlib.contextmanager
def _mapped(timeout_error: type[Exception], os_error: type[Exception]) -> Iterator[None]:
    try:
        yield
    except TimeoutError as exc:
        raise timeout_error(str(exc) or "timed out") from exc
    except OSError as exc:  # ssl.SSLError is an OSError
        raise os_error(str(exc) or type(exc).__name__) from exc


def _socket_readable(sock: socket.socket | None) -> bool:
    """Whether a socket has data or an end waiting (closed sockets count as readable)."""
    if sock is None or sock.fileno() < 0:
        return True
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([sock], [], [], 0)[0])


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection as an asyncio StreamReader/StreamWriter pair."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _mapped(httpcore.ReadTimeout, httpcore.ReadError):
            if timeout is None:
                return await self._reader.read(max_bytes)
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        with _mapped(httpcore.WriteTimeout, httpcore.WriteError):
            self._writer.write(buffer)
            if timeout is None:
                await self._writer.drain()
            else:
                async with asyncio.timeout(timeout):
                    await self._writer.drain()

    async def aclose(self) -> None:
        self._writer.close()
        with contextlib.suppress(OSError, asyncio.CancelledError):
            await self._writer.wait_closed()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        try:
            with _mapped(httpcore.ConnectTimeout, httpcore.ConnectError):
                async with asyncio.timeout(timeout):
                    await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except BaseException:
            self._writer.transport.abort()
            raise
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._writer.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._writer.get_extra_info("sockname")
        if info == "server_addr":
            return self._writer.get_extra_info("peername")
        if info == "socket":
            return self._writer.get_extra_info("socket")
        if info == "is_readable":  # an idle keep-alive connection the server closed or wrote to
            return self._reader.at_eof() or self._writer.is_closing() or _socket_readable(self._writer.get_extra_info("socket"))
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Opens httpcore's connections with asyncio.open_connection."""

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        with _mapped(httpcore.ConnectTimeout, httpcore.ConnectError):
            async with asyncio.timeout(timeout):
                reader, writer = await _open(host, port, local_address)
        sock = writer.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        with _mapped(httpcore.ConnectTimeout, httpcore.ConnectError):
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_unix_connection(path, limit=READ_LIMIT)
        for option in socket_options or ():
            writer.get_extra_info("socket").setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _open(host: str, port: int, local_address: str | None) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    options: dict[str, Any] = {"limit": READ_LIMIT}
    if local_address is not None:
        options["local_addr"] = (local_address, 0)
    return await first_connection(asyncio.open_connection, host, port, **options)


async def first_connection(connect: Callable[..., Awaitable[T]], host: str, port: int, **options: Any) -> T:
    """`connect(host, port, **options)` (asyncio.open_connection, or loop.create_connection with its
    protocol factory bound) trying the name's addresses as asyncio does (happy eyeballs); when every
    address fails, the one failure if they agree (e.g. "Connection refused" from ::1 and 127.0.0.1),
    else anyio's "All connection attempts failed" with the failures as its cause."""
    options["happy_eyeballs_delay"] = HAPPY_EYEBALLS_DELAY_S
    if sys.version_info >= (3, 12):
        options["all_errors"] = True
    try:
        return await connect(host, port, **options)
    except ExceptionGroup as group:  # Python 3.12+ (all_errors): every address failed
        failures = [e for e in group.exceptions if isinstance(e, OSError)]
        if failures and len(failures) == len(group.exceptions) and len({e.errno for e in failures}) == 1:
            raise failures[0] from None
        raise OSError("All connection attempts failed") from group
    except OSError as exc:
        if exc.errno is None and str(exc).startswith("Multiple exceptions:"):  # Python 3.11: only their text
            raise OSError("All connection attempts failed") from exc
        raise
