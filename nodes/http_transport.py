"""httpx clients for the nodes that call HTTP servers: TLS only for https, one certificate store per process.

httpx builds a certificate-loading SSL context for every transport it creates (tens of ms each),
even when every URL is http://127.0.0.1. Here plain http goes through a pool without one, and
the verifying context (httpx's own default: certifi, or $SSL_CERT_FILE / $SSL_CERT_DIR) is built
the first time an https URL is asked for, then shared by every client of the process.
Connections are opened on asyncio's own streams (nodes/asyncio_network.py) unless a caller hands
in its own network backend. The reply-size cap these clients' callers read up to is set here too
($MINI_N8N_MAX_REPLY_BYTES).
"""

from __future__ import annotations

import os
import socket
import ssl
import threading
import urllib.request

import httpx
import httpcore

from engine.environment import env_value
from engine.errors import NodeOperationError
from nodes.asyncio_network import AsyncioBackend

LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
MAX_REPLY_ENV = "MINI_N8N_MAX_REPLY_BYTES"
DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024

ASYNCIO_BACKEND = AsyncioBackend()  # connections on asyncio's streams: less CPU per request than anyio's
_lock = threading.Lock()
_contexts: dict[str, ssl.SSLContext] = {}


def tls_context() -> ssl.SSLContext:
    """The verifying SSL context, built once per process on first use."""
    with _lock:
        context = _contexts.get("verify")
        if context is None:
            context = _contexts["verify"] = httpx.create_ssl_context()
        return context


def plain_context() -> ssl.SSLContext:
    """What a pool for plain http is given instead: no certificates loaded; never used for TLS."""
    with _lock:
        context = _contexts.get("plain")
        if context is None:
            context = _contexts["plain"] = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return context


class LazyTLSTransport(httpx.AsyncBaseTransport):
    """http:// through a pool set up without TLS, https:// through one made on the first https request.

    `network_backend` (httpcore's) decides how a connection is opened, asyncio's streams unless
    given: the SSRF guard checks the resolved address there, so redirects and every new
    connection pass through it.
    """

    def __init__(self, limits: httpx.Limits, network_backend: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._limits = limits
        self._backend = network_backend
        self._plain: httpx.AsyncHTTPTransport | None = None
        self._tls: httpx.AsyncHTTPTransport | None = None

    def _make(self, verify: ssl.SSLContext) -> httpx.AsyncHTTPTransport:
        transport = httpx.AsyncHTTPTransport(verify=verify, limits=self._limits)
        pool = transport._pool  # httpx has no public way to hand httpcore a network backend
        assert isinstance(pool, httpcore.AsyncConnectionPool) and hasattr(pool, "_network_backend")
        pool._network_backend = self._backend or ASYNCIO_BACKEND
        return transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme == "https":
            if self._tls is None:
                self._tls = self._make(tls_context())
            return await self._tls.handle_async_request(request)
        if self._plain is None:
            self._plain = self._make(plain_context())
        return await self._plain.handle_async_request(request)

    async def aclose(self) -> None:
        for transport in (self._plain, self._tls):
            if transport is not None:
                await transport.aclose()

    @classmethod
    def client(
        cls,
        limits: httpx.Limits,
        *,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
        follow_redirects: bool = False,
        max_redirects: int = 20,
    ) -> httpx.AsyncClient:
        """An AsyncClient on this transport. With proxies in the environment, httpx applies them
        as usual (sharing the one verifying context) but loopback servers are reached directly.
        A guarded client (`network_backend`) always connects directly: through a proxy, the
        address it checks would be the proxy's."""
        direct = cls(limits, network_backend)
        options = {"limits": limits, "follow_redirects": follow_redirects, "max_redirects": max_redirects}
        if network_backend is None and urllib.request.getproxies():
            return httpx.AsyncClient(verify=tls_context(), mounts={f"all://{host}": direct for host in LOOPBACK}, **options)
        return httpx.AsyncClient(transport=direct, **options)


def max_reply_bytes() -> int:
    """The reply-size cap: $MINI_N8N_MAX_REPLY_BYTES, else 16 MiB."""
    raw = (env_value(MAX_REPLY_ENV) or "").strip()
    if not raw:
        return DEFAULT_MAX_REPLY_BYTES
    try:
        value = int(raw)
    except ValueError:
        raise NodeOperationError(f"${MAX_REPLY_ENV} must be a whole number of bytes, not {raw!r}") from None
    if value < 1:
        raise NodeOperationError(f"${MAX_REPLY_ENV} must be at least 1 byte, not {value}")
    return value


def failure_reason(exc: BaseException) -> str:
    """Why a request failed, in the system's words: "Connection refused", "Name or service not
    known"..., found under the wrappers (httpx's own text is "All connection attempts failed")."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, socket.gaierror) and seen.strerror:
            return seen.strerror
        if isinstance(seen, OSError) and isinstance(seen.errno, int) and seen.errno > 0:
            return os.strerror(seen.errno)
        seen = seen.__cause__ or seen.__context__
    return str(exc) or type(exc).__name__
