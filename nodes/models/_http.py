"""HTTP to model servers: retries, limits, errors in the user's terms, over the keep-alive client of nodes/models/_client.py.

Every failure becomes a NodeOperationError that names the server, the model or the credential
(never the key): unreachable, refused credential, unknown model, rate limit or server error after
the retries, the call's deadline, a stream that went idle, a reply over the size cap, a stream
cut mid-reply, a body that is not JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import weakref
from dataclasses import dataclass, field
from typing import Any, AsyncGenerator, AsyncIterator, Mapping

from engine.abort import AbortSignal
from engine.credentials import scrub_secret
from engine.errors import NodeApiError, NodeOperationError
from nodes.http_transport import DEFAULT_MAX_REPLY_BYTES, MAX_REPLY_ENV, failure_reason, max_reply_bytes

from ._client import CUT_OFF, TIMEOUTS, TRANSPORT_ERRORS, InvalidURL, Reply, UndecodableBody, shared_client
from ._common import loads_exact

RETRYABLE = {408, 409, 429, 500, 502, 503, 504}
MAX_BACKOFF_S = 20.0
ERROR_BODY_BYTES = 64 * 1024  # of a refused request's body: enough for the server's message


@dataclass
class Endpoint:
    """Where and how one model call goes; `secret` is kept only to scrub it from messages.

    `timeout_ms` is the deadline of the whole call (retries included); `idle_ms` how long a reply
    that has begun may pause; `max_bytes` the size cap of a reply.
    """

    url: str
    base_url: str
    model: str
    node: str
    credential: str = "the credential"
    headers: dict[str, str] = field(default_factory=dict)
    secret: str | None = None
    timeout_ms: float = 60000
    idle_ms: float = 30000
    max_bytes: int = field(default_factory=max_reply_bytes)  # $MINI_N8N_MAX_REPLY_BYTES when the call is set up
    max_retries: int = 2

    def error(self, message: str, description: str | None = None) -> NodeOperationError:
        return NodeOperationError(self.scrub(message), node=self.node, description=self.scrub(description) if description else None)

    def scrub(self, text: str) -> str:
        return scrub_secret(text, self.secret)


def server_message(body: bytes) -> str:
    """The error text a server put in its body: OpenAI's error.message, Ollama's error, or the text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return text[:300]
    if isinstance(doc, dict):
        err = doc.get("error", doc.get("detail", doc.get("message")))
        if isinstance(err, dict):
            err = err.get("message") or json.dumps(err)
        if isinstance(err, str):
            return err[:300]
    return text[:300]


