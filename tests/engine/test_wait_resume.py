"""A Wait node on a webhook call leaves its execution stored paused (n8n's "waiting") and the run
ends; resuming it with the request's item makes that item the node's output, and past the time
limit a resume without one passes the input on, as n8n does."""

from __future__ import annotations

import time
from typing import Any

import pytest

from engine import runs
from engine.errors import MiniN8nError
from engine.workflow import parse_workflow
from tests.builders import link, node


def waiting_workflow(wait: dict[str, Any]) -> Any:
    connections: dict[str, Any] = {}
    for source, target in (("Start", "Before"), ("Before", "Wait"), ("Wait", "After")):
        link(connections, source, target)
    assignment = {"id": "a", "name": "url", "value": "={{ $execution.resumeUrl }}", "type": "string"}
    after = {"id": "b", "name": "got", "value": "={{ $json.body?.ok ?? $json.url }}", "type": "string"}
    return parse_workflow({"name": "wait on a call", "connections": connections, "nodes": [
        node("Start", "n8n-nodes-base.manualTrigger"),
        node("Before", "n8n-nodes-base.set", {"assignments": {"assignments": [assignment]}, "options": {}}),
        node("Wait", "n8n-nodes-base.wait", {"resume": "webhook", **wait}, typeVersion=1.1),
        node("After", "n8n-nodes-base.set", {"assignments": {"assignments": [after]}, "options": {}}),
    ]})


async def test_the_execution_is_stored_waiting_and_resumes_with_the_request_item(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOOK_URL", "https://hooks.example.org/base")
    engine = runs.open_engine()
    state = await runs.start(engine, waiting_workflow({"httpMethod": "POST", "options": {"webhookSuffix": "ok"}})).run()
    assert state.status == "paused"
    assert "Wait" not in state.run_data and "After" not in state.run_data
    stored = engine.store.load(state.id)
    assert stored.status == "paused"
    assert stored.pause["kind"] == "wait" and stored.pause["node"] == "Wait"
    since = stored.pause["payload"].pop("since")
    assert stored.pause["payload"] == {"resume": "webhook", "waitTill": None, "httpMethod": "POST", "webhookSuffix": "ok"}
    assert abs(since - time.time() * 1000) < 5000
    assert state.run_data["Before"][0].data["main"][0][0]["json"]["url"] == \
        f"https://hooks.example.org/base/webhook-waiting/{state.id}"

    with pytest.raises(MiniN8nError, match='waits for a webhook call at "Wait"'):
        runs.resume(engine, state.id)
    request = {"json": {"headers": {}, "params": {}, "query": {}, "body": {"ok": "yes"},
                        "webhookUrl": "u", "executionMode": "production"}}
    resumed = runs.resume(runs.open_engine(), state.id, items=[request])
    final = await resumed.run()
    assert final.status == "success"
    resumed.engine.store.flush()  # its end where another store object reads it at once
    assert [[item["json"] for item in run.data["main"][0]] for run in final.run_data["Wait"]] == [[request["json"]]]
    assert final.result[0]["json"] == {"got": "yes"}
    assert runs.open_engine().store.load(state.id).status == "success"


async def test_past_its_time_limit_a_waiting_execution_resumes_without_a_request() -> None:
    engine = runs.open_engine()
    wait = {"limitWaitTime": True, "resumeAmount": 0.2, "resumeUnit": "seconds"}
    state = await runs.start(engine, waiting_workflow(wait)).run()
    till = state.pause["payload"]["waitTill"]
    from engine.raw_output import iso_time, raw_output

    raw = raw_output(state)
    assert (raw["status"], raw["waitTill"], raw["finished"]) == ("waiting", iso_time(till), False)
    assert state.status == "paused" and abs(till - (time.time() * 1000 + 200)) < 2000
    with pytest.raises(MiniN8nError, match="or after its time limit"):
        runs.resume(engine, state.id)  # the limit is not reached yet
    time.sleep(max(0.0, (till / 1000) - time.time()) + 0.05)
    final = await runs.resume(runs.open_engine(), state.id).run()
    assert final.status == "success"
    passed = final.run_data["Wait"][0].data["main"][0]
    assert [item["json"] for item in passed] == [{"url": f"http://localhost:5678/webhook-waiting/{state.id}"}]
    assert final.result[0]["json"]["got"] == f"http://localhost:5678/webhook-waiting/{state.id}"


async def test_items_are_refused_for_an_execution_paused_elsewhere() -> None:
    from engine.debugger import Breakpoints, Debugger

    engine = runs.open_engine()
    execution = runs.start(engine, waiting_workflow({}))
    execution.debugger = Debugger(Breakpoints(nodes=["Before"]))
    from engine.hooks import ExecutionPaused

    execution.hooks.add(lambda event: isinstance(event, ExecutionPaused) and execution.detach())
    state = await execution.run()
    assert state.status == "paused" and state.pause["kind"] == "node"
    with pytest.raises(MiniN8nError, match="is not waiting at a Wait node"):
        runs.resume(engine, state.id, items=[{"json": {}}])
