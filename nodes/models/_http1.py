"""HTTP/1.1 on asyncio for the model calls: keep-alive connections per server, one request at a
time on each, replies parsed by httptools (llhttp, Node.js's parser).

A model call is an agent's hot path: for the same call over loopback this needs under half the
CPU of aiohttp and a quarter of httpcore's pool (bench_models prints both). A request is written in
one piece; the reply's head is handed over as soon as it is parsed and its body as it arrives,
chunked transfer undone and content encoding kept. Failures are httpcore's exceptions, each raised
from the system's error underneath: ConnectError (refused, unknown host, certificate) and
RemoteProtocolError (the server closed or reset the connection, or sent what is not HTTP).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
import time
import weakref
from collections import deque
from typing import AsyncGenerator, Callable

import httpcore

from nodes.asyncio_network import first_connection

READ_HIGH_WATER = 2**20  # bytes of body buffered ahead of the reader before the socket is paused (until it takes them)
NO_BODY_STATUSES = frozenset({204, 304})

ServerKey = tuple[str, int, bool]  # host, port, https


class Http1Connection(asyncio.Protocol):
    """One connection and the reply under way on it: its head, the body read but not yet taken,
    whether it is complete, and the failure that ended it."""

    def __init__(self, key: ServerKey) -> None:
        import httptools  # with the first connection, not with the model nodes (a few ms)

        self._parse_error = httptools.HttpParserError
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._parser = httptools.HttpResponseParser(self)
        self._waiter: asyncio.Future[None] | None = None
        self._reset()

    def _reset(self) -> None:
        self.status: int | None = None
        self.reason = ""
        self.headers: dict[str, str] = {}  # lower-case names; a repeated header's values joined, as in httpx
        self.complete = False
        self._keep_alive = False
        self.error: Exception | None = None
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._paused = False
        self._until_close = False  # a body with neither Content-Length nor chunked transfer: it ends with the connection

    # ----- asyncio.Protocol ------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except self._parse_error as exc:
            self._fail(httpcore.RemoteProtocolError(f"the server's reply is not valid HTTP/1.1: {exc}"))
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.status is not None and self._until_close and exc is None:
            self.complete = True
        elif not self.complete:
            if self.status is None:
                self._fail(httpcore.RemoteProtocolError("Server disconnected without sending a response."), exc)
            else:
                self._fail(httpcore.RemoteProtocolError("the server closed the connection mid-reply"), exc)
        self._wake()

    # ----- httptools callbacks ---------------------------------------------------------------
    def on_status(self, reason: bytes) -> None:
        self.reason = reason.decode("latin-1")

    def on_header(self, name: bytes, value: bytes) -> None:
        key, text = name.decode("latin-1").lower(), value.decode("latin-1")
        headers = self.headers
        headers[key] = f"{headers[key]}, {text}" if key in headers else text

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200:  # an informational reply (103 Early Hints): the real one follows
            self.headers = {}
            return
        self.status = status
        if status not in NO_BODY_STATUSES:
            headers = self.headers
            self._until_close = "content-length" not in headers and "transfer-encoding" not in headers
        self._wake()

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)
        self._buffered += len(body)
        if self._buffered > READ_HIGH_WATER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if self.status is None:  # the end of an informational reply
            return
        self.complete = True
        self._keep_alive = self._parser.should_keep_alive()  # read here: the parser forgets it after this call
        self._wake()

    # ----- the reader's side -----------------------------------------------------------------
    def _fail(self, error: Exception, cause: BaseException | None = None) -> None:
        if self.error is None:
            error.__cause__ = cause
            self.error = error

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def _wait(self) -> None:
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        await waiter

    def send(self, request: bytes) -> None:
        assert self.transport is not None
        self._reset()
        self.transport.write(request)

    async def head(self) -> None:
        """Wait for the reply's head; raises the failure that came first."""
        while self.status is None:
            if self.error is not None:
                raise self.error
            await self._wait()

    def take(self) -> bytes:
        """The body read so far and not yet taken (b"" when none)."""
        chunks = self._chunks
        data = chunks.popleft() if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self._buffered = 0
        if self._paused and self.transport is not None and not self.closed:
            self._paused = False
            self.transport.resume_reading()
        return data

    @property
    def has_body(self) -> bool:
        return bool(self._chunks)

    async def body(self) -> AsyncGenerator[bytes, None]:
        """The body as it arrives."""
        while True:
            if self._chunks:
                yield self.take()
            elif self.complete:
                return
            elif self.error is not None:
                raise self.error
            else:
                await self._wait()

    def reusable(self) -> bool:
        return self.complete and self._keep_alive and not self._chunks and not self.closed

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self.closed = True
            self.transport.close()


