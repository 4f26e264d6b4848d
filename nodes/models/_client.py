"""The HTTP client of the model nodes: one keep-alive client per event loop, POSTing JSON and
handing back the reply as it arrives.

Requests go over nodes/models/_http1.py (asyncio and httptools' compiled parser): for the same
call over loopback it needs under half the CPU of aiohttp and a quarter of httpcore's pool on
asyncio streams, and the model call is an agent's hot path. Its failures are httpcore's (connect
error, a reply cut off or not HTTP), each from the system's error underneath, so
nodes/models/_http.py words them in the system's terms: "Connection refused", "ended the stream
mid-reply". TLS is set up only for https, with the process's one verifying context
(nodes.http_transport). When a proxy is set in the environment, requests to other hosts than this
machine go through httpx, which applies it (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY).
"""

from __future__ import annotations

import asyncio
import functools
import urllib.request
import weakref
import zlib
from typing import Any, AsyncGenerator, Awaitable, Callable

import httpcore
import httpx

from nodes.http_transport import LOOPBACK, LazyTLSTransport, tls_context

from ._http1 import Http1Connection, Http1Pool
from ._common import encode_json_bytes

KEEPALIVE_EXPIRY_S = 5.0  # httpx's default
MAX_CONNECTIONS = 100  # httpx's default
MAX_KEEPALIVE = 8  # of the proxied client (httpx)
LOOPBACK_HOSTS = frozenset(host.strip("[]") for host in LOOPBACK)
BASE_HEADERS = (("Accept", "*/*"), ("Accept-Encoding", "gzip, deflate"), ("Connection", "keep-alive"),
                ("User-Agent", "mini-n8n"))
# the transport failures a call can end with: httpcore's (_http1's are these), httpx's (proxied)
TRANSPORT_ERRORS = (httpx.HTTPError, httpcore.NetworkError, httpcore.ProtocolError, httpcore.TimeoutException,
                    httpcore.ProxyError, httpcore.UnsupportedProtocol)
TIMEOUTS = (httpx.TimeoutException, httpcore.TimeoutException)
CUT_OFF = (httpx.RemoteProtocolError, httpcore.RemoteProtocolError)

_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ModelClient]" = weakref.WeakKeyDictionary()


class InvalidURL(ValueError):
    """The URL is not an absolute http(s) URL."""


class UndecodableBody(ValueError):
    """The reply's Content-Encoding is not one that was asked for, or its body does not decode."""


class Reply:
    """A reply whose head has arrived: status, reason, headers (lower-case names); the body is read
    with `chunks()` (decoded from gzip/deflate) and the connection given back with `aclose()`.
    `all_received`, when the transport can tell, says whether the raw body has been read to its end."""

    def __init__(self, status: int, reason: str, headers: dict[str, str], raw: AsyncGenerator[bytes, None],
                 close: Callable[[], Awaitable[None]], all_received: Callable[[], bool] | None = None,
                 take_whole: Callable[[], bytes | None] | None = None) -> None:
        self.status_code = status
        self.reason_phrase = reason
        self.headers = headers
        self._raw = raw
        self._close = close
        self._all_received = all_received
        self._take_whole = take_whole

    def whole_body(self) -> bytes | None:
        """The whole body when it has all arrived already and is not encoded (a short reply comes
        with its head), taken at once; None otherwise: read it with `chunks()`."""
        if self._take_whole is None or not self._not_encoded():
            return None
        return self._take_whole()

    def body_read(self) -> bool:
        """Whether `chunks()` has handed over the whole body (known for bodies not encoded)."""
        return self._all_received is not None and self._all_received() and self._not_encoded()

    def chunks(self) -> AsyncGenerator[bytes, None]:
        encoding = self.headers.get("content-encoding", "identity").strip().lower()
        if encoding in ("", "identity"):
            return self._raw_body()  # as it arrives: no layer in between
        if encoding not in ("gzip", "deflate"):
            raise UndecodableBody(f"it is encoded as {encoding!r}, which was not asked for")
        return self._decoded(encoding)

    def _not_encoded(self) -> bool:
        """Whether the body comes as it is (no Content-Encoding, or identity)."""
        return self.headers.get("content-encoding", "identity").strip().lower() in ("", "identity")

    def _raw_body(self) -> AsyncGenerator[bytes, None]:
        return self._raw

    async def _decoded(self, encoding: str) -> AsyncGenerator[bytes, None]:
        decoder = zlib.decompressobj(zlib.MAX_WBITS | 16 if encoding == "gzip" else zlib.MAX_WBITS)
        try:
            async for chunk in self._raw_body():
                if data := decoder.decompress(chunk):
                    yield data
            if tail := decoder.flush():
                yield tail
        except zlib.error as exc:
            raise UndecodableBody(f"its {encoding} encoding does not decode: {exc}") from exc

    async def aclose(self) -> None:
        await self._close()