def retry_delay(attempt: int, headers: Mapping[str, str]) -> float:
    """Seconds to wait before retry `attempt` (1-based): the server's hint, else exponential backoff."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return min(max(float(value) * scale, 0.0), MAX_BACKOFF_S)
            except ValueError:
                pass
    return min(0.5 * 2 ** (attempt - 1), MAX_BACKOFF_S)


# n8n's NodeApiError messages by status: what a model node's refused request reads as in n8n
N8N_STATUS_MESSAGES = {
    400: "Bad request - please check your parameters",
    401: "Authorization failed - please check your credentials",
    402: "Payment required - perhaps check your payment details?",
    403: "Forbidden - perhaps check your credentials?",
    404: "The resource you are requesting could not be found",
    405: "Method not allowed - please check you are using the right HTTP method",
    429: "The service is receiving too many requests from you",
    500: "The service was not able to process your request",
    502: "Bad gateway - the service failed to handle your request",
    503: "Service unavailable - try again later or consider setting this node to retry automatically (in the node settings)",
    504: "Gateway timed out - perhaps try again later?",
}


def n8n_status_message(status: int) -> str:
    if status in N8N_STATUS_MESSAGES:
        return N8N_STATUS_MESSAGES[status]
    if 400 <= status < 500:
        return "Your request is invalid or could not be processed by the service"
    return "The service failed to process your request"


def status_error(ep: Endpoint, status: int, reason: str, body: bytes, retries: int) -> NodeApiError:
    """n8n's message for the status; the description says which server, model or credential and
    what the server said."""
    detail = server_message(body)
    said = f": {detail}" if detail else ""
    code = f"{status} {reason}".strip()
    if status in (401, 403):
        explained = f"the model server at {ep.base_url} refused {ep.credential} ({code}){said}"
    elif status == 404:
        explained = (f'the model server at {ep.base_url} does not know model "{ep.model}" ({code}){said}. '
                     "If the model exists there, check the base URL: OpenAI-compatible servers answer under /v1")
    elif status in RETRYABLE:
        tries = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
        what = "is rate limiting requests" if status == 429 else "failed"
        explained = f"the model server at {ep.base_url} {what} ({code}){tries}{said}"
    else:
        explained = f"the model server at {ep.base_url} rejected the request ({code}){said}"
    return NodeApiError(ep.scrub(n8n_status_message(status)), node=ep.node, description=ep.scrub(explained),
                        api_message=ep.scrub(detail) if detail else None)


def deadline_error(ep: Endpoint) -> NodeOperationError:
    return ep.error(
        f"the model server at {ep.base_url} did not finish its reply within {ep.timeout_ms:g} ms",
        "The node's Timeout option is the deadline of the whole call, retries included",
    )


def mid_reply_error(ep: Endpoint, said: Any) -> NodeOperationError:
    """A streamed reply that reports an error part-way (`said`: the server's words for it)."""
    return ep.error(f"the model server at {ep.base_url} reported an error mid-reply: {said}")


def transport_error(ep: Endpoint, exc: Exception) -> NodeOperationError:
    if isinstance(exc, TIMEOUTS):
        return deadline_error(ep)
    if isinstance(exc, CUT_OFF):
        return ep.error(f"the model server at {ep.base_url} ended the stream mid-reply")
    return ep.error(f"cannot reach the model server at {ep.base_url}: {failure_reason(exc)}")


class _Deadlines:
    """The deadlines of the model calls under way on one event loop, watched by one timer: it is
    armed for the earliest of them and, when it fires, ends the calls that are due and is armed
    again for the next one still under way. A call that ends leaves the timer as it is, so calls
    one after another (an agent's) share it instead of each scheduling and cancelling its own."""

    __slots__ = ("_timer", "_due", "_active", "__weakref__")

    def __init__(self) -> None:
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0  # when the timer fires
        self._active: set[within_deadline] = set()

    def add(self, call: "within_deadline") -> None:
        self._active.add(call)
        if self._timer is None or call._when < self._due:
            if self._timer is not None:
                self._timer.cancel()
            self._arm(call._when)

    def remove(self, call: "within_deadline") -> None:
        self._active.discard(call)

    def _arm(self, when: float) -> None:
        self._due = when
        self._timer = asyncio.get_running_loop().call_at(when, self._fire)  # armed from a call or the timer, on the loop

    def _fire(self) -> None:
        self._timer = None
        due = self._due  # the loop runs a timer once its time has come: every call due by then ends
        later = None
        for call in list(self._active):
            if call._when <= due:
                self._active.discard(call)
                call._expire()
            elif later is None or call._when < later:
                later = call._when
        if later is not None:
            self._arm(later)


# each loop's deadlines, held weakly on both sides: the armed timer (in the loop's heap) and the calls
# under way keep them, and a timer refers to its loop, so a strong value would keep a closed loop for good
_deadlines: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, weakref.ref[_Deadlines]]" = weakref.WeakKeyDictionary()
# the loop last looked up and its deadlines, as weakly: found again with two calls of a reference,
# where the dictionary makes a new reference to hash each time
_last_deadlines: "tuple[weakref.ref[asyncio.AbstractEventLoop], weakref.ref[_Deadlines]] | None" = None


def _deadlines_of(loop: asyncio.AbstractEventLoop) -> _Deadlines:
    global _last_deadlines
    last = _last_deadlines
    if last is not None and last[0]() is loop:
        deadlines = last[1]()
        if deadlines is not None:
            return deadlines
    kept = _deadlines.get(loop)
    deadlines = kept() if kept is not None else None
    if deadlines is None:
        deadlines = _Deadlines()
        kept = _deadlines[loop] = weakref.ref(deadlines)
    _last_deadlines = (weakref.ref(loop), kept)
    return deadlines


