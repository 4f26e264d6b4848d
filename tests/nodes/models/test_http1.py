"""The model calls' HTTP/1.1 connections (nodes/models/_http1.py) against loopback servers that send
exactly the bytes each case needs: framing, keep-alive, failures, back-pressure."""

from __future__ import annotations

import asyncio
import socket
import ssl
from pathlib import Path
from typing import Awaitable, Callable

import httpcore
import pytest

from nodes.http_transport import tls_context
from nodes.models._client import ModelClient
from nodes.models._http1 import READ_HIGH_WATER, Http1Pool
from tests.tls_certs import write_self_signed

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
REQUEST = b"POST /v1/x HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\n{}"


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
    return head + await reader.readexactly(length)


def replying(raw: bytes) -> Handler:
    """A handler that reads one request and writes `raw` back (then the connection closes)."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(raw)
        await writer.drain()

    return handler


class Server:
    """A loopback server running `handler` for each connection; counts the connections."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.tls = tls
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> "Server":
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            try:
                await self.handler(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()

        self.server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=self.tls)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    @property
    def key(self) -> tuple[str, int, bool]:
        assert self.server is not None
        return ("127.0.0.1", self.server.sockets[0].getsockname()[1], False)


async def body_of(pool: Http1Pool, key: tuple[str, int, bool]) -> tuple[int, bytes]:
    conn = await pool.request(key, REQUEST, tls_context)
    try:
        return conn.status or 0, b"".join([chunk async for chunk in conn.body()])
    finally:
        pool.release(conn)


def pool() -> Http1Pool:
    return Http1Pool(keepalive_s=5.0, max_connections=10)


async def test_keep_alive_replies_share_one_connection_and_chunked_bodies_are_undone() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(3):
            await read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
            await writer.drain()

    async with Server(handler) as server:
        connections = pool()
        for _ in range(3):
            assert await body_of(connections, server.key) == (200, b"abcde")
        assert server.connections == 1
        connections.close()


