"""Webhook and Form triggers over HTTP, as n8n serves them in production.

- `/webhook/<path>`: the Webhook node listening at that path for the request's method (a path
  with `:name` segments is `<webhookId>/<path>`, its values the item's `params`). The request
  becomes n8n's item `{headers, params, query, body, webhookUrl, executionMode}`; the answer
  follows the node's Respond setting: at once (`{"message": "Workflow was started"}`), when the
  last node finishes (its first item's JSON, all items, or no body), or what a Respond to Webhook
  node set, as soon as its run is stored (the execution goes on).
- `/form/<path>`: GET shows the form (a plain HTML page), POST submits its `field-N` values.

A request nothing listens to gets n8n's 404 and its words; a body that cannot be read a 4xx
saying why; none of them starts or stores an execution.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any, Callable
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..errors import MiniN8nError
from ..run_data import ExecutionState
from .jobs import Job
from .runners import StillRunning
from .workflows import WebhookEndpoint

RESPONSE_POLL_S = 0.05  # how often a request answered by a Respond to Webhook node looks for its response
MAX_BODY_BYTES = 16 * 1024 * 1024  # n8n's default N8N_PAYLOAD_SIZE_MAX (16 MiB)
NOT_FOUND_HINT = ("The workflow must be active for a production URL to run successfully. You can activate the workflow "
                  "using the toggle in the top-right of the editor. Note that unlike test URL calls, production URL calls "
                  "aren't shown on the canvas (only in the executions list)")  # n8n's words
JSON_TYPE = "application/json; charset=utf-8"
log = logging.getLogger("mini_n8n.serve")


class WebhookError(Exception):
    """A request the server answers with `status` and a JSON body (n8n's shape: code, message, hint)."""

    def __init__(self, status: int, message: str, hint: str | None = None, code: int | None = None,
                 text: bool = False) -> None:
        super().__init__(message)
        self.status, self.message, self.hint = status, message, hint
        self.code = status if code is None else code
        self.text = text  # answered as the bare text, as n8n's Webhook node writes some refusals

    def response(self) -> Response:
        if self.text:
            return Response(self.message.encode("utf-8"), self.status)
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.hint:
            body["hint"] = self.hint
        return json_response(body, self.status)


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return Response(text.encode("utf-8"), status, headers={"content-type": JSON_TYPE, **(headers or {})})


def empty_response(status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(b"", status, headers={"content-type": JSON_TYPE, **(headers or {})})


def body_response(body: Any, status: int, headers: dict[str, str], content_type: str | None = None) -> Response:
    """A body as Express sends it: text as HTML unless a content type is set, anything else as JSON."""
    headers = dict(headers)
    if content_type:
        headers["content-type"] = content_type
    if isinstance(body, str):
        headers.setdefault("content-type", "text/html; charset=utf-8")
        return Response(body.encode("utf-8"), status, headers=headers)
    if "content-type" in headers:
        return Response(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), status, headers=headers)
    return json_response(body, status, headers)


# ----- reading a request --------------------------------------------------------------------------
def request_headers(request: Request) -> dict[str, str]:
    """The headers as Node.js gives them: lower-case names in arrival order, repeats joined by ", "."""
    out: dict[str, str] = {}
    for raw_name, raw_value in request.headers.raw:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def parse_query(text: str) -> dict[str, Any]:
    """A query string as Express's parser (qs) reads it: repeated keys become lists, `a[b]=1`
    nested objects, `a[]=1` lists."""
    out: dict[str, Any] = {}
    for key, value in parse_qsl(text, keep_blank_values=True):
        name, _, rest = key.partition("[")
        parts = [name] + ([p.rstrip("]") for p in ("[" + rest).split("[")[1:]] if rest else [])
        target: Any = out
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            if isinstance(target, list):  # a[]: the list takes the value
                target.append(value)
                break
            if last:
                if part == "":
                    break
                held = target.get(part)
                target[part] = value if held is None else (held + [value] if isinstance(held, list) else [held, value])
            else:
                following = parts[index + 1]
                held = target.get(part)
                if not isinstance(held, (dict, list)):
                    held = target[part] = [] if following == "" else {}
                target = held
    return out


async def read_body(request: Request, limit: int = MAX_BODY_BYTES,
                    error: Callable[[int, str], Exception] = WebhookError) -> bytes:
    """The request's body, refused with a 413 `error` as soon as it is known to pass `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise error(413, f"the request body is {declared} bytes; at most {limit} are accepted")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise error(413, f"the request body is over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _content_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def _form_values(request: Request, data: bytes) -> dict[str, list[str]]:
    """The fields of a form body (multipart or URL-encoded); a file part is refused."""
    async def replay() -> dict[str, Any]:
        return {"type": "http.request", "body": data, "more_body": False}

    try:
        form = await Request(request.scope, replay).form()
    except Exception as exc:
        raise WebhookError(422, "Failed to parse request body", str(exc)) from None
    values: dict[str, list[str]] = {}
    for name, value in form.multi_items():
        if not isinstance(value, str):
            raise WebhookError(415, f'the form field "{name}" is a file; mini-n8n serve does not take files')
        values.setdefault(name, []).append(value)
    return values


async def submitted_form(request: Request) -> dict[str, list[str]]:
    """The fields of a form submission (a Form Trigger's or a waiting form's); any other body is refused (415)."""
    data = await read_body(request)
    kind = _content_type(request)
    if kind not in ("multipart/form-data", "application/x-www-form-urlencoded"):
        raise WebhookError(415, f'a form is submitted as multipart/form-data, not "{kind or "no content type"}"')
    return await _form_values(request, data)


async def parse_body(request: Request) -> Any:
    """The body as n8n's webhook gives it: JSON parsed, URL-encoded and multipart fields as an
    object, text as a string, no body as {}. Other bodies (binary, XML) are refused (415)."""
    data = await read_body(request)
    kind = _content_type(request)
    if not data:
        return {}
    if kind == "application/json" or kind.endswith("+json"):
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise WebhookError(422, "Failed to parse request body", str(exc)) from None  # n8n's status and words
    if kind == "application/x-www-form-urlencoded":
        return parse_query(data.decode("utf-8", errors="replace"))
    if kind == "multipart/form-data":
        return {k: v[0] if len(v) == 1 else v for k, v in (await _form_values(request, data)).items()}
    if kind == "text/plain":
        return data.decode("utf-8", errors="replace")
    raise WebhookError(415, f'a body of type "{kind or "unknown"}" is not supported by mini-n8n serve (n8n reads it as '
                            "binary data or XML); send JSON, form fields or text/plain")


def _with_headers(response: Response, headers: dict[str, str]) -> Response:
    for name, value in headers.items():
        response.headers[name] = value
    return response


# ----- the server part ----------------------------------------------------------------------------
class WebhookServer:
    """Finds the trigger a request is for, starts its execution and answers as the trigger says."""

    def __init__(self, endpoints: list[WebhookEndpoint], runner: Any, base_url: str) -> None:
        self.endpoints = endpoints
        self.runner = runner
        self._going_on: set[asyncio.Future[ExecutionState]] = set()
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"

    def methods(self, kind: str, path: str) -> list[str]:
        """The HTTP methods something listens to at this path (a form: GET and POST)."""
        found = self._matches(kind, path[:-1] if path.endswith("/") else path)
        if kind == "form":
            return ["GET", "POST"] if found else []
        return sorted({e.method for e, _ in found})

    def _matches(self, kind: str, path: str) -> list[tuple[WebhookEndpoint, dict[str, str]]]:
        mine = [e for e in self.endpoints if e.kind == kind]
        found: list[tuple[WebhookEndpoint, dict[str, str]]] = [(e, {}) for e in mine if not e.dynamic and e.path == path]
        if not found:
            segments = path.split("/")
            dynamic = [(e, e.match(segments)) for e in mine if e.dynamic]
            matched = [(e, p) for e, p in dynamic if p is not None]
            # the path with the most fixed segments wins, as n8n picks among dynamic webhooks
            matched.sort(key=lambda pair: -sum(1 for s in pair[0].segments if not s.startswith(":")))
            found = matched  # type: ignore[assignment]
        return found

    def find(self, kind: str, method: str, path: str) -> tuple[WebhookEndpoint, dict[str, str]]:
        """The endpoint for a request and its path parameters, or n8n's 404."""
        path = path[:-1] if path.endswith("/") else path
        found = self._matches(kind, path)
        for endpoint, params in found:
            if endpoint.method == method or (kind == "form" and method == "GET"):
                return endpoint, params
        methods = sorted({e.method for e, _ in found} | ({"GET"} if kind == "form" and found else set()))
        if methods:
            listed = methods[0] if len(methods) == 1 else ", ".join(methods[:-1]) + " or " + methods[-1]
            raise WebhookError(404, f"This webhook is not registered for {method} requests. Did you mean to make a "
                                    f"{listed} request?")
        raise WebhookError(404, f'The requested webhook "{method} {path}" is not registered.', NOT_FOUND_HINT)

    def cors(self, kind: str, request: Request) -> dict[str, str]:
        """n8n's CORS headers for a request from a web page (one with an Origin): the path's methods
        and the page's origin; for a preflight (OPTIONS) also how long to keep them and the headers
        asked for."""
        if "origin" not in request.headers:
            return {}
        methods = self.methods(kind, request.path_params["path"])
        if not methods:
            asked = request.headers.get("access-control-request-method", request.method)
            self.find(kind, asked, request.path_params["path"])  # raises n8n's 404
        headers = {"access-control-allow-methods": ", ".join(["OPTIONS", *methods]),
                   "access-control-allow-origin": request.headers["origin"]}
        if request.method == "OPTIONS":
            headers["access-control-max-age"] = "300"
            if request.headers.get("access-control-request-headers"):
                headers["access-control-allow-headers"] = request.headers["access-control-request-headers"]
        return headers

    async def webhook(self, request: Request) -> Response:
        try:
            cors = self.cors("webhook", request)
        except WebhookError as exc:
            return self._refused(request, exc)
        if request.method == "OPTIONS":
            return Response(b"", 204, headers=cors)
        return _with_headers(await self._webhook(request), cors)

    async def _webhook(self, request: Request) -> Response:
        try:
            endpoint, params = self.find("webhook", request.method, request.path_params["path"])
            self._check_ip(endpoint, request)
            body = await parse_body(request)
        except WebhookError as exc:
            return self._refused(request, exc)
        from nodes.triggers.webhook import request_item

        item = request_item(request_headers(request), params, parse_query(request.url.query), body,
                            f"{self.base_url}webhook/{endpoint.path}")
        return await self._run(endpoint, item)

    async def form(self, request: Request) -> Response:
        try:
            cors = self.cors("form", request)
        except WebhookError as exc:
            return self._refused(request, exc)
        if request.method == "OPTIONS":
            return Response(b"", 204, headers=cors)
        return _with_headers(await self._form(request), cors)

    async def _form(self, request: Request) -> Response:
        from nodes.triggers import form_trigger
        from nodes.triggers.schedule_trigger import timezone_name

        try:
            endpoint, _params = self.find("form", request.method, request.path_params["path"])
            if request.method == "GET":
                return HTMLResponse(form_trigger.render_form(endpoint.trigger.parameters, request.url.query))
            values = await submitted_form(request)
        except WebhookError as exc:
            return self._refused(request, exc)
        trigger = endpoint.trigger
        item = form_trigger.form_item(trigger.parameters, float(trigger.typeVersion), values,
                                      parse_query(request.url.query), "production", timezone_name(endpoint.workflow))
        return await self._run(endpoint, item, on_received={"status": 200})

    @staticmethod
    def _refused(request: Request, exc: WebhookError) -> Response:
        log.warning("%d %s %s: %s", exc.status, request.method, request.url.path, exc.message)
        return exc.response()

    @staticmethod
    def _check_ip(endpoint: WebhookEndpoint, request: Request) -> None:
        """n8n's IP allowlist: an entry contained in the client's address lets it in."""
        options = endpoint.trigger.parameters.get("options") or {}
        allowed = options.get("ipWhitelist") if isinstance(options, dict) else None
        if not allowed:
            return
        entries = allowed if isinstance(allowed, list) else [e.strip() for e in str(allowed).split(",")]
        client = request.client.host if request.client else ""
        if not any(entry and entry in client for entry in entries):
            raise WebhookError(403, "IP is not whitelisted to access the webhook!", text=True)

    async def _run(self, endpoint: WebhookEndpoint, item: dict[str, Any], on_received: Any = None) -> Response:
        job = Job.new(endpoint.workflow, endpoint.trigger.name, [item], uuid.uuid4().hex[:12])
        return await self.answer(job, endpoint.response, endpoint.source, on_received)

    async def answer(self, job: Job, settings: Any, source: str, on_received: Any = None, since_ms: float = 0.0) -> Response:
        """Run the job (a new execution, or a waiting one resumed) and answer as `settings`
        (nodes.triggers.webhook.ResponseSettings) say; a Respond to Webhook node's response counts
        from `since_ms` on."""
        if settings.mode == "onReceived":
            try:
                await self.runner.start(job)
            except Exception as exc:  # the broker refused the job
                log.error("execution %s could not be queued: %s", job.execution_id, exc)
                return json_response({"code": 503, "message": f"the job queue is unavailable: {exc}"}, 503)
            if settings.data == "noData":
                return empty_response(settings.code, settings.headers)
            if settings.data:
                return body_response(settings.data, settings.code, settings.headers)
            return json_response(on_received if on_received is not None else {"message": "Workflow was started"},
                                 settings.code, settings.headers)
        submitted = asyncio.ensure_future(self.runner.submit(job))
        try:
            if settings.mode == "responseNode":
                made = await self._first_response(job.execution_id, submitted, since_ms)
                if made is not None:
                    return self._made_response(made)
            state = await submitted
        except StillRunning as exc:
            log.warning("%s", exc)
            return json_response({"code": 504, "message": str(exc), "executionId": job.execution_id}, 504)
        except MiniN8nError as exc:
            log.error("execution %s of %s failed to run: %s", job.execution_id, source, exc)
            return json_response({"code": 500, "message": str(exc), "executionId": job.execution_id}, 500)
        except Exception as exc:
            log.error("execution %s could not be queued: %s", job.execution_id, exc)
            return json_response({"code": 503, "message": f"the job queue is unavailable: {exc}"}, 503)
        if settings.mode == "responseNode":
            return self._respond_node_answer(state, since_ms)
        return self._last_node_answer(settings, state)

    async def _first_response(self, execution_id: str, submitted: "asyncio.Future[ExecutionState]",
                              since_ms: float = 0.0) -> dict[str, Any] | None:
        """The response a Respond to Webhook node made, as soon as its run is stored (the execution
        goes on), or None once the execution settled without one before."""
        from nodes.triggers.respond_to_webhook import RESPONSE_KEY

        store = self.runner.engine.store
        while True:
            done, _ = await asyncio.wait({submitted}, timeout=RESPONSE_POLL_S)
            if done:
                return None
            if not store.exists(execution_id):
                continue
            made = [(task.start_time, task.metadata[RESPONSE_KEY]) for _node, _index, task in store.runs(execution_id)
                    if RESPONSE_KEY in task.metadata and task.start_time >= since_ms]
            if made:
                self._going_on.add(submitted)  # the execution goes on after the answer; its end is logged
                submitted.add_done_callback(self._went_on)
                return min(made, key=lambda pair: pair[0])[1]

    def _went_on(self, future: "asyncio.Future[ExecutionState]") -> None:
        self._going_on.discard(future)
        if not future.cancelled() and future.exception() is not None:
            log.error("an answered webhook execution failed to run: %s", future.exception())

    @staticmethod
    def _made_response(made: dict[str, Any]) -> Response:
        headers = {str(k): str(v) for k, v in (made.get("headers") or {}).items()}
        status = int(made.get("statusCode") or 200)
        if "body" not in made:
            return Response(b"", status, headers=headers)
        return body_response(made["body"], status, headers)

    @staticmethod
    def _respond_node_answer(state: ExecutionState, since_ms: float = 0.0) -> Response:
        from nodes.triggers.respond_to_webhook import response_of

        made = response_of(state, since_ms)
        if made is not None:
            return WebhookServer._made_response(made)
        if state.status == "paused":
            return json_response({"executionId": state.id, "status": "paused"}, 202)
        if state.status != "success":
            return json_response({"message": "Error in workflow"}, 500)  # n8n's answer to a failed execution
        return empty_response(200)  # no Respond to Webhook node ran: n8n answers 200 without a body

    @staticmethod
    def _last_node_answer(settings: Any, state: ExecutionState) -> Response:
        if state.status == "paused":
            return json_response({"executionId": state.id, "status": "paused"}, 202)
        if state.status != "success":
            return json_response({"message": "Error in workflow"}, 500)
        items = state.result or []
        if settings.data == "noData":
            return empty_response(settings.code, settings.headers)
        if settings.data == "allEntries":
            return json_response([item.get("json", {}) for item in items], settings.code, settings.headers)
        if not items:
            return json_response({"code": 0, "message": "No item to return was found"}, 500)
        body: Any = items[0].get("json", {})
        if settings.property_name:
            for part in settings.property_name.split("."):
                body = body.get(part) if isinstance(body, dict) else None
        if body is None and settings.property_name:
            return empty_response(settings.code, settings.headers)
        return body_response(body, settings.code, settings.headers, settings.content_type)
