"""Sending an HttpCall over httpx and reading the whole answer; failures worded as n8n's
NodeApiError words them (ECONNREFUSED, ENOTFOUND, a timeout)."""

from __future__ import annotations

import asyncio
import socket
import ssl
import weakref
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from engine.errors import NodeOperationError
from nodes.http_transport import MAX_REPLY_ENV, LazyTLSTransport, failure_reason, max_reply_bytes
from nodes.tools.ssrf_guard import GuardedBackend, SsrfBlocked, SsrfPolicy

from .build import HttpCall
from .encode import js_string, json_text, multipart, qs_stringify, with_query

LIMITS = httpx.Limits(max_keepalive_connections=16)
REFUSED = "The service refused the connection - perhaps it is offline"
NOT_FOUND = "The connection cannot be established, this usually occurs due to an incorrect host (domain) value"
ABORTED = "The connection was aborted, perhaps the server is offline"
SSL_ISSUE = "SSL Issue: consider using the 'Ignore SSL issues' option"
RESET = ("The connection to the server was closed unexpectedly, perhaps it is offline. You can retry the request "
         "immediately or wait and retry later.")

_Key = tuple[SsrfPolicy | None, bool, str | None, int]
_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[_Key, httpx.AsyncClient]]" = weakref.WeakKeyDictionary()


@dataclass
class Reply:
    """An answer as n8n's request helper hands it over: status, status text, headers, body bytes."""

    status: int
    reason: str
    headers: dict[str, Any]
    content: bytes

    @property
    def content_type(self) -> str:
        value = self.headers.get("content-type", "")
        return value if isinstance(value, str) else ""

    def text(self) -> str:
        charset = None
        for part in self.content_type.split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset":
                charset = value.strip('"') or None
        try:
            return self.content.decode(charset or "utf-8", errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")


class _UnverifiedTLSTransport(LazyTLSTransport):
    """Ignore SSL Issues: https without checking the certificate (the SSRF guard still applies)."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "https":
            return await super().handle_async_request(request)
        if self._tls is None:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            self._tls = self._make(context)
        return await self._tls.handle_async_request(request)


def _client(policy: SsrfPolicy | None, verify: bool, proxy: str | None, max_redirects: int) -> httpx.AsyncClient:
    per_loop = _clients.setdefault(asyncio.get_running_loop(), {})
    key = (policy, verify, proxy, max_redirects)
    client = per_loop.get(key)
    if client is None or client.is_closed:
        backend = GuardedBackend(policy) if policy is not None else None
        if proxy is not None:
            client = httpx.AsyncClient(verify=verify, proxy=proxy, limits=LIMITS, max_redirects=max_redirects, trust_env=False)
        elif verify:
            client = LazyTLSTransport.client(LIMITS, network_backend=backend, max_redirects=max_redirects)
        else:
            client = httpx.AsyncClient(transport=_UnverifiedTLSTransport(LIMITS, backend), limits=LIMITS,
                                       max_redirects=max_redirects)
        per_loop[key] = client
    return client


def _headers(headers: dict[str, Any]) -> dict[str, str]:
    return {str(k): v if isinstance(v, str) else js_string(v) for k, v in headers.items() if v is not None}


def _without(headers: dict[str, str], name: str) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() != name}


def wire_request(call: HttpCall) -> tuple[str, dict[str, str], bytes | None]:
    """The URL (query serialized), headers and body bytes the call puts on the wire."""
    query = ""
    if call.qs:
        query = qs_stringify(call.qs, call.array_format if call.array_format in ("repeat", "brackets") else "indices")
    url = with_query(call.url, query)
    headers = _headers(call.headers)
    has_type = any(k.lower() == "content-type" for k in headers)
    content: bytes | None = None
    if call.form_data is not None:
        content, content_type = multipart(call.form_data)
        headers = {**_without(headers, "content-type"), "content-type": content_type}
    elif call.form is not None:
        content = qs_stringify(call.form).encode()
        headers = {**_without(headers, "content-type"), "Content-Type": "application/x-www-form-urlencoded"}
    elif call.raw is not None:
        content = call.raw.encode()
    elif call.body is not None:
        if isinstance(call.body, str):
            content = call.body.encode()
        else:
            content = json_text(call.body).encode()
            if not has_type:
                headers["content-type"] = "application/json"
    return url, headers, content


def _connect_error(exc: httpx.HTTPError, url: str) -> tuple[str, str]:
    """n8n's message and description for a request that got no answer."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return SSL_ISSUE, seen.verify_message or str(seen)
        if isinstance(seen, socket.gaierror):
            return NOT_FOUND, f"getaddrinfo ENOTFOUND {host}"
        if isinstance(seen, ConnectionRefusedError):
            return REFUSED, f"connect ECONNREFUSED {host}:{port}"
        if isinstance(seen, ConnectionResetError):
            return RESET, "socket hang up"
        seen = seen.__cause__ or seen.__context__
    reason = failure_reason(exc)
    if "refused" in reason.lower():
        return REFUSED, f"connect ECONNREFUSED {host}:{port}"
    if "name or service not known" in reason.lower() or "nodename nor servname" in reason.lower():
        return NOT_FOUND, f"getaddrinfo ENOTFOUND {host}"
    return reason, ""


async def send(call: HttpCall, node: str) -> Reply:
    """Send the call and read its whole answer (up to $MINI_N8N_MAX_REPLY_BYTES)."""
    url, headers, content = wire_request(call)
    policy = SsrfPolicy.from_env()
    if policy is not None and call.proxy is not None:
        raise NodeOperationError(f'HTTP Request "{node}": the Proxy option cannot be used with SSRF protection on',
                                 node=node, description="Through a proxy, the address checked would be the proxy's; "
                                                        "remove the option or turn N8N_SSRF_PROTECTION_ENABLED off")
    client = _client(policy, call.verify, call.proxy, call.max_redirects)
    limit = max_reply_bytes()
    try:
        async with asyncio.timeout(call.timeout_ms / 1000.0):
            request = client.build_request(call.method, url, headers=headers, content=content, timeout=None)
            answer = await client.send(request, stream=True, follow_redirects=call.follow_redirects, auth=call.auth)
            try:
                chunks: list[bytes] = []
                size = 0
                async for chunk in answer.aiter_bytes():
                    size += len(chunk)
                    if size > limit:
                        raise NodeOperationError(
                            f"The response of {call.method} {url} is larger than {limit} bytes",
                            node=node, description=f"${MAX_REPLY_ENV} sets the largest response read")
                    chunks.append(chunk)
            finally:
                await answer.aclose()
    except TimeoutError:
        raise NodeOperationError(ABORTED, node=node, description=f"timeout of {call.timeout_ms:g}ms exceeded") from None
    except SsrfBlocked as exc:
        raise NodeOperationError(str(exc), node=node, description=exc.description) from None
    except httpx.TooManyRedirects:
        raise NodeOperationError("Maximum number of redirects exceeded", node=node) from None
    except httpx.HTTPError as exc:
        message, description = _connect_error(exc, url)
        raise NodeOperationError(message, node=node, description=description or None) from None
    headers_out: dict[str, Any] = {}
    for key, value in answer.headers.multi_items():
        key = key.lower()
        if key == "set-cookie":
            headers_out.setdefault(key, []).append(value)
        elif key in headers_out:
            headers_out[key] = f"{headers_out[key]}, {value}"
        else:
            headers_out[key] = value
    return Reply(answer.status_code, answer.reason_phrase, headers_out, b"".join(chunks))