class PooledReply(Reply):
    """A reply on a connection of the client's own pool (_http1), read from the connection, which
    goes back to the pool when the reply is closed (once). Made per model call: its parts are
    methods, not closures made for it."""

    def __init__(self, pool: Http1Pool, conn: Http1Connection) -> None:  # not Reply's: its parts are here
        self.status_code = conn.status or 0
        self.reason_phrase = conn.reason
        self.headers = conn.headers
        self._pool: Http1Pool | None = pool
        self._conn = conn

    def whole_body(self) -> bytes | None:
        conn = self._conn
        return conn.take() if conn.complete and conn.error is None and self._not_encoded() else None

    def body_read(self) -> bool:
        conn = self._conn
        return conn.complete and not conn.has_body and self._not_encoded()

    def _raw_body(self) -> AsyncGenerator[bytes, None]:
        return self._conn.body()

    async def aclose(self) -> None:
        pool = self._pool
        if pool is not None:
            self._pool = None
            pool.release(self._conn)  # kept for the next request when read to its end, closed otherwise


@functools.lru_cache(maxsize=64)
def _target(url: str) -> tuple[str, str, str, int, bytes, bool]:
    """`url` normalised by httpx's rules, its Host header, host, port, path with query and whether
    it is https (kept per URL: an agent calls the same one)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise InvalidURL(str(exc)) from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise InvalidURL(f"{url!r} is not an absolute http(s) URL")
    https = parsed.scheme == "https"
    port = parsed.port or (443 if https else 80)
    return str(parsed), parsed.netloc.decode("ascii"), parsed.host, port, parsed.raw_path, https


def _header_line(name: str, value: str) -> bytes:
    """`name: value` and its line end, refused when either would end the line early (a header
    smuggled in) or is not Latin-1."""
    if any(c in name for c in "\r\n:") or "\r" in value or "\n" in value or not name:
        raise httpcore.LocalProtocolError(f"the header {name!r} has a line break or colon in its name or a line break in its value")
    try:
        return f"{name}: {value}\r\n".encode("latin-1")
    except UnicodeEncodeError:
        raise httpcore.LocalProtocolError(f"the header {name!r} has characters HTTP headers cannot carry") from None


@functools.lru_cache(maxsize=64)
def _head(path: bytes, host_header: str, given: tuple[tuple[str, str], ...]) -> tuple[bytes, bytes]:
    """The request's head before and after its Content-Length line: our headers unless the caller
    gives them, then the caller's (kept per endpoint: an agent sends the same ones every time)."""
    names = {name.lower() for name, _value in given}
    before = [b"POST " + path + b" HTTP/1.1\r\n"]
    before += [_header_line(name, value) for name, value in
               (("Host", host_header), *BASE_HEADERS, ("Content-Type", "application/json")) if name.lower() not in names]
    after = [_header_line(name, value) for name, value in given if name.lower() != "content-length"]
    return b"".join(before), b"".join(after) + b"\r\n"


def _close_pool(pool: Http1Pool, loop_ref: "weakref.ref[asyncio.AbstractEventLoop]") -> None:
    """Close the idle connections of a client that is gone while its loop is still open and not
    running (a loop left open); the loop runs once so that their sockets are closed now."""
    loop = loop_ref()
    if loop is None or loop.is_closed() or loop.is_running() or asyncio._get_running_loop() is not None:
        return
    pool.close()
    loop.run_until_complete(asyncio.sleep(0))


class ModelClient:
    """Keep-alive connections (_http1) for http and https; httpx for proxied hosts."""

    def __init__(self) -> None:
        self._pool: Http1Pool | None = None
        self._proxied: httpx.AsyncClient | None = None
        self._proxies = bool(urllib.request.getproxies())

    async def _direct(self) -> Http1Pool:
        pool = self._pool = Http1Pool(keepalive_s=KEEPALIVE_EXPIRY_S, max_connections=MAX_CONNECTIONS)
        weakref.finalize(self, _close_pool, pool, weakref.ref(asyncio.get_running_loop()))
        await pool.watch_shutdown()
        return pool

    async def post_json(self, url: str, body: Any, headers: dict[str, str]) -> Reply:
        """POST `body` as JSON (`encode_json_bytes`; bytes are JSON already) and return the reply once its
        head has arrived. Raises InvalidURL, or a transport error of TRANSPORT_ERRORS."""
        target, host_header, host, port, path, https = _target(url)
        content = body if isinstance(body, bytes) else encode_json_bytes(body)
        if self._proxies and host not in LOOPBACK_HOSTS:
            return await self._post_proxied(target, content, headers)
        before, after = _head(path, host_header, tuple(headers.items()))
        pool = self._pool or await self._direct()
        conn = await pool.request((host, port, https), b"%bContent-Length: %d\r\n%b%b" % (before, len(content), after, content),
                                  tls_context)
        return PooledReply(pool, conn)

    async def _post_proxied(self, url: str, content: bytes, headers: dict[str, str]) -> Reply:
        if self._proxied is None:
            self._proxied = LazyTLSTransport.client(httpx.Limits(max_keepalive_connections=MAX_KEEPALIVE))
        request = self._proxied.build_request("POST", url, content=content, timeout=None,
                                              headers={"Content-Type": "application/json", **headers})
        response = await self._proxied.send(request, stream=True)
        return Reply(response.status_code, response.reason_phrase, {k.lower(): v for k, v in response.headers.items()},
                     response.aiter_raw(), response.aclose)


def shared_client() -> ModelClient:
    """The client of the running loop: an agent iteration must not pay a connection setup."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = _clients[loop] = ModelClient()
    return client
