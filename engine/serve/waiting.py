"""`/webhook-waiting/<execution id>[/<suffix>]`: a request that resumes an execution a Wait node
left waiting on a webhook call, as n8n's waiting webhooks do. The request becomes the Wait node's
output item (the Webhook trigger's shape) and is answered as the Wait node's Respond setting says.
An unknown, running or ended execution, or a method or suffix the Wait node does not wait for,
gets n8n's status and words; none of them changes the execution.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..run_data import ExecutionState, now_ms
from .jobs import Job
from .webhooks import WebhookError, WebhookServer, parse_body, parse_query, request_headers

log = logging.getLogger("mini_n8n.serve")


class WaitingWebhooks:
    """Finds the waiting execution a request is for and resumes it with the request's item."""

    def __init__(self, webhooks: WebhookServer) -> None:
        self.webhooks = webhooks

    async def resume(self, request: Request) -> Response:
        execution_id = request.path_params["execution_id"]
        suffix = request.path_params.get("suffix", "")
        try:
            state = self._waiting(execution_id)
            wait = self._wait_node(state, request.method, suffix)
            body = await parse_body(request)
        except WebhookError as exc:
            log.warning("%d %s %s: %s", exc.status, request.method, request.url.path, exc.message)
            return exc.response()
        from nodes.triggers.webhook import request_item, response_settings

        node = state.workflow.node(wait)
        item = request_item(request_headers(request), {}, parse_query(request.url.query), body,
                            self._webhook_url((node.model_extra or {}).get("webhookId"), suffix))
        job = Job(execution_id, items=[item], resume=True)
        settings = response_settings(node.parameters, float(node.typeVersion))
        return await self.webhooks.answer(job, settings, f'the Wait node "{wait}"', since_ms=now_ms())

    def _webhook_url(self, webhook_id: str | None, suffix: str) -> str:
        """The item's webhookUrl as n8n gives a Wait node's: its webhook id and suffix under /webhook/."""
        return f"{self.webhooks.base_url}webhook/{webhook_id or ''}/{suffix}"

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

    @staticmethod
    def _wait_node(state: ExecutionState, method: str, suffix: str) -> str:
        """The Wait node the execution waits at, when it waits for this method and suffix."""
        pause = state.pause or {}
        wanted: dict[str, Any] = pause.get("payload") or {}
        if pause.get("kind") == "wait" and wanted.get("resume") == "webhook" and wanted.get("httpMethod") == method \
                and wanted.get("webhookSuffix", "") == suffix:
            return str(pause["node"])
        raise WebhookError(404, f'The workflow for execution "{state.id}" does not contain a waiting webhook with a '
                                "matching path/method.")
