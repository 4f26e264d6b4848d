"""The HTTP client of the model nodes: one keep-alive client per event loop, POSTing JSON and
handing back the reply as it arrives.

Requests go through aiohttp (its HTTP parser is compiled): for the same call over loopback it
needs half the CPU of httpcore's pool on asyncio streams and a third of httpx's, and the model
call is an agent's hot path. aiohttp is imported on the first request, not with the node. Its
failures are raised as httpcore's (connect error, cut-off reply, read error), each from the
system's error underneath, so nodes/models/_http.py words them as before: "Connection refused",
"ended the stream mid-reply". TLS is set up only for https, with the process's one verifying
context (nodes.http_transport). When a proxy is set in the environment, requests to other hosts
than this machine go through httpx, which applies it (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY).
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import sys
import urllib.request
import weakref
import zlib
from typing import TYPE_CHECKING, Any, AsyncGenerator, Awaitable, Callable, NoReturn

import httpcore
import httpx

from nodes.asyncio_network import HAPPY_EYEBALLS_DELAY_S
from nodes.http_transport import LOOPBACK, LazyTLSTransport, tls_context

from ._common import encode_json

if TYPE_CHECKING:
    import aiohttp

KEEPALIVE_EXPIRY_S = 5.0  # httpx's default
MAX_CONNECTIONS = 100  # httpx's default
MAX_KEEPALIVE = 8  # of the proxied client (httpx)
LOOPBACK_HOSTS = frozenset(host.strip("[]") for host in LOOPBACK)
BASE_HEADERS = (("Accept", "*/*"), ("Accept-Encoding", "gzip, deflate"), ("Connection", "keep-alive"),
                ("User-Agent", "mini-n8n"))
# the transport failures a call can end with: httpcore's (aiohttp's are raised as these), httpx's (proxied)
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
        if self._take_whole is None or self.headers.get("content-encoding", "identity").strip().lower() not in ("", "identity"):
            return None
        return self._take_whole()

    def body_read(self) -> bool:
        """Whether `chunks()` has handed over the whole body (known for bodies not encoded)."""
        return self._all_received is not None and self._all_received() and \
            self.headers.get("content-encoding", "identity").strip().lower() in ("", "identity")

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
def _target(url: str) -> tuple[str, str, str, bool]:
    """`url` normalised by httpx's rules, its Host header, its host and whether it is https (kept per
    URL: an agent calls the same one)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise InvalidURL(str(exc)) from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise InvalidURL(f"{url!r} is not an absolute http(s) URL")
    return str(parsed), parsed.netloc.decode("ascii"), parsed.host, parsed.scheme == "https"


@functools.lru_cache(maxsize=64)
def _head(host_header: str, given: tuple[tuple[str, str], ...]) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """The request headers before and after Content-Length: ours unless the caller gives them, then
    the caller's (kept per endpoint: an agent sends the same ones every time)."""
    names = {name.lower() for name, _value in given}
    before = tuple((name, value) for name, value in (("Host", host_header), *BASE_HEADERS, ("Content-Type", "application/json"))
                   if name.lower() not in names)
    return before, tuple((name, value) for name, value in given if name.lower() != "content-length")


def _raise_as_httpcore(exc: "aiohttp.ClientError") -> NoReturn:
    """aiohttp's failure as the httpcore error it stands for, raised from the system's error under it."""
    import aiohttp

    if isinstance(exc, aiohttp.ClientConnectorError):
        cause = exc.os_error
        if cause.errno is None and str(cause).startswith("Multiple exceptions:"):  # addresses failed differently
            cause = OSError("All connection attempts failed")
        raise httpcore.ConnectError(str(cause) or type(cause).__name__) from cause
    if isinstance(exc, (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError)):
        raise httpcore.RemoteProtocolError(str(exc) or type(exc).__name__) from exc
    if isinstance(exc, aiohttp.ServerTimeoutError):
        raise httpcore.ReadTimeout(str(exc) or "timed out") from exc
    if isinstance(exc, aiohttp.ClientOSError):
        raise httpcore.ReadError(str(exc) or type(exc).__name__) from exc
    raise httpcore.NetworkError(str(exc) or type(exc).__name__) from exc


async def _body(response: "aiohttp.ClientResponse") -> AsyncGenerator[bytes, None]:
    """The body as it arrives (chunked transfer undone, content encoding kept)."""
    import aiohttp

    content = response.content
    try:
        while chunk := await content.readany():  # b"" at the end
            yield chunk
    except aiohttp.ClientError as exc:
        _raise_as_httpcore(exc)


def _close_session(session: "aiohttp.ClientSession", loop: asyncio.AbstractEventLoop) -> None:
    """Close the session of a client whose loop is gone (at the latest when the process ends), so
    aiohttp does not report it as leaked. On a closed loop its close() has nothing to wait for
    and is run to its end here; a loop still open (and so not running, at exit) runs it."""
    if loop.is_closed():
        closing = session.close()
        try:
            closing.send(None)
        except StopIteration:
            return
        closing.close()
    elif not loop.is_running():
        loop.run_until_complete(session.close())


class ModelClient:
    """One aiohttp session (made on the first request) for http and https; httpx for proxied hosts."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._proxied: httpx.AsyncClient | None = None
        self._proxies = bool(urllib.request.getproxies())

    async def _direct(self) -> "aiohttp.ClientSession":
        if self._session is None:
            # aiohttp's import takes about 0.1 s (it builds its default SSL contexts): in a thread,
            # so the event loop (the editor's) keeps running meanwhile
            aiohttp = sys.modules.get("aiohttp") or await asyncio.to_thread(importlib.import_module, "aiohttp")
            if self._session is None:
                connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, limit_per_host=0, keepalive_timeout=KEEPALIVE_EXPIRY_S,
                                                 use_dns_cache=False, happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY_S)
                # no timeouts, cookies or decoding of its own: the caller's deadline rules and it decodes
                self._session = aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(),
                                                      cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False,
                                                      trust_env=False)
                weakref.finalize(self, _close_session, self._session, asyncio.get_running_loop())
        return self._session

    async def post_json(self, url: str, body: Any, headers: dict[str, str]) -> Reply:
        """POST `body` as JSON (`encode_json`; bytes are JSON already) and return the reply once its
        head has arrived. Raises InvalidURL, or a transport error of TRANSPORT_ERRORS."""
        target, host_header, host, https = _target(url)
        content = body if isinstance(body, bytes) else encode_json(body).encode()
        if self._proxies and host not in LOOPBACK_HOSTS:
            return await self._post_proxied(target, content, headers)
        before, after = _head(host_header, tuple(headers.items()))
        head = [*before, ("Content-Length", str(len(content))), *after]
        session = self._session or await self._direct()
        try:
            response = await session.request("POST", target, data=content, headers=head, allow_redirects=False,
                                             ssl=tls_context() if https else True)
        except sys.modules["aiohttp"].ClientError as exc:  # imported by now
            _raise_as_httpcore(exc)
        received: dict[str, str] = {}
        for raw_name, raw_value in response.raw_headers:  # a repeated header reads as its values joined, as in httpx
            name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
            received[name] = f"{received[name]}, {value}" if name in received else value

        async def close() -> None:
            if response.content.at_eof():
                response.release()  # the connection goes back to the pool
            else:
                response.close()  # a reply left unread: its connection is closed, not reused

        def take_whole() -> bytes | None:
            content = response.content
            return content.read_nowait() if content.is_eof() and content.exception() is None else None

        return Reply(response.status, response.reason or "", received, _body(response), close, response.content.at_eof,
                     take_whole)

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
