"""`/webhook-waiting/<execution id>[/<suffix>]`: a request that resumes an execution a Wait node
left waiting on a webhook call, as n8n's waiting webhooks do. The request becomes the Wait node's
output item (the Webhook trigger's shape) and is answered as the Wait node's Respond setting says.
An unknown, running or ended execution, or a method or suffix the Wait node does not wait for,
gets n8n's status and words; none of them changes the execution. `/form-waiting/<id>` does the
same for a Wait node resuming on a form submission (GET shows the form, POST submits it).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..raw_output import n8n_status

from ..run_data import ExecutionState, now_ms
from .jobs import Job
from .webhooks import WebhookError, WebhookServer, parse_body, parse_query, request_headers, submitted_form

log = logging.getLogger("mini_n8n.serve")
STATUS_SUFFIX = "n8n-execution-status"  # n8n's: the form page asks here whether the execution goes on
COMPLETION_PAGE = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Form Submitted</title></head><body>"
                   "<h1>Form Submitted</h1><p>Your response has been recorded</p></body></html>")  # n8n's words
FORM_NOT_FOUND_PAGE = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Problem loading form</title></head><body>"
                       "<h1>Problem loading form</h1><p>This usually occurs if the n8n workflow serving this form is "
                       "deactivated or no longer exist</p></body></html>")  # n8n's words
CORS = {"access-control-allow-origin": "*", "access-control-allow-methods": "POST, GET, OPTIONS",
        "access-control-allow-headers": "Content-Type"}  # what n8n sends with a waiting webhook's answer


def _with_cors(response: Response) -> Response:
    for name, value in CORS.items():
        response.headers[name] = value
    return response


class WaitingWebhooks:
    """Finds the waiting execution a request is for and resumes it with the request's item."""

    def __init__(self, webhooks: WebhookServer) -> None:
        self.webhooks = webhooks

    async def resume(self, request: Request) -> Response:
        execution_id = request.path_params["execution_id"]
        suffix = request.path_params.get("suffix", "")
        try:
            state = self._waiting(execution_id)
        except WebhookError as exc:
            return self._refused(request, exc)
        try:  # from here n8n's answers carry its CORS headers
            wait = self._wait_node(state, "webhook", request.method, suffix)
            body = await parse_body(request)
        except WebhookError as exc:
            return _with_cors(self._refused(request, exc))
        from nodes.triggers.webhook import request_item, response_settings

        node = state.workflow.node(wait)
        item = request_item(request_headers(request), {}, parse_query(request.url.query), body,
                            self._webhook_url((node.model_extra or {}).get("webhookId"), suffix))
        job = Job(execution_id, items=[item], resume=True)
        settings = response_settings(node.parameters, float(node.typeVersion))
        return _with_cors(await self.webhooks.answer(job, settings, f'the Wait node "{wait}"', since_ms=now_ms()))

    @staticmethod
    def _refused(request: Request, exc: WebhookError) -> Response:
        log.warning("%d %s %s: %s", exc.status, request.method, request.url.path, exc.message)
        return exc.response()

    def _webhook_url(self, webhook_id: str | None, suffix: str) -> str:
        """The item's webhookUrl as n8n gives a Wait node's: its suffix, else its webhook id, under /webhook/."""
        return f"{self.webhooks.base_url}webhook/{suffix or webhook_id or ''}"

    def _waiting(self, execution_id: str) -> ExecutionState:
        store = self.webhooks.runner.engine.store
        if not store.exists(execution_id):
            raise WebhookError(404, f'The execution "{execution_id}" does not exist.')
        state = store.load(execution_id)
        if state.status in ("running", "new", "crashed"):
            raise WebhookError(409, f'The execution "{execution_id}" is running already.')
        if state.status in ("error", "cancelled"):
            raise WebhookError(409, f'The execution "{execution_id}" has finished with error.')
        if state.status == "success":
            raise WebhookError(409, f'The execution "{execution_id} has finished already.')  # sic: n8n's words
        return state

    async def form(self, request: Request) -> Response:
        """`/form-waiting/<id>[/<suffix>]`: GET shows the waiting Wait node's form, POST submits it and
        resumes the execution with n8n's form item; `.../n8n-execution-status` says where it stands."""
        from nodes.triggers import form_trigger
        from nodes.triggers.schedule_trigger import timezone_name
        from nodes.triggers.webhook import response_settings

        execution_id = request.path_params["execution_id"]
        suffix = request.path_params.get("suffix", "")
        store = self.webhooks.runner.engine.store
        if suffix == STATUS_SUFFIX:
            return _with_cors(Response(self._form_status(store, execution_id).encode("utf-8"), 200,
                                       headers={"content-type": "text/html; charset=utf-8"}))
        try:
            if store.exists(execution_id) and store.load(execution_id).status == "success":
                return HTMLResponse(COMPLETION_PAGE)  # n8n's page for a finished form
            state = self._waiting(execution_id)
        except WebhookError as exc:
            return self._form_refused(request, exc)
        try:
            wait = self._wait_node(state, "form", "POST" if request.method == "GET" else request.method, suffix)
            node = state.workflow.node(wait)
            if request.method == "GET":
                return _with_cors(HTMLResponse(form_trigger.render_form(node.parameters, request.url.query)))
            values = await submitted_form(request)
        except WebhookError as exc:
            return _with_cors(self._form_refused(request, exc))
        # n8n gives formQueryParameters to a Form Trigger's item only
        item = form_trigger.form_item(node.parameters, float(node.typeVersion), values, {}, "production",
                                      timezone_name(state.workflow))
        settings = response_settings(node.parameters, float(node.typeVersion))
        if settings.mode == "lastNode":  # n8n's form webhook answers a form submitted "on last node" without data
            settings = dataclasses.replace(settings, data="noData")
        job = Job(execution_id, items=[item], resume=True)
        return _with_cors(await self.webhooks.answer(job, settings, f'the Wait node "{wait}"', on_received={"status": 200},
                                                     since_ms=now_ms()))

    def _form_refused(self, request: Request, exc: WebhookError) -> Response:
        """A form that is not there: n8n's "Problem loading form" page; other refusals as JSON."""
        response = self._refused(request, exc)
        return HTMLResponse(FORM_NOT_FOUND_PAGE, 404) if exc.status == 404 else response

    @staticmethod
    def _form_status(store: Any, execution_id: str) -> str:
        """n8n's answer at .../n8n-execution-status: its status, "form-waiting" while a form waits, "null" if none."""
        if not store.exists(execution_id):
            return "null"
        state = store.load(execution_id)
        if state.status == "paused" and ((state.pause or {}).get("payload") or {}).get("resume") == "form":
            return "form-waiting"
        return n8n_status(state)

    @staticmethod
    def _wait_node(state: ExecutionState, resume: str, method: str, suffix: str) -> str:
        """The Wait node the execution waits at, when it waits for this kind of call, method and suffix."""
        pause = state.pause or {}
        wanted: dict[str, Any] = pause.get("payload") or {}
        if pause.get("kind") == "wait" and wanted.get("resume") == resume and wanted.get("httpMethod") == method \
                and wanted.get("webhookSuffix", "") == suffix:
            return str(pause["node"])
        raise WebhookError(404, f'The workflow for execution "{state.id}" does not contain a waiting webhook with a '
                                "matching path/method.")


