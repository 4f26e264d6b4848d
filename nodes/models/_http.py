"""HTTP to model servers: one pooled httpx client per event loop, retries, errors in the user's terms.

Every failure becomes a NodeOperationError that names the server, the model or the credential
(never the key): unreachable, refused credential, unknown model, rate limit or server error after
the retries, a timeout, a stream cut mid-reply, a body that is not JSON.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

import httpx

from engine.errors import NodeOperationError

RETRYABLE = {408, 409, 429, 500, 502, 503, 504}
MAX_BACKOFF_S = 20.0
LIMITS = httpx.Limits(max_keepalive_connections=8)
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")

_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient]" = weakref.WeakKeyDictionary()


def shared_client() -> httpx.AsyncClient:
    """The keep-alive client of the running loop: an agent iteration must not pay a TLS setup."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        direct = httpx.AsyncHTTPTransport(limits=LIMITS)  # a proxy from the environment never sees loopback
        client = httpx.AsyncClient(limits=LIMITS, mounts={f"all://{host}": direct for host in LOOPBACK})
        _clients[loop] = client
    return client


@dataclass
class Endpoint:
    """Where and how one model call goes; `secret` is kept only to scrub it from messages."""

    url: str
    base_url: str
    model: str
    node: str
    credential: str = "the credential"
    headers: dict[str, str] = field(default_factory=dict)
    secret: str | None = None
    timeout_ms: float = 60000
    max_retries: int = 2

    def error(self, message: str, description: str | None = None) -> NodeOperationError:
        return NodeOperationError(self.scrub(message), node=self.node, description=self.scrub(description) if description else None)

    def scrub(self, text: str) -> str:
        if self.secret and len(self.secret) >= 4:
            text = text.replace(self.secret, "***")
        return text

    @property
    def timeout(self) -> httpx.Timeout:
        return httpx.Timeout(max(self.timeout_ms, 1) / 1000.0)


def server_message(body: bytes) -> str:
    """The error text a server put in its body: OpenAI's error.message, Ollama's error, or the text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(text)
    except ValueError:
        return text[:300]
    if isinstance(doc, dict):
        err = doc.get("error", doc.get("detail", doc.get("message")))
        if isinstance(err, dict):
            err = err.get("message") or json.dumps(err)
        if isinstance(err, str):
            return err[:300]
    return text[:300]


def retry_delay(attempt: int, headers: httpx.Headers) -> float:
    """Seconds to wait before retry `attempt` (1-based): the server's hint, else exponential backoff."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return min(max(float(value) * scale, 0.0), MAX_BACKOFF_S)
            except ValueError:
                pass
    return min(0.5 * 2 ** (attempt - 1), MAX_BACKOFF_S)


def status_error(ep: Endpoint, status: int, reason: str, body: bytes, retries: int) -> NodeOperationError:
    detail = server_message(body)
    said = f": {detail}" if detail else ""
    code = f"{status} {reason}".strip()
    if status in (401, 403):
        return ep.error(f"the model server at {ep.base_url} refused {ep.credential} ({code}){said}")
    if status == 404:
        return ep.error(
            f'the model server at {ep.base_url} does not know model "{ep.model}" ({code}){said}',
            "If the model exists there, check the base URL: OpenAI-compatible servers answer under /v1",
        )
    if status in RETRYABLE:
        tries = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
        what = "is rate limiting requests" if status == 429 else "failed"
        return ep.error(f"the model server at {ep.base_url} {what} ({code}){tries}{said}")
    return ep.error(f"the model server at {ep.base_url} rejected the request ({code}){said}")


def transport_error(ep: Endpoint, exc: httpx.HTTPError) -> NodeOperationError:
    if isinstance(exc, httpx.TimeoutException):
        return ep.error(f"the model server at {ep.base_url} did not answer within {ep.timeout_ms:g} ms")
    if isinstance(exc, httpx.RemoteProtocolError):
        return ep.error(f"the model server at {ep.base_url} ended the stream mid-reply")
    reason = str(exc) or type(exc).__name__
    return ep.error(f"cannot reach the model server at {ep.base_url}: {reason}")


async def open_response(ep: Endpoint, body: dict[str, Any]) -> httpx.Response:
    """POST `body` and return the (streaming) response once its status is OK, retrying 429/5xx.

    The caller must `aclose()` the response; a cancelled caller closes the connection that way.
    """
    client = shared_client()
    attempt = 0
    while True:
        try:
            request = client.build_request("POST", ep.url, json=body, headers=ep.headers, timeout=ep.timeout)
        except (httpx.InvalidURL, httpx.UnsupportedProtocol):
            raise ep.error(f"the model server URL {ep.base_url} is not a valid http(s) URL") from None
        try:
            response = await client.send(request, stream=True)
        except httpx.UnsupportedProtocol:
            raise ep.error(f"the model server URL {ep.base_url} is not a valid http(s) URL") from None
        except httpx.HTTPError as exc:
            raise transport_error(ep, exc) from None
        if response.status_code < 400:
            return response
        try:
            payload = await response.aread()
        except httpx.HTTPError:
            payload = b""
        finally:
            await response.aclose()
        if response.status_code in RETRYABLE and attempt < ep.max_retries:
            attempt += 1
            await asyncio.sleep(retry_delay(attempt, response.headers))
            continue
        raise status_error(ep, response.status_code, response.reason_phrase, payload, attempt)


async def read_json(ep: Endpoint, response: httpx.Response) -> Any:
    """The whole body of a non-streamed reply, parsed."""
    try:
        payload = await response.aread()
    except httpx.HTTPError as exc:
        raise transport_error(ep, exc) from None
    return parse_json(ep, payload)


def parse_json(ep: Endpoint, payload: bytes | str) -> Any:
    try:
        return json.loads(payload)
    except ValueError:
        text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
        snippet = text.strip()[:120]
        raise ep.error(f"the model server at {ep.base_url} answered with text that is not JSON: {snippet!r}") from None


async def lines(ep: Endpoint, response: httpx.Response) -> AsyncIterator[str]:
    """The lines of a streamed body; transport failures become the user's errors."""
    try:
        async for line in response.aiter_lines():
            yield line
    except httpx.HTTPError as exc:
        raise transport_error(ep, exc) from None


async def drain(stream: AsyncIterator[str], limit_s: float = 1.0) -> None:
    """Read what follows the end marker (the chunked body's end) so the connection is reused;
    a server that keeps the body open gets `limit_s`, then the connection is dropped."""
    try:
        async with asyncio.timeout(limit_s):
            async for _line in stream:
                pass
    except (TimeoutError, NodeOperationError):
        pass


def join_url(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")
