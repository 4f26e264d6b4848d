"""Webhook, Form and Schedule triggers through a real `mini-n8n serve` (uvicorn on a loopback
port), in regular mode on SQLite and in queue mode with a worker on PostgreSQL and RabbitMQ.
The expected answers are those real n8n 1.123 gave to the same requests for the same nodes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.run_data import ENDED
from engine.store import open_store
from tests.serve_harness import Cluster

NOT_FOUND_HINT = ("The workflow must be active for a production URL to run successfully. You can activate the workflow "
                  "using the toggle in the top-right of the editor. Note that unlike test URL calls, production URL calls "
                  "aren't shown on the canvas (only in the executions list)")


def _node(name: str, type_: str, version: float, parameters: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": f"id-{name}", "name": name, "type": type_, "typeVersion": version, "position": [0, 0],
            "parameters": parameters, **extra}


def _hook(name: str, method: str, path: str, **parameters: Any) -> dict[str, Any]:
    return _node(name, "n8n-nodes-base.webhook", 2, {"httpMethod": method, "path": path, "options": {}, **parameters},
                 webhookId=f"w-{path.split('/')[0]}")


def triggers_workflow(schedule_seconds: int | None = None) -> dict[str, Any]:
    """One workflow with every kind of served trigger, each with its own branch."""
    nodes = [
        _hook("On", "POST", "t-on"),
        _hook("Last", "POST", "t-last", responseMode="lastNode"),
        _hook("All", "GET", "t-all", responseMode="lastNode", responseData="allEntries",
              options={"responseCode": {"values": {"responseCode": 201}}}),
        _node("Two", "n8n-nodes-base.code", 2, {"jsCode": "return [{json:{a:1}},{json:{a:2}}]"}),
        _hook("NoData", "POST", "t-nodata", responseMode="lastNode", responseData="noData"),
        _hook("Resp", "POST", "t-resp", responseMode="responseNode"),
        _node("Respond", "n8n-nodes-base.respondToWebhook", 1.1,
              {"respondWith": "json", "responseBody": '={{ {"got": $json.body.name} }}',
               "options": {"responseCode": 201, "responseHeaders": {"entries": [{"name": "X-Thing", "value": "yes"}]}}}),
        _node("Dyn", "n8n-nodes-base.webhook", 2, {"httpMethod": "GET", "path": "user/:id/items/:item",
                                                    "responseMode": "lastNode", "options": {}}, webhookId="w-dyn"),
        _hook("Err", "POST", "t-lasterr", responseMode="lastNode"),
        _node("Boom", "n8n-nodes-base.code", 2, {"jsCode": "throw new Error('boom')"}),
        _node("OnV1", "n8n-nodes-base.webhook", 1, {"httpMethod": "GET", "path": "t-onv1", "responseCode": 202,
                                                     "options": {"responseData": "custom text"}}, webhookId="w-onv1"),
        _hook("Early", "POST", "t-early", responseMode="responseNode"),
        _hook("Allowed", "GET", "t-allowed", options={"ipWhitelist": "10.9.8.7, 192.168.77.1"}),
        _node("Respond Early", "n8n-nodes-base.respondToWebhook", 1.5, {"respondWith": "text", "responseBody": "early"}),
        _node("Pause", "n8n-nodes-base.wait", 1.1, {"amount": 6, "unit": "seconds"}),
        _node("Form", "n8n-nodes-base.formTrigger", 2.2, {
            "formTitle": "Contact", "formFields": {"values": [{"fieldLabel": "Name"}, {"fieldLabel": "Age", "fieldType": "number"}]},
            "options": {"path": "f-one"}}, webhookId="w-form"),
    ]
    connections = {"All": {"main": [[{"node": "Two", "type": "main", "index": 0}]]},
                   "Resp": {"main": [[{"node": "Respond", "type": "main", "index": 0}]]},
                   "Err": {"main": [[{"node": "Boom", "type": "main", "index": 0}]]},
                   "Early": {"main": [[{"node": "Respond Early", "type": "main", "index": 0}]]},
                   "Respond Early": {"main": [[{"node": "Pause", "type": "main", "index": 0}]]}}
    if schedule_seconds is not None:
        nodes.append(_node("Every", "n8n-nodes-base.scheduleTrigger", 1.2,
                           {"rule": {"interval": [{"field": "seconds", "secondsInterval": schedule_seconds}]}}))
    return {"name": "served triggers", "nodes": nodes, "connections": connections, "settings": {"timezone": "UTC"}}


def check_answers(url: str, port: int) -> None:
    """The answers real n8n gave (its port and host in them replaced by ours)."""
    host = f"localhost:{port}"
    on = httpx.post(f"{url}/webhook/t-on", json={"a": 1})
    assert (on.status_code, on.json()) == (200, {"message": "Workflow was started"})
    assert on.headers["content-type"] == "application/json; charset=utf-8"
    last = httpx.post(f"{url}/webhook/t-last?x=1&x=2&y[z]=3&e=", content=b'{"name":"Ann"}',
                      headers={"content-type": "application/json", "x-dup": "1", "host": host, "user-agent": "curl/7.88.1",
                               "accept": "*/*"})
    assert last.status_code == 200
    body = last.json()
    assert body["params"] == {} and body["query"] == {"x": ["1", "2"], "y": {"z": "3"}, "e": ""}
    assert body["body"] == {"name": "Ann"} and body["executionMode"] == "production"
    assert body["webhookUrl"] == f"http://localhost:{port}/webhook/t-last"
    assert body["headers"]["x-dup"] == "1" and body["headers"]["content-type"] == "application/json"
    assert list(body) == ["headers", "params", "query", "body", "webhookUrl", "executionMode"]
    every = httpx.get(f"{url}/webhook/t-all")
    assert (every.status_code, every.json()) == (201, [{"a": 1}, {"a": 2}])
    nodata = httpx.post(f"{url}/webhook/t-nodata", json={})
    assert (nodata.status_code, nodata.content) == (200, b"")
    resp = httpx.post(f"{url}/webhook/t-resp", json={"name": "Ann"})
    assert (resp.status_code, resp.json(), resp.headers["x-thing"]) == (201, {"got": "Ann"}, "yes")
    dyn = httpx.get(f"{url}/webhook/w-dyn/user/42/items/7").json()
    assert dyn["params"] == {"id": "42", "item": "7"} and dyn["body"] == {}
    assert dyn["webhookUrl"] == f"http://localhost:{port}/webhook/w-dyn/user/:id/items/:item"
    err = httpx.post(f"{url}/webhook/t-lasterr", json={})
    assert (err.status_code, err.json()) == (500, {"message": "Error in workflow"})
    v1 = httpx.get(f"{url}/webhook/t-onv1")
    assert (v1.status_code, v1.text, v1.headers["content-type"]) == (202, "custom text", "text/html; charset=utf-8")
    started = time.monotonic()
    early = httpx.post(f"{url}/webhook/t-early", json={})
    assert (early.status_code, early.text) == (200, "early")
    assert time.monotonic() - started < 4.5  # answered as the Respond node ran, before the 6 s wait after it
    form_page = httpx.get(f"{url}/form/f-one")
    assert form_page.status_code == 200 and "<h1>Contact</h1>" in form_page.text and 'name="field-1"' in form_page.text
    # a web page's request (CORS): n8n's preflight and headers
    preflight = httpx.options(f"{url}/webhook/t-on", headers={"origin": "http://example.com",
                                                              "access-control-request-method": "POST",
                                                              "access-control-request-headers": "content-type"})
    assert preflight.status_code == 204 and {k: v for k, v in preflight.headers.items() if k.startswith("access-control")} == {
        "access-control-allow-methods": "OPTIONS, POST", "access-control-allow-origin": "http://example.com",
        "access-control-max-age": "300", "access-control-allow-headers": "content-type"}
    from_page = httpx.post(f"{url}/webhook/t-resp", json={"name": 1}, headers={"origin": "http://a.b"})
    assert from_page.status_code == 201 and from_page.headers["access-control-allow-origin"] == "http://a.b"
    assert from_page.headers["access-control-allow-methods"] == "OPTIONS, POST"
    form_preflight = httpx.options(f"{url}/form/f-one", headers={"origin": "http://a.b", "access-control-request-method": "POST"})
    assert form_preflight.headers["access-control-allow-methods"] == "OPTIONS, GET, POST"
    submitted = httpx.post(f"{url}/form/f-one?ref=mail", files={"field-0": (None, " Bob "), "field-1": (None, "41")})
    assert (submitted.status_code, submitted.json()) == (200, {"status": 200})


def check_bad_requests(url: str) -> None:
    cases = [
        (httpx.get(f"{url}/webhook/nope"), 404,
         {"code": 404, "message": 'The requested webhook "GET nope" is not registered.', "hint": NOT_FOUND_HINT}),
        (httpx.get(f"{url}/webhook/t-on"), 404,
         {"code": 404, "message": "This webhook is not registered for GET requests. Did you mean to make a POST request?"}),
        (httpx.put(f"{url}/webhook/t-all"), 404,
         {"code": 404, "message": "This webhook is not registered for PUT requests. Did you mean to make a GET request?"}),
        (httpx.post(f"{url}/webhook//t-on", json={}), 404,
         {"code": 404, "message": 'The requested webhook "POST /t-on" is not registered.', "hint": NOT_FOUND_HINT}),
        (httpx.post(f"{url}/webhook/t-on", content=b'{"a":', headers={"content-type": "application/json"}), 422, None),
        (httpx.post(f"{url}/webhook/t-on", content=b"<a>1</a>", headers={"content-type": "application/xml"}), 415, None),
        (httpx.post(f"{url}/webhook/t-on", content=b"x" * (17 * 1024 * 1024), headers={"content-type": "text/plain"}), 413, None),
        (httpx.post(f"{url}/form/f-one", json={"field-0": "x"}), 415, None),
        (httpx.get(f"{url}/form/nope"), 404, None),
        (httpx.options(f"{url}/webhook/nope", headers={"origin": "http://a.b", "access-control-request-method": "POST"}), 404,
         {"code": 404, "message": 'The requested webhook "POST nope" is not registered.', "hint": NOT_FOUND_HINT}),
        (httpx.head(f"{url}/webhook/t-all"), 404, "HEAD"),
        (httpx.get(f"{url}/webhook/t-allowed"), 403, "IP is not whitelisted to access the webhook!"),
    ]
    for response, status, body in cases:
        assert response.status_code == status, (response.request.url, response.text)
        if body == "HEAD":
            continue
        if isinstance(body, str):
            assert response.text == body  # n8n's bare text
            continue
        if body is not None:
            assert response.json() == body
        else:
            assert response.json()["message"], response.text
    assert httpx.post(f"{url}/webhook/t-on", content=b'{"a":', headers={"content-type": "application/json"}).json()[
        "message"] == "Failed to parse request body"


def wait_for(predicate: Any, timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_webhooks_and_forms_answer_as_n8n_in_regular_mode(tmp_path: Path) -> None:
    store_path = str(tmp_path / "store.sqlite")
    cluster = Cluster(tmp_path, store_path, mode="regular", workflow=triggers_workflow())
    try:
        check_bad_requests(cluster.url)
        store = open_store(store_path)
        assert store.list() == [], "a refused request stored an execution"
        check_answers(cluster.url, cluster.port)
        wait_for(lambda: len(store.list()) == 11 and all(r.status in ENDED for r in store.list()),
                 what="an execution per accepted request, each ended")
        rows = store.list()
        assert {r.mode for r in rows} == {"webhook"}
        assert sorted(r.status for r in rows) == ["error"] + ["success"] * 10
        form = next(store.load(r.id) for r in rows if store.load(r.id).start_node == "Form")
        item = form.run_data["Form"][0].data["main"][0][0]["json"]
        assert item["Name"] == "Bob" and item["Age"] == 41 and item["formMode"] == "production"
        assert item["formQueryParameters"] == {"ref": "mail"} and item["submittedAt"].endswith("Z")
        store.close()
    finally:
        cluster.close()
    assert "422 POST /webhook/t-on: Failed to parse request body" in cluster.log_text()


def test_a_schedule_fires_from_the_server_every_second_in_regular_mode(tmp_path: Path) -> None:
    store_path = str(tmp_path / "store.sqlite")
    cluster = Cluster(tmp_path, store_path, mode="regular", workflow=triggers_workflow(schedule_seconds=1))
    try:
        store = open_store(store_path)
        wait_for(lambda: len([r for r in store.list() if r.mode == "trigger"]) >= 3, what=cluster.log_text())
        fired = [store.load(r.id) for r in store.list() if r.mode == "trigger"]
        # the newest may still read "new": a served execution's row says it runs from its first fold on (<= 0.1 s)
        assert {s.status for s in fired} <= {"success", "running", "new"}
        assert any(s.status == "success" for s in fired)
        items = [s.run_data["Every"][0].data["main"][0][0]["json"] for s in fired if "Every" in s.run_data]
        assert len({i["timestamp"][:19] for i in items}) == len(items)  # one execution per firing second
        assert all(i["Timezone"] == "UTC (UTC+00:00)" for i in items)
        store.close()
        assert "schedule: Every (served triggers): \"*/1 * * * * *\" in UTC" in cluster.log_text()
    finally:
        cluster.close()


@pytest.fixture
def queue_store() -> Any:
    from tests.e2e.test_serve import broker_unreachable
    from tests.store_backends import pg_schema_or_skip

    schema = pg_schema_or_skip()
    reason = broker_unreachable()
    if reason is not None:
        schema.drop()
        pytest.skip(reason)
    try:
        yield schema.url
    finally:
        schema.drop()


def test_webhooks_forms_and_one_scheduler_in_queue_mode(tmp_path: Path, queue_store: str) -> None:
    """Executions run on the workers; the schedule fires from the server alone (two workers, one
    execution per firing)."""
    cluster = Cluster(tmp_path, queue_store, mode="queue", workers=2, workflow=triggers_workflow(schedule_seconds=1))
    try:
        cluster.wait_workers_ready()
        check_bad_requests(cluster.url)
        check_answers(cluster.url, cluster.port)
        store = open_store(queue_store)
        wait_for(lambda: len([r for r in store.list(500) if r.mode == "trigger" and r.status == "success"]) >= 4,
                 what=cluster.log_text())
        fired = [store.load(r.id) for r in store.list(500) if r.mode == "trigger"]
        seconds = [s.run_data["Every"][0].data["main"][0][0]["json"]["timestamp"][:19] for s in fired if "Every" in s.run_data]
        assert len(set(seconds)) == len(seconds), seconds  # never fired twice for one second
        webhook_runs = [r for r in store.list(500) if r.mode == "webhook"]
        assert len(webhook_runs) == 11
        store.close()
        logs = cluster.log_text()
        assert "succeeded" in logs and logs.count("fired: execution") >= 4
    finally:
        cluster.close()
