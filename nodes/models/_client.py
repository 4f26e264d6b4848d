"""The HTTP client of the model nodes: one keep-alive client per event loop, POSTing JSON and
handing back the reply as it arrives.

Requests go straight to httpcore's connection pool on asyncio's streams (nodes.asyncio_network),
without httpx's client layer (auth flows, cookies, redirects, URL models on every request): the
model call is an agent's hot path and that layer was most of its CPU. TLS is set up only for
https, with the process's one verifying context (nodes.http_transport). When a proxy is set in
the environment, requests to other hosts than this machine go through httpx, which applies it
(HTTP(S)_PROXY, ALL_PROXY, NO_PROXY) as before.
"""

from __future__ import annotations

import asyncio
import functools
import json
import urllib.request
import weakref
import zlib
from typing import Any, AsyncGenerator, Awaitable, Callable

import httpcore
import httpx

from nodes.http_transport import ASYNCIO_BACKEND, LOOPBACK, LazyTLSTransport, plain_context, tls_context

MAX_KEEPALIVE = 8
KEEPALIVE_EXPIRY_S = 5.0  # httpx's default
MAX_CONNECTIONS = 100  # httpx's default
LOOPBACK_HOSTS = frozenset(host.strip("[]") for host in LOOPBACK)
BASE_HEADERS = [(b"Accept", b"*/*"), (b"Accept-Encoding", b"gzip, deflate"), (b"Connection", b"keep-alive"),
                (b"User-Agent", b"mini-n8n")]
# the transport failures a call can end with, from httpcore directly or from httpx (proxied)
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
    with `chunks()` (decoded from gzip/deflate) and the connection given back with `aclose()`."""

    def __init__(self, status: int, reason: str, headers: dict[str, str], raw: AsyncGenerator[bytes, None],
                 close: Callable[[], Awaitable[None]]) -> None:
        self.status_code = status
        self.reason_phrase = reason
        self.headers = headers
        self._raw = raw
        self._close = close

    def chunks(self) -> AsyncGenerator[bytes, None]:
        encoding = self.headers.get("content-encoding", "identity").strip().lower()
        if encoding in ("", "identity"):
            return self._raw  # as it arrives: no layer in between
        if encoding not in ("gzip", "deflate"):
            raise UndecodableBody(f"it is encoded as {encoding!r}, which was not asked for")
        return self._decoded(encoding)

    async def _decoded(self, encoding: str) -> AsyncGenerator[bytes, None]:
        decoder = zlib.decompressobj(zlib.MAX_WBITS | 16 if encoding == "gzip" else zlib.MAX_WBITS)
        try:
            async for chunk in self._raw:
                if data := decoder.decompress(chunk):
                    yield data
            if tail := decoder.flush():
                yield tail
        except zlib.error as exc:
            raise UndecodableBody(f"its {encoding} encoding does not decode: {exc}") from exc

    async def aclose(self) -> None:
        await self._close()


@functools.lru_cache(maxsize=64)
def _target(url: str) -> tuple[httpcore.URL, bytes]:
    """httpcore's URL for `url` and its Host header, parsed by httpx's rules (kept per URL: an agent
    calls the same one)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise InvalidURL(str(exc)) from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise InvalidURL(f"{url!r} is not an absolute http(s) URL")
    target = httpcore.URL(scheme=parsed.raw_scheme, host=parsed.raw_host, port=parsed.port, target=parsed.raw_path)
    return target, parsed.netloc


class ModelClient:
    """Keep-alive pools for http and (made on first use) https; httpx for proxied hosts."""

    def __init__(self) -> None:
        self._plain: httpcore.AsyncConnectionPool | None = None
        self._tls: httpcore.AsyncConnectionPool | None = None
        self._proxied: httpx.AsyncClient | None = None
        self._proxies = bool(urllib.request.getproxies())

    @staticmethod
    def _pool(context: Any) -> httpcore.AsyncConnectionPool:
        return httpcore.AsyncConnectionPool(ssl_context=context, max_connections=MAX_CONNECTIONS,
                                            max_keepalive_connections=MAX_KEEPALIVE, keepalive_expiry=KEEPALIVE_EXPIRY_S,
                                            network_backend=ASYNCIO_BACKEND)

    async def post_json(self, url: str, body: Any, headers: dict[str, str]) -> Reply:
        """POST `body` as JSON (httpx's encoding: UTF-8, compact, no NaN) and return the reply once its
        head has arrived. Raises InvalidURL, or a transport error of TRANSPORT_ERRORS."""
        target, host_header = _target(url)
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        host = target.host.decode("ascii")
        if self._proxies and host not in LOOPBACK_HOSTS:
            return await self._post_proxied(url, content, headers)
        if target.scheme == b"https":
            if self._tls is None:
                self._tls = self._pool(tls_context())
            pool = self._tls
        else:
            if self._plain is None:
                self._plain = self._pool(plain_context())
            pool = self._plain
        given = {name.lower() for name in headers}
        head = [(name, value) for name, value in ((b"Host", host_header), *BASE_HEADERS, (b"Content-Type", b"application/json"))
                if name.decode().lower() not in given]
        head.append((b"Content-Length", str(len(content)).encode()))
        head += [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()
                 if name.lower() != "content-length"]
        response = await pool.handle_async_request(httpcore.Request(b"POST", target, headers=head, content=content))
        reason = response.extensions.get("reason_phrase", b"")
        received: dict[str, str] = {}
        for raw_name, raw_value in response.headers:  # a repeated header reads as its values joined, as in httpx
            name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
            received[name] = f"{received[name]}, {value}" if name in received else value
        return Reply(response.status, reason.decode("ascii", "replace") if isinstance(reason, bytes) else str(reason),
                     received, response.aiter_stream(), response.aclose)

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
