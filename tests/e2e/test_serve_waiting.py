"""A Wait node on a webhook call through a real `mini-n8n serve`: the first request's execution is
stored waiting, a request to its `$execution.resumeUrl` resumes it with the request as the Wait
node's item and is answered as the Wait node's Respond setting says; unknown, finished and
mismatched requests get n8n's words. Regular mode on SQLite, queue mode with a worker on
PostgreSQL and RabbitMQ. The answers are those real n8n 1.123 gave to the same requests."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.store import open_store
from tests.e2e.test_serve_triggers import _hook, _node, queue_store, wait_for  # noqa: F401 (a fixture)
from tests.serve_harness import API_KEY, Cluster

CORS = {"access-control-allow-origin": "*", "access-control-allow-methods": "POST, GET, OPTIONS",
        "access-control-allow-headers": "Content-Type"}

RESPOND = {"respondWith": "json", "responseBody": '={{ {"url": $execution.resumeUrl, "id": $execution.id} }}', "options": {}}


def waiting_workflow() -> dict[str, Any]:
    """Two branches, each: Webhook → Respond (the resume URL) → Wait on a webhook call → Set."""
    nodes, connections = [], {}
    for tag, wait in (("a", {"httpMethod": "POST", "options": {}}),
                      ("b", {"httpMethod": "PUT", "responseMode": "lastNode", "responseData": "allEntries",
                             "options": {"webhookSuffix": "go"}}),
                      ("c", {"limitWaitTime": True, "resumeAmount": 1, "resumeUnit": "seconds"})):
        names = [f"Hook {tag}", f"Respond {tag}", f"Wait {tag}", f"After {tag}"]
        after = {"assignments": {"assignments": [
            {"id": "x", "name": "got", "value": "={{ $json.body }}", "type": "object"},
            {"id": "y", "name": "url", "value": "={{ $json.webhookUrl }}", "type": "string"}]}, "options": {}}
        nodes += [_hook(names[0], "POST", f"w{tag}", responseMode="responseNode"),
                  _node(names[1], "n8n-nodes-base.respondToWebhook", 1.4, RESPOND),
                  _node(names[2], "n8n-nodes-base.wait", 1.1, {"resume": "webhook", **wait}, webhookId=f"wait-{tag}"),
                  _node(names[3], "n8n-nodes-base.set", 3.4, after)]
        for source, target in zip(names, names[1:]):
            connections[source] = {"main": [[{"node": target, "type": "main", "index": 0}]]}
    # a Wait answering with a Respond to Webhook node after it (not the one before it, which answered the first request)
    nodes += [_hook("Hook d", "POST", "wd", responseMode="responseNode"),
              _node("Respond d", "n8n-nodes-base.respondToWebhook", 1.4, RESPOND),
              _node("Wait d", "n8n-nodes-base.wait", 1.1, {"resume": "webhook", "httpMethod": "POST",
                                                          "responseMode": "responseNode"}, webhookId="wait-d"),
              _node("Answer d", "n8n-nodes-base.respondToWebhook", 1.4,
                    {"respondWith": "text", "responseBody": "=resumed with {{ $json.body.x }}"})]
    for source, target in (("Hook d", "Respond d"), ("Respond d", "Wait d"), ("Wait d", "Answer d")):
        connections[source] = {"main": [[{"node": target, "type": "main", "index": 0}]]}
    # a Wait resuming on a form submission
    form = {"resume": "form", "formTitle": "Tell", "formFields": {"values": [
        {"fieldLabel": "Name"}, {"fieldLabel": "Age", "fieldType": "number"}]}, "options": {}}
    nodes += [_hook("Hook e", "POST", "we", responseMode="responseNode"),
              _node("Respond e", "n8n-nodes-base.respondToWebhook", 1.4,
                    {**RESPOND, "responseBody": '={{ {"url": $execution.resumeFormUrl, "id": $execution.id} }}'}),
              _node("Wait e", "n8n-nodes-base.wait", 1.1, form, webhookId="wait-e"),
              _node("After e", "n8n-nodes-base.noOp", 1, {})]
    for source, target in (("Hook e", "Respond e"), ("Respond e", "Wait e"), ("Wait e", "After e")):
        connections[source] = {"main": [[{"node": target, "type": "main", "index": 0}]]}
    return {"name": "served waits", "nodes": nodes, "connections": connections, "settings": {"timezone": "UTC"}}


def check_waiting(url: str, base: str, store_url: str) -> None:
    first = httpx.post(f"{url}/webhook/wa", json={"start": 1})
    assert first.status_code == 200
    execution_id = first.json()["id"]
    assert first.json() == {"url": f"{base}webhook-waiting/{execution_id}", "id": execution_id}
    store = open_store(store_url)
    wait_for(lambda: store.load(execution_id).status == "paused", what="the execution waits")
    waiting = store.load(execution_id)
    assert waiting.pause["kind"] == "wait" and waiting.pause["node"] == "Wait a"
    assert "Wait a" not in waiting.run_data
    shown = httpx.get(f"{url}/api/v1/executions/{execution_id}", headers={"X-N8N-API-KEY": API_KEY}).json()
    assert (shown["status"], shown["waitTill"], shown["finished"]) == ("waiting", "3000-01-01T00:00:00.000Z", False)
    api_resume = httpx.post(f"{url}/api/v1/executions/{execution_id}/resume", headers={"X-N8N-API-KEY": API_KEY})
    assert api_resume.status_code == 409 and "waits for a webhook call" in api_resume.json()["message"]

    wrong = httpx.get(f"{url}/webhook-waiting/{execution_id}")
    assert (wrong.status_code, wrong.json()) == (404, {"code": 404, "message": (
        f'The workflow for execution "{execution_id}" does not contain a waiting webhook with a matching path/method.')})
    resumed = httpx.post(f"{url}/webhook-waiting/{execution_id}?q=1", json={"ok": "yes"})
    assert (resumed.status_code, resumed.json()) == (200, {"message": "Workflow was started"})
    assert {k: resumed.headers[k] for k in CORS} == CORS
    assert {k: wrong.headers[k] for k in CORS} == CORS
    wait_for(lambda: store.load(execution_id).status == "success", what="the resumed execution ends")
    done = store.load(execution_id)
    item = done.run_data["Wait a"][0].data["main"][0][0]["json"]
    assert list(item) == ["headers", "params", "query", "body", "webhookUrl", "executionMode"]
    assert (item["params"], item["query"], item["body"], item["executionMode"]) == ({}, {"q": "1"}, {"ok": "yes"}, "production")
    assert item["webhookUrl"] == f"{base}webhook/wait-a"
    assert done.result[0]["json"]["got"] == {"ok": "yes"}
    again = httpx.post(f"{url}/webhook-waiting/{execution_id}", json={})
    assert (again.status_code, again.json()) == (409, {"code": 409, "message": f'The execution "{execution_id} has finished already.'})
    assert "access-control-allow-origin" not in again.headers
    unknown = httpx.post(f"{url}/webhook-waiting/987654")
    assert (unknown.status_code, unknown.json()) == (404, {"code": 404, "message": 'The execution "987654" does not exist.'})

    second = httpx.post(f"{url}/webhook/wb", json={"start": 2}).json()["id"]
    wait_for(lambda: store.load(second).status == "paused", what="the second execution waits")
    no_suffix = httpx.put(f"{url}/webhook-waiting/{second}")
    assert no_suffix.status_code == 404
    last = httpx.put(f"{url}/webhook-waiting/{second}/go", json={"ok": "b"}, timeout=60)
    assert (last.status_code, last.json()) == (200, [{"got": {"ok": "b"}, "url": f"{base}webhook/go"}])
    assert last.headers["access-control-allow-origin"] == "*"
    assert store.load(second).status == "success"

    fourth = httpx.post(f"{url}/webhook/wd", json={}).json()["id"]
    wait_for(lambda: store.load(fourth).status == "paused", what="the fourth execution waits")
    answered = httpx.post(f"{url}/webhook-waiting/{fourth}", json={"x": 4}, timeout=60)
    assert (answered.status_code, answered.text) == (200, "resumed with 4"), store.load(fourth).model_dump(
        include={"status", "error", "pause"})

    started = httpx.post(f"{url}/webhook/we", json={}).json()
    fifth = started["id"]
    assert started["url"] == f"{base}form-waiting/{fifth}"
    wait_for(lambda: store.load(fifth).status == "paused", what="the form waits")
    wrong_method = httpx.put(f"{url}/form-waiting/{fifth}")
    assert wrong_method.status_code == 404 and "<h1>Problem loading form</h1>" in wrong_method.text
    assert wrong_method.headers["access-control-allow-origin"] == "*"
    missing = httpx.get(f"{url}/form-waiting/98765")
    assert missing.status_code == 404 and "<title>Problem loading form</title>" in missing.text
    assert httpx.get(f"{url}/form-waiting/98765/n8n-execution-status").text == "null"
    status = httpx.get(f"{url}/form-waiting/{fifth}/n8n-execution-status")
    assert (status.status_code, status.text) == (200, "form-waiting")
    page = httpx.get(f"{url}/form-waiting/{fifth}")
    assert page.status_code == 200 and "Tell" in page.text and 'name="field-1"' in page.text
    submitted = httpx.post(f"{url}/form-waiting/{fifth}?q=1", files={"field-0": (None, "Ann"), "field-1": (None, "42")})
    assert (submitted.status_code, submitted.json()) == (200, {"status": 200})
    wait_for(lambda: store.load(fifth).status == "success", what="the submitted form resumes it")
    item = store.load(fifth).run_data["Wait e"][0].data["main"][0][0]["json"]
    assert list(item) == ["Name", "Age", "submittedAt", "formMode"]  # n8n's item, submittedAt in UTC (v1.1)
    assert (item["Name"], item["Age"], item["formMode"]) == ("Ann", 42, "production")
    assert item["submittedAt"].endswith("Z")
    assert httpx.get(f"{url}/form-waiting/{fifth}/n8n-execution-status").text == "success"
    assert "Your response has been recorded" in httpx.get(f"{url}/form-waiting/{fifth}").text

    third = httpx.post(f"{url}/webhook/wc", json={"start": 3}).json()["id"]  # no request comes: its limit passes
    wait_for(lambda: store.load(third).status == "success", timeout=30, what="the time limit resumes it")
    passed = store.load(third).run_data["Wait c"][0].data["main"][0][0]["json"]
    assert passed["body"] == {"start": 3} and passed["webhookUrl"] == f"{base}webhook/wc"
    store.close()


def test_a_wait_on_a_webhook_call_resumes_over_http_in_regular_mode(tmp_path: Path) -> None:
    store_path = str(tmp_path / "store.sqlite")
    cluster = Cluster(tmp_path, store_path, mode="regular", workflow=waiting_workflow())
    try:
        check_waiting(cluster.url, f"http://localhost:{cluster.port}/", store_path)
    finally:
        cluster.close()


def test_a_wait_on_a_webhook_call_resumes_on_a_worker_in_queue_mode(tmp_path: Path, queue_store: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers build `$execution.resumeUrl` from $WEBHOOK_URL, as n8n's workers do."""
    monkeypatch.setenv("WEBHOOK_URL", "https://hooks.example.org/")
    cluster = Cluster(tmp_path, queue_store, mode="queue", workers=1, workflow=waiting_workflow())
    try:
        cluster.wait_workers_ready()
        started = time.monotonic()
        check_waiting(cluster.url, "https://hooks.example.org/", queue_store)
        assert time.monotonic() - started < 60
    finally:
        cluster.close()