class WaitTracker:
    """Resumes waiting executions whose time limit (waitTill) has passed, without a request, as
    n8n's wait tracker does; the Wait node then passes its input items on. One per server."""

    TICK_S = 2.0
    SCAN_LIMIT = 1000  # the newest executions looked at for waiting ones

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self._resumed: dict[str, float] = {}  # execution id -> the waitTill it was resumed for

    async def run(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception as exc:  # the store restarts: the next tick tries again
                log.warning("looking for executions past their wait limit failed: %s", exc)
            await asyncio.sleep(self.TICK_S)

    async def tick(self) -> list[str]:
        """Resume every waiting execution past its waitTill; their ids."""
        from .runners import Conflict

        store = self.runner.engine.store
        now = now_ms()
        due = []
        for summary in store.list(self.SCAN_LIMIT):
            if summary.status != "paused":
                continue
            pause = store.load(summary.id).pause or {}
            till = (pause.get("payload") or {}).get("waitTill")
            if pause.get("kind") == "wait" and till is not None and till <= now and self._resumed.get(summary.id) != till:
                due.append((summary.id, till))
        resumed = []
        for execution_id, till in due:
            try:
                await self.runner.resume(execution_id)
            except Conflict as exc:  # a request resumed it meanwhile
                log.info("execution %s past its wait limit: %s", execution_id, exc)
                continue
            self._resumed[execution_id] = till
            resumed.append(execution_id)
            log.info("execution %s resumed: its wait limit passed", execution_id)
        return resumed