class Http1Pool:
    """Keep-alive connections by server; at most `max_connections` at once (callers beyond wait).

    The pool holds no strong reference to its event loop: idle connections are held weakly (while
    the loop lives, its selector keeps them), and no waiter outlives its wait. So a client kept
    per loop in a weak-keyed table goes away with its loop. `watch_shutdown` closes the idle
    connections when the loop shuts down its async generators (asyncio.run does), so none is left
    open at its end (a loop closed without that keeps its pool, and the pool it)."""

    def __init__(self, *, keepalive_s: float, max_connections: int) -> None:
        self._keepalive_s = keepalive_s
        self._max = max_connections
        self._busy = 0
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._idle: dict[ServerKey, list[weakref.ref[Http1Connection]]] = {}
        self._shutdown_watch: AsyncGenerator[None, None] | None = None

    async def request(self, key: ServerKey, request: bytes, tls: Callable[[], ssl.SSLContext]) -> Http1Connection:
        """Send `request` (its bytes, head and body) to the server `key` and wait for the reply's
        head; give the connection back with `release` once its body is read or abandoned."""
        await self._acquire()
        conn: Http1Connection | None = None
        try:
            conn = self._take_idle(key) or await self._connect(key, tls)
            conn.send(request)
            await conn.head()
            return conn
        except BaseException:
            if conn is not None:
                conn.close()
            self._release_slot()
            raise

    def release(self, conn: Http1Connection) -> None:
        """Keep the connection for the next request to its server when its reply was read to the end
        and the server keeps it open; close it otherwise."""
        if conn.reusable():
            conn.idle_since = time.monotonic()
            self._idle.setdefault(conn.key, []).append(weakref.ref(conn))
        else:
            conn.close()
        self._release_slot()

    async def _acquire(self) -> None:
        if self._busy < self._max and not self._waiting:
            self._busy += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            await waiter  # a released slot is handed over: the count stays
        except BaseException:
            if waiter.done() and not waiter.cancelled():  # handed a slot as it was cancelled: pass it on
                self._release_slot()
            else:
                with contextlib.suppress(ValueError):
                    self._waiting.remove(waiter)
            raise

    def _release_slot(self) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._busy -= 1

    def _take_idle(self, key: ServerKey) -> Http1Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            conn = idle.pop()()
            if conn is None:
                continue
            if not conn.closed and now - conn.idle_since < self._keepalive_s:
                return conn
            conn.close()
        return None

    async def _connect(self, key: ServerKey, tls: Callable[[], ssl.SSLContext]) -> Http1Connection:
        host, port, https = key
        connect = functools.partial(asyncio.get_running_loop().create_connection, lambda: Http1Connection(key))
        try:
            _transport, conn = await first_connection(connect, host, port, ssl=tls() if https else None,
                                                      server_hostname=host if https else None)
        except OSError as exc:  # ssl.SSLError and socket.gaierror are OSErrors
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return conn

    async def watch_shutdown(self) -> None:
        """Close the idle connections when the running loop shuts down its async generators."""
        if self._shutdown_watch is None:
            self._shutdown_watch = _until_shutdown(self)
            await self._shutdown_watch.__anext__()  # the loop tracks an async generator once it has begun

    def close(self) -> None:
        """Close the idle connections (those in use close when their reply is released)."""
        for refs in self._idle.values():
            for ref in refs:
                conn = ref()
                if conn is not None:
                    conn.close()
        self._idle.clear()


async def _until_shutdown(pool: Http1Pool) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        pool.close()
        pool._shutdown_watch = None  # it holds the loop (its finalizer hook): let both go