async def test_a_body_without_length_ends_with_the_connection_which_is_not_reused() -> None:
    handler = replying(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end")

    async with Server(handler) as server:
        connections = pool()
        assert await body_of(connections, server.key) == (200, b"until the end")
        assert await body_of(connections, server.key) == (200, b"until the end")
        assert server.connections == 2


async def test_an_informational_reply_is_skipped() -> None:
    handler = replying(b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")

    async with Server(handler) as server:
        connections = pool()
        conn = await connections.request(server.key, REQUEST, tls_context)
        assert (conn.status, conn.reason, conn.headers) == (201, "Created", {"content-length": "2"})
        assert b"".join([chunk async for chunk in conn.body()]) == b"ok"
        connections.release(conn)
        connections.close()


async def test_a_server_that_closes_before_replying_or_mid_reply_is_a_protocol_error() -> None:
    async def before(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    mid_reply = replying(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")

    async with Server(before) as server:
        with pytest.raises(httpcore.RemoteProtocolError, match="Server disconnected without sending a response"):
            await body_of(pool(), server.key)
    async with Server(mid_reply) as server:
        connections = pool()
        conn = await connections.request(server.key, REQUEST, tls_context)
        with pytest.raises(httpcore.RemoteProtocolError, match="mid-reply"):
            async for _chunk in conn.body():
                pass
        connections.release(conn)
        assert conn.closed


async def test_a_reply_that_is_not_http_is_a_protocol_error() -> None:
    handler = replying(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")

    async with Server(handler) as server:
        with pytest.raises(httpcore.RemoteProtocolError, match="not valid HTTP/1.1"):
            await body_of(pool(), server.key)


async def test_a_refused_connection_is_a_connect_error_from_the_system_error() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(httpcore.ConnectError) as failure:
        await body_of(pool(), ("127.0.0.1", port, False))
    assert isinstance(failure.value.__cause__, ConnectionRefusedError)


async def test_a_connection_the_server_closed_while_idle_is_not_used_again() -> None:
    handler = replying(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")  # keep-alive, then closed at once

    async with Server(handler) as server:
        connections = pool()
        conn = await connections.request(server.key, REQUEST, tls_context)
        assert b"".join([chunk async for chunk in conn.body()]) == b"ok"
        connections.release(conn)
        async with asyncio.timeout(10):
            while not conn.closed:  # the server's close arrives
                await asyncio.sleep(0.001)
        assert await body_of(connections, server.key) == (200, b"ok")
        assert server.connections == 2
        connections.close()


async def test_a_fast_large_body_is_buffered_only_up_to_the_high_water_mark() -> None:
    size = 16 * READ_HIGH_WATER

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size + b"x" * size)
        await writer.drain()

    async with Server(handler) as server:
        connections = pool()
        conn = await connections.request(server.key, REQUEST, tls_context)
        async with asyncio.timeout(10):
            while not conn._paused:  # the reader takes nothing yet: the socket is paused
                await asyncio.sleep(0.001)
        assert conn._buffered < 2 * READ_HIGH_WATER
        total = 0
        async for chunk in conn.body():
            total += len(chunk)
        assert total == size
        connections.release(conn)
        connections.close()


async def test_a_header_that_would_end_its_line_is_refused_before_anything_is_sent() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    async with Server(handler) as server:
        url = f"http://127.0.0.1:{server.key[1]}/v1/x"
        with pytest.raises(httpcore.LocalProtocolError, match="line break"):
            await ModelClient().post_json(url, {}, {"Authorization": "Bearer k\r\nX-Injected: 1"})
        assert server.connections == 0


def self_signed(folder: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a certificate for 127.0.0.1 that no store trusts, and a client
    context that trusts exactly it."""
    cert, key = write_self_signed(folder)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    return server, ssl.create_default_context(cafile=str(cert))


async def test_https_replies_come_over_tls_and_an_untrusted_certificate_is_a_connect_error(tmp_path: Path) -> None:
    server_tls, client_tls = self_signed(tmp_path)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret")
            await writer.drain()

    async with Server(handler, server_tls) as server:
        key = ("127.0.0.1", server.key[1], True)
        connections = Http1Pool(keepalive_s=5.0, max_connections=10)
        for _ in range(2):
            conn = await connections.request(key, REQUEST, lambda: client_tls)
            assert conn.transport is not None and conn.transport.get_extra_info("ssl_object") is not None
            assert b"".join([chunk async for chunk in conn.body()]) == b"secret"
            connections.release(conn)
        assert server.connections == 1
        connections.close()
        with pytest.raises(httpcore.ConnectError) as failure:
            await body_of(pool(), key)  # the process's verifying context: the certificate is no one's
        assert isinstance(failure.value.__cause__, ssl.SSLCertVerificationError)


async def test_callers_past_the_connection_limit_wait_and_a_cancelled_one_takes_no_slot() -> None:
    go_on = asyncio.Event()
    requests = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal requests
        while True:
            await read_request(reader)
            requests += 1
            await go_on.wait()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()

    async with Server(handler) as server:
        connections = Http1Pool(keepalive_s=5.0, max_connections=1)
        first = asyncio.create_task(body_of(connections, server.key))
        second = asyncio.create_task(body_of(connections, server.key))
        cancelled = asyncio.create_task(body_of(connections, server.key))
        async with asyncio.timeout(10):
            while requests < 1:
                await asyncio.sleep(0.001)
        cancelled.cancel()
        await asyncio.sleep(0.01)
        assert (requests, server.connections, second.done()) == (1, 1, False)  # the others wait for the slot
        go_on.set()
        assert await first == (200, b"ok") and await second == (200, b"ok")
        assert cancelled.cancelled()
        assert (requests, server.connections) == (2, 1)  # one after the other on the one connection
        assert await body_of(connections, server.key) == (200, b"ok")  # no slot was lost
        connections.close()


async def test_reply_headers_are_read_with_lower_case_names_and_a_repeated_one_joined() -> None:
    handler = replying(b"HTTP/1.1 200 OK\r\nX-Trace: a\r\nContent-Length: 2\r\nx-trace: b\r\nRetry-After: 1\r\n\r\nok")

    async with Server(handler) as server:
        connections = pool()
        conn = await connections.request(server.key, REQUEST, tls_context)
        assert conn.headers == {"x-trace": "a, b", "content-length": "2", "retry-after": "1"}
        assert b"".join([chunk async for chunk in conn.body()]) == b"ok"
        connections.release(conn)
        connections.close()
