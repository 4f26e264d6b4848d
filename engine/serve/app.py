"""The HTTP side of `mini-n8n serve` (Starlette): n8n's hosted-chat protocol and the executions API.

- `POST /webhook/<webhookId>/chat`: n8n's Chat Trigger body, `{"action": "sendMessage",
  "sessionId": ..., "chatInput": ...}` answered `{"output": ...}` (the last node's first item, as
  n8n's "When last node finishes"), or with n8n's streamed chunks, a JSON object a line, as the
  nodes send them (response mode "Streaming"), or `{"action": "loadPreviousSession", "sessionId": ...}`
  answered `{"data": [messages]}` when the trigger's Load Previous Session option is "From Memory".
- `GET /api/v1/executions`, `GET|DELETE /api/v1/executions/<id>`, `POST .../<id>/resume`,
  `POST .../<id>/stop`, and our own `GET .../<id>/export` (the stored execution whole, for the
  editor): with the key of $MINI_N8N_API_KEY in the X-N8N-API-KEY header (the
  server keeps only its SHA-256).
- `GET /healthz`.
- `/webhook/<path>` and `/form/<path>`: Webhook and Form triggers (engine/serve/webhooks.py), and
  the Schedule Triggers' scheduler, started and stopped with the app (engine/serve/scheduler.py).
- `/webhook-waiting/<id>[/<suffix>]`: resumes an execution a Wait node left waiting on a webhook
  call, and the tracker resuming those past their time limit (engine/serve/waiting.py).

A bad request gets a 4xx with a JSON `message` saying what is wrong, is logged, and stores nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import uuid
from typing import Any, AsyncIterator, Awaitable, Callable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..errors import MiniN8nError
from ..raw_output import iso_time, raw_output, wait_till
from ..run_data import ExecutionState, now_ms
from ..store import ExecutionBusy, ExecutionSummary
from ..streaming import chunk_line, error_chunk
from .jobs import Job
from .runners import Conflict, StillRunning
from .webhooks import WebhookServer, read_body
from .workflows import ChatEndpoint

API_KEY_HEADER = "X-N8N-API-KEY"
MAX_BODY_BYTES = 1024 * 1024
LIST_LIMIT_MAX = 250  # as n8n's public API
# the head of n8n's streamed reply, as its Chat Trigger writes it (the body is chunked)
STREAM_HEADERS = {"Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-cache", "Connection": "keep-alive"}
log = logging.getLogger("mini_n8n.serve")


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def key_digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def summary_json(row: ExecutionSummary | ExecutionState) -> dict[str, Any]:
    """An execution as n8n's public API lists it (with the workflow's name, which we have and it has not)."""
    if isinstance(row, ExecutionState):
        name, started, stopped = row.workflow.name, row.started_at, row.stopped_at
    else:
        name, started, stopped = row.workflow_name, row.started_at, row.stopped_at
    status = "canceled" if row.status == "cancelled" else row.status
    waiting: dict[str, Any] = {}
    if isinstance(row, ExecutionState) and wait_till(row) is not None:  # a Wait node's: n8n's "waiting" and waitTill
        status, waiting = "waiting", {"waitTill": wait_till(row)}
    return {"id": row.id, "finished": row.status == "success", "mode": row.mode, "retryOf": None, "status": status,
            "startedAt": iso_time(started), "stoppedAt": iso_time(stopped), "workflowName": name, **waiting}


class Server:
    """The routes, over a runner (in-process or queue) and the execution store."""

    def __init__(self, endpoints: dict[str, ChatEndpoint], runner: Any, store: Any, memory: Any, api_key: str | None,
                 webhooks: WebhookServer | None = None, scheduler: Any = None) -> None:
        self.endpoints = endpoints
        self.webhooks = webhooks
        self.scheduler = scheduler  # an engine.serve.scheduler.Scheduler: runs while the app runs
        self.runner = runner
        self.store = store
        self.memory = memory
        self._key_digest = key_digest(api_key) if api_key else None  # the key itself is not kept

    def app(self) -> Starlette:
        api = "/api/v1/executions"
        routes = [
            Route("/healthz", self._handle(self.healthz), methods=["GET"]),
            Route("/webhook/{webhook_id}/chat", self._handle(self.chat), methods=["POST"]),
            Route(api, self._handle(self.list_executions, api=True), methods=["GET"]),
            Route(api + "/{execution_id}", self._handle(self.get_execution, api=True), methods=["GET"]),
            Route(api + "/{execution_id}/export", self._handle(self.export_execution, api=True), methods=["GET"]),
            Route(api + "/{execution_id}", self._handle(self.delete_execution, api=True), methods=["DELETE"]),
            Route(api + "/{execution_id}/resume", self._handle(self.resume_execution, api=True), methods=["POST"]),
            Route(api + "/{execution_id}/stop", self._handle(self.stop_execution, api=True), methods=["POST"]),
        ]
        if self.webhooks is not None:
            every = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
            from .waiting import WaitingWebhooks

            waiting = WaitingWebhooks(self.webhooks)
            routes += [Route("/webhook/{path:path}", self.webhooks.webhook, methods=every),
                       Route("/form/{path:path}", self.webhooks.form, methods=every),
                       Route("/webhook-waiting/{execution_id}", waiting.resume, methods=every),
                       Route("/webhook-waiting/{execution_id}/{suffix:path}", waiting.resume, methods=every),
                       Route("/form-waiting/{execution_id}", waiting.form, methods=every),
                       Route("/form-waiting/{execution_id}/{suffix:path}", waiting.form, methods=every)]
        return Starlette(routes=routes, lifespan=self._lifespan,
                         exception_handlers={404: self._no_route, 405: self._no_route})

    @staticmethod
    async def _no_route(request: Request, exc: Exception) -> Response:
        """An unknown path or method: the same clear JSON error as every other bad request, logged."""
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        if status == 405:
            message = f"{request.method} is not allowed at {request.url.path}"
        else:
            message = f"there is nothing at {request.method} {request.url.path}"
        log.warning("%d %s %s: %s", status, request.method, request.url.path, message)
        headers = exc.headers if isinstance(exc, HTTPException) else None  # 405: Allow
        return JSONResponse({"code": status, "message": message}, status_code=status, headers=headers)

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        from .waiting import WaitTracker

        firing = asyncio.get_running_loop().create_task(self.scheduler.run()) if self.scheduler is not None else None
        tracking = asyncio.get_running_loop().create_task(WaitTracker(self.runner).run())
        try:
            yield
        finally:
            tracking.cancel()
            if firing is not None:
                firing.cancel()
            await self.runner.close()

    # ----- plumbing -------------------------------------------------------------------------------
    def _handle(self, handler: Callable[[Request], Awaitable[Response]], api: bool = False) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                if api:
                    self._authorize(request)
                return await handler(request)
            except HttpError as exc:
                log.warning("%d %s %s: %s", exc.status, request.method, request.url.path, exc.message)
                return JSONResponse({"code": exc.status, "message": exc.message}, status_code=exc.status)

        return endpoint

    def _authorize(self, request: Request) -> None:
        if self._key_digest is None:
            raise HttpError(401, "the API is off: the server was started without MINI_N8N_API_KEY")
        given = request.headers.get(API_KEY_HEADER)
        if not given:
            raise HttpError(401, f"the {API_KEY_HEADER} header is required")
        if not hmac.compare_digest(key_digest(given), self._key_digest):
            raise HttpError(401, f"the {API_KEY_HEADER} header does not hold a valid API key")

    @staticmethod
    async def _json_body(request: Request) -> dict[str, Any]:
        data = await read_body(request, MAX_BODY_BYTES, HttpError)
        try:
            body = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise HttpError(400, f"the request body is not valid JSON ({exc})") from None
        if not isinstance(body, dict):
            raise HttpError(400, "the request body must be a JSON object")
        return body

    def _load(self, execution_id: str) -> ExecutionState:
        if not self.store.exists(execution_id):
            raise HttpError(404, f'no execution "{execution_id}"')
        return self.store.load(execution_id)

    # ----- routes ---------------------------------------------------------------------------------
    async def healthz(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def chat(self, request: Request) -> Response:
        webhook_id = request.path_params["webhook_id"]
        endpoint = self.endpoints.get(webhook_id)
        if endpoint is None and self.webhooks is not None:  # a Webhook node's path ending in /chat
            request.scope["path_params"] = {"path": f"{webhook_id}/chat"}
            return await self.webhooks.webhook(request)
        if endpoint is None:
            raise HttpError(404, f'The requested webhook "POST {webhook_id}/chat" is not registered.')  # n8n's words
        body = await self._json_body(request)
        action = body.get("action")
        session = body.get("sessionId")
        if action not in ("sendMessage", "loadPreviousSession"):
            raise HttpError(400, f'"action" must be "sendMessage" or "loadPreviousSession", not {json.dumps(action)}')
        if not isinstance(session, str) or not session:
            raise HttpError(400, '"sessionId" must be a non-empty string')
        if action == "loadPreviousSession":
            return JSONResponse({"data": self._previous_session(endpoint, session)})
        message = body.get("chatInput")
        if not isinstance(message, str):
            raise HttpError(400, '"chatInput" must be a string')
        item = {"json": body}  # the whole body, as n8n's Chat Trigger passes it on
        job = Job.new(endpoint.workflow, endpoint.trigger.name, [item], uuid.uuid4().hex[:12])
        if endpoint.streaming:
            return await self._stream_chat(endpoint, job)
        try:
            state = await self.runner.submit(job)
        except StillRunning as exc:
            log.warning("%s", exc)
            return JSONResponse({"code": 504, "message": str(exc), "executionId": job.execution_id}, status_code=504)
        except MiniN8nError as exc:
            log.error("execution %s of %s failed to run: %s", job.execution_id, endpoint.source, exc)
            return JSONResponse({"code": 500, "message": str(exc), "executionId": job.execution_id}, status_code=500)
        except Exception as exc:  # the broker refused the job
            log.error("execution %s could not be queued: %s", job.execution_id, exc)
            return JSONResponse({"code": 503, "message": f"the job queue is unavailable: {exc}"}, status_code=503)
        return self._chat_answer(state)

    async def _stream_chat(self, endpoint: ChatEndpoint, job: Job) -> Response:
        """n8n's streamed reply: 200 at once, then each chunk a line as the nodes send it, the end of
        the body when the execution settled. Only a job the broker refused is a 503 (no head sent yet)."""
        chunks: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        try:
            settled = await self.runner.stream(job, chunks.put_nowait)
        except MiniN8nError as exc:
            log.error("execution %s of %s could not start: %s", job.execution_id, endpoint.source, exc)
            return JSONResponse({"code": 500, "message": str(exc), "executionId": job.execution_id}, status_code=500)
        except Exception as exc:  # the broker refused the job
            log.error("execution %s could not be queued: %s", job.execution_id, exc)
            return JSONResponse({"code": 503, "message": f"the job queue is unavailable: {exc}"}, status_code=503)
        return StreamingResponse(self._chunk_lines(endpoint, job, chunks, settled), status_code=200,
                                 headers=STREAM_HEADERS)

    @staticmethod
    async def _chunk_lines(endpoint: ChatEndpoint, job: Job, chunks: "asyncio.Queue[dict[str, Any]]",
                           settled: "asyncio.Task[ExecutionState]") -> AsyncIterator[bytes]:
        getter: asyncio.Future[dict[str, Any]] | None = None
        try:
            while True:
                getter = asyncio.ensure_future(chunks.get())
                await asyncio.wait({getter, settled}, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    break
                yield chunk_line(getter.result())
        finally:  # the end, or the client went away (the execution goes on, as n8n's)
            if getter is not None and not getter.done():
                getter.cancel()
        while not chunks.empty():
            yield chunk_line(chunks.get_nowait())
        problem = settled.exception()
        if problem is not None:  # no answer is coming on this response: say so in n8n's error chunk
            log.warning("streamed execution %s: %s", job.execution_id, problem)
            yield chunk_line(error_chunk(endpoint.trigger, 0, str(problem)))

    @staticmethod
    def _chat_answer(state: ExecutionState) -> Response:
        if state.status == "success":
            items = state.result or []
            return JSONResponse(items[0].get("json", {}) if items else {})
        if state.status == "paused":
            return JSONResponse({"executionId": state.id, "status": "paused"}, status_code=202)
        message = state.error.message if state.error else f"the execution ended {state.status}"
        return JSONResponse({"code": 500, "message": message, "executionId": state.id}, status_code=500)

    def _previous_session(self, endpoint: ChatEndpoint, session: str) -> list[dict[str, Any]]:
        """The session's messages as n8n sends them (LangChain's serialised messages), when the
        trigger loads previous sessions from memory; else none, as n8n."""
        if endpoint.options.get("loadPreviousSession") != "memory":
            return []
        workflow = endpoint.workflow
        key = (str((workflow.model_extra or {}).get("id") or workflow.name), session)
        kinds = {"user": "HumanMessage", "assistant": "AIMessage", "system": "SystemMessage"}
        return [
            {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", kinds[m.role]],
             "kwargs": {"content": m.content, "additional_kwargs": {}, "response_metadata": {}}}
            for m in self.memory.load(key) if m.role in kinds
        ]

    async def list_executions(self, request: Request) -> Response:
        text = request.query_params.get("limit", "100")
        if not text.isdigit() or not 1 <= int(text) <= LIST_LIMIT_MAX:
            raise HttpError(400, f'"limit" must be a whole number from 1 to {LIST_LIMIT_MAX}, not {json.dumps(text)}')
        return JSONResponse({"data": [summary_json(row) for row in self.store.list(int(text))], "nextCursor": None})

    async def get_execution(self, request: Request) -> Response:
        state = self._load(request.path_params["execution_id"])
        out = summary_json(state)
        if request.query_params.get("includeData", "false") == "true":
            out["data"] = raw_output(state)["data"]
        return JSONResponse(out)

    async def export_execution(self, request: Request) -> Response:
        """mini-n8n's own: the execution as the store holds it (its workflow, run data, stack) and the
        order its runs finished in, for the editor to open it or run it again on a desktop."""
        execution_id = request.path_params["execution_id"]
        state = self._load(execution_id)
        order = [[node, run_index] for node, run_index, _task in self.store.runs(execution_id)]
        return JSONResponse({"execution": state.to_json(), "order": order})

    async def delete_execution(self, request: Request) -> Response:
        execution_id = request.path_params["execution_id"]
        state = self._load(execution_id)
        if execution_id in self.runner.running:
            raise HttpError(409, f"execution {execution_id} is running in this server; stop it first")
        try:
            self.store.delete(execution_id)
        except ExecutionBusy as busy:
            raise HttpError(409, f"{busy}; stop it first") from None
        return JSONResponse(summary_json(state))

    async def resume_execution(self, request: Request) -> Response:
        execution_id = request.path_params["execution_id"]
        state = self._load(execution_id)
        limit = ((state.pause or {}).get("payload") or {}).get("waitTill")
        if wait_till(state) is not None and (limit is None or limit > now_ms()):  # a Wait node waits for its request
            where = "form-waiting" if state.pause["payload"].get("resume") == "form" else "webhook-waiting"
            raise HttpError(409, f'execution "{execution_id}" waits for a webhook call at "{state.pause["node"]}": a request '
                                 f"to its resume URL (/{where}/{execution_id}) resumes it")
        try:
            await self.runner.resume(execution_id)
        except Conflict as exc:
            raise HttpError(409, str(exc)) from None
        return JSONResponse({"id": execution_id, "status": "resumed"}, status_code=202)

    async def stop_execution(self, request: Request) -> Response:
        execution_id = request.path_params["execution_id"]
        self._load(execution_id)
        try:
            await self.runner.stop(execution_id)
        except Conflict as exc:
            raise HttpError(409, str(exc)) from None
        return JSONResponse(summary_json(self.store.load(execution_id)))
