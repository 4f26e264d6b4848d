"""The Wait node waits in the running process: Stop ends the wait at once, and a long wait is
said in the run log (n8n would store the execution as waiting)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from engine.abort import AbortSignal
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.workflow import parse_workflow
from tests.builders import link, node


def wait_workflow(parameters: dict[str, Any]) -> Any:
    connections: dict[str, Any] = {}
    link(connections, "Start", "Wait")
    return parse_workflow({"name": "wait", "nodes": [node("Start", "n8n-nodes-base.manualTrigger"),
                                                      node("Wait", "n8n-nodes-base.wait", parameters)],
                           "connections": connections})


def test_stop_ends_a_long_wait_at_once() -> None:
    async def scenario() -> Any:
        signal = AbortSignal()
        run = asyncio.create_task(Engine(builtin_registry()).run(wait_workflow({"amount": 2, "unit": "hours"}), signal=signal))
        await asyncio.sleep(0.3)
        started = time.perf_counter()
        signal.abort()
        state = await run
        return state, time.perf_counter() - started

    state, took = asyncio.run(scenario())
    assert state.status == "cancelled"
    assert took < 5


def test_a_form_resume_waits_for_a_post_at_its_suffix() -> None:
    state = asyncio.run(Engine(builtin_registry()).run(wait_workflow({"resume": "form", "options": {"webhookSuffix": "s"}})))
    assert state.status == "paused" and state.pause["kind"] == "wait"
    payload = {k: v for k, v in state.pause["payload"].items() if k != "since"}
    assert payload == {"resume": "form", "waitTill": None, "httpMethod": "POST", "webhookSuffix": "s"}


def test_a_resume_webhook_option_mini_n8n_does_not_serve_is_an_error_naming_it() -> None:
    workflow = wait_workflow({"resume": "webhook", "options": {"ipWhitelist": "10.0.0.1", "webhookSuffix": "x"}})
    state = asyncio.run(Engine(builtin_registry()).run(workflow))
    assert state.status == "error"
    assert state.error.message == 'Node "Wait": the option(s) ipWhitelist of the resume webhook are not supported by mini-n8n'