class within_deadline:
    """The whole call, retries included, ends by the node's Timeout, and at once on Stop (`signal`
    aborted, from any thread): the task is cancelled, and the cancellation that is the
    deadline's becomes its error, as asyncio.timeout does it, with the loop's one deadline timer
    (_Deadlines) instead of a timer scheduled and cancelled per call: it wraps every model call.
    (A class, not a generator; entered with `with` inside the call's task: nothing in it awaits.)"""

    __slots__ = ("_ep", "_signal", "_watching", "_loop", "_task", "_cancelling", "_when", "_expired", "_deadlines",
                 "__weakref__")

    def __init__(self, ep: Endpoint, signal: AbortSignal | None = None) -> None:
        self._ep = ep
        self._signal = signal
        self._watching = self._stop_from_any_thread  # what the signal is given: the same object is taken back
        self._expired = False

    def __enter__(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        assert task is not None
        self._task = task
        self._cancelling = task.cancelling()
        self._when = loop.time() + max(self._ep.timeout_ms, 1) / 1000.0
        deadlines = self._deadlines = _deadlines_of(loop)
        deadlines.add(self)
        if self._signal is not None:
            self._signal.watch(self._watching)

    def _expire(self) -> None:
        self._expired = True
        self._task.cancel()

    def _stop_from_any_thread(self) -> None:
        self._loop.call_soon_threadsafe(self._stop)

    def _stop(self) -> None:
        task = self._task
        if not task.done() and not task.cancelling():  # the engine may have cancelled it already
            task.cancel()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if self._signal is not None:
            self._signal.unwatch(self._watching)
        self._deadlines.remove(self)
        if self._expired and self._task.uncancel() <= self._cancelling and kind is asyncio.CancelledError:
            raise deadline_error(self._ep) from None
        if kind is not None and issubclass(kind, TimeoutError):  # one the call raised itself reads the same
            raise deadline_error(self._ep) from None


async def open_response(ep: Endpoint, body: dict[str, Any] | bytes) -> Reply:
    """POST `body` (or JSON already encoded) and return the (streaming) reply once its status is OK,
    retrying 429/5xx.

    The caller must `aclose()` the reply; a cancelled caller closes the connection that way.
    Run it inside `with within_deadline(...)`: the client sets no timeouts of its own, the deadline rules.
    """
    client = shared_client()
    attempt = 0
    while True:
        try:
            response = await client.post_json(ep.url, body, ep.headers)
        except InvalidURL:
            raise ep.error(f"the model server URL {ep.base_url} is not a valid http(s) URL") from None
        except TRANSPORT_ERRORS as exc:
            raise transport_error(ep, exc) from None
        if response.status_code < 400:
            return response
        try:
            payload = await read_capped(response, ERROR_BODY_BYTES)
        except (*TRANSPORT_ERRORS, UndecodableBody):
            payload = b""
        finally:
            await response.aclose()
        if response.status_code in RETRYABLE and attempt < ep.max_retries:
            attempt += 1
            await asyncio.sleep(retry_delay(attempt, response.headers))
            continue
        raise status_error(ep, response.status_code, response.reason_phrase, payload, attempt)


async def read_capped(response: Reply, limit: int) -> bytes:
    """At most `limit` bytes of a body (an error body is for its message only)."""
    chunks: list[bytes] = []
    size = 0
    async with contextlib.aclosing(response.chunks()) as body:
        async for chunk in body:
            chunks.append(chunk)
            size += len(chunk)
            if size >= limit:
                break
    return b"".join(chunks)[:limit]


class IdleWatch:
    """Ends a wait that lasts longer than `limit_s` by cancelling the waiting task, as asyncio.timeout
    would, with one timer per period instead of one per chunk (a streamed reply is many chunks)."""

    def __init__(self, limit_s: float) -> None:
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        self._cancelling = task.cancelling()
        self._limit = limit_s
        self._since: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.expired = False

    def waiting(self) -> None:
        self._since = self._loop.time()
        if self._timer is None:
            self._timer = self._loop.call_at(self._since + self._limit, self._check)

    def done(self) -> None:
        self._since = None

    def _check(self) -> None:
        self._timer = None
        if self._since is None:
            return  # not waiting now: the next wait arms the timer again
        due = self._since + self._limit
        if self._loop.time() >= due:
            self.expired = True
            self._task.cancel()
        else:
            self._timer = self._loop.call_at(due, self._check)

    def owns_cancellation(self) -> bool:
        """Whether the task's cancellation is this watch's expiry (and no other one is pending)."""
        return self.expired and self._task.uncancel() <= self._cancelling

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


async def body_chunks(ep: Endpoint, response: Reply) -> AsyncIterator[bytes]:
    """The body chunk by chunk: once it has begun, a pause longer than the idle limit ends the call
    with an error, as does a body over the size cap; transport failures become the user's errors."""
    size = 0
    chunks: AsyncGenerator[bytes, None] | None = None
    watch: IdleWatch | None = None
    try:
        chunks = response.chunks()
        while True:
            if size:  # the first byte may take as long as the deadline allows (a long prompt to read)
                if response.body_read():  # nothing left to wait for: no idle timer, no read of the end
                    return
                watch = watch or IdleWatch(max(ep.idle_ms, 1) / 1000.0)
                watch.waiting()
            try:
                chunk = await anext(chunks)
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if watch is None or not watch.owns_cancellation():
                    raise
                raise ep.error(
                    f"the model server at {ep.base_url} sent nothing for {ep.idle_ms:g} ms in the middle of its reply",
                    "The node's Idle Timeout option is how long a reply that has begun may pause",
                ) from None
            if watch is not None:
                watch.done()
            size += len(chunk)
            if size > ep.max_bytes:
                raise _too_large(ep)
            yield chunk
    except TRANSPORT_ERRORS as exc:
        raise transport_error(ep, exc) from None
    except UndecodableBody as exc:
        raise ep.error(f"the model server at {ep.base_url} sent a reply that cannot be read: {exc}") from None
    finally:
        if watch is not None:
            watch.close()
        if chunks is not None:
            await chunks.aclose()


def _too_large(ep: Endpoint) -> NodeOperationError:
    return ep.error(
        f"the model server at {ep.base_url} sent a reply larger than {ep.max_bytes:,} bytes; it was refused",
        f"The cap is ${MAX_REPLY_ENV} ({DEFAULT_MAX_REPLY_BYTES:,} bytes unless set)",
    )


def whole_body(ep: Endpoint, response: Reply) -> bytes | None:
    """The body, if all of it came with the head (a fast server's reply), within the size cap."""
    whole = response.whole_body()
    if whole is not None and len(whole) > ep.max_bytes:
        raise _too_large(ep)
    return whole


async def read_body(ep: Endpoint, response: Reply) -> bytes:
    """The whole body of a non-streamed reply; taken at once when it came with the head."""
    whole = whole_body(ep, response)
    if whole is not None:
        return whole
    async with contextlib.aclosing(body_chunks(ep, response)) as chunks:
        parts = [chunk async for chunk in chunks]
    return b"".join(parts)


async def read_json(ep: Endpoint, response: Reply) -> Any:
    """The whole body of a non-streamed reply, parsed."""
    return parse_json(ep, await read_body(ep, response))


def parse_json(ep: Endpoint, payload: bytes | str) -> Any:
    """The JSON value of a reply or a streamed event, as the standard library reads it (by orjson
    when that reads it the same); text that is not JSON is an error quoting it."""
    try:
        return loads_exact(payload)
    except (ValueError, RecursionError):
        text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
        snippet = text.strip()[:120]
        raise ep.error(f"the model server at {ep.base_url} answered with text that is not JSON: {snippet!r}") from None


async def lines(ep: Endpoint, response: Reply) -> AsyncIterator[str]:
    """The lines of a streamed body (LF or CRLF ends), within the idle limit and the size cap."""
    parts: list[bytes] = []  # of a line not yet ended
    async with contextlib.aclosing(body_chunks(ep, response)) as chunks:
        async for chunk in chunks:
            parts.append(chunk)
            if chunk.find(b"\n") < 0:  # not `in`, which raises and clears a TypeError each time (encode_json)
                continue
            *complete, rest = b"".join(parts).split(b"\n")
            parts = [rest] if rest else []
            for raw in complete:
                yield raw.removesuffix(b"\r").decode("utf-8", "replace")
    if parts:
        yield b"".join(parts).removesuffix(b"\r").decode("utf-8", "replace")


async def drain(stream: AsyncIterator[Any], limit_s: float = 1.0) -> None:
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
