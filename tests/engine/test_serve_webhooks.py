"""The parts of serving triggers that need no server: query strings read as Express reads them,
which webhook a path finds (n8n's rules for path parameters), what is refused at start-up and
said by name, and the scheduler's plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.serve.scheduler import Scheduler
from engine.serve.webhooks import WebhookError, WebhookServer, parse_query
from engine.serve.workflows import serve_targets


def test_query_strings_as_express_reads_them() -> None:
    # n8n 1.123 gave {"x":["1","2"],"y":{"z":"3"},"e":""} for ?x=1&x=2&y[z]=3&e=
    assert parse_query("x=1&x=2&y[z]=3&e=") == {"x": ["1", "2"], "y": {"z": "3"}, "e": ""}
    assert parse_query("a[]=1&a[]=2&b=%20c") == {"a": ["1", "2"], "b": " c"}
    assert parse_query("") == {}


def _hook(name: str, path: str, method: str = "GET", webhook_id: str = "w1", **parameters: object) -> dict:
    return {"id": name, "name": name, "type": "n8n-nodes-base.webhook", "typeVersion": 2, "position": [0, 0],
            "webhookId": webhook_id, "parameters": {"httpMethod": method, "path": path, **parameters}}


def _write(tmp_path: Path, name: str, nodes: list[dict], connections: dict | None = None) -> None:
    (tmp_path / f"{name}.json").write_text(json.dumps({"name": name, "nodes": nodes, "connections": connections or {}}))


def test_paths_find_their_webhook_as_n8n_does(tmp_path: Path) -> None:
    _write(tmp_path, "a", [_hook("Static", "users/me"), _hook("Any", "users/:id", webhook_id="w1"),
                           _hook("Both", "users/:id/:part", webhook_id="w1"), _hook("Fixed", "users/:id/posts", webhook_id="w1"),
                           _hook("Post", "users/me", method="POST", webhook_id="w2")])
    served = serve_targets([str(tmp_path)])
    server = WebhookServer(served.webhooks, runner=None, base_url="http://localhost:5678")
    assert server.find("webhook", "GET", "users/me/")[0].trigger.name == "Static"
    endpoint, params = server.find("webhook", "GET", "w1/users/7")
    assert (endpoint.trigger.name, params) == ("Any", {"id": "7"})
    endpoint, params = server.find("webhook", "GET", "w1/users/7/posts")  # the most fixed segments wins
    assert (endpoint.trigger.name, params) == ("Fixed", {"id": "7"})
    assert server.find("webhook", "GET", "w1/users/7/likes")[1] == {"id": "7", "part": "likes"}
    with pytest.raises(WebhookError) as wrong:
        server.find("webhook", "DELETE", "users/me")
    assert wrong.value.message == "This webhook is not registered for DELETE requests. Did you mean to make a GET or POST request?"
    with pytest.raises(WebhookError) as missing:
        server.find("webhook", "GET", "w9/users/7")
    assert (missing.value.status, missing.value.message) == (404, 'The requested webhook "GET w9/users/7" is not registered.')


def test_what_is_not_served_is_named(tmp_path: Path) -> None:
    respond = {"id": "r", "name": "Respond", "type": "n8n-nodes-base.respondToWebhook", "typeVersion": 1.1,
               "position": [0, 0], "parameters": {}}
    _write(tmp_path, "auth", [_hook("Locked", "locked", authentication="basicAuth")])
    _write(tmp_path, "raw", [_hook("Raw", "raw", options={"rawBody": True})])
    _write(tmp_path, "stream", [{**_hook("Streamed", "s"), "typeVersion": 2.1,
                                 "parameters": {"path": "s", "responseMode": "streaming"}}])
    _write(tmp_path, "norespond", [_hook("Lonely", "lonely", responseMode="responseNode")])
    _write(tmp_path, "unused", [_hook("Unused", "unused"), respond],
           {"Unused": {"main": [[{"node": "Respond", "type": "main", "index": 0}]]}})
    _write(tmp_path, "twice", [_hook("One", "same"), _hook("Two", "same", webhook_id="w2")])
    with pytest.raises(Exception, match='the trigger "Two" listens at GET /webhook/same, as "One"'):
        serve_targets([str(tmp_path)])
    (tmp_path / "twice.json").unlink()
    served = serve_targets([str(tmp_path)])
    assert served.webhooks == []
    text = "\n".join(served.warnings)
    assert 'the Webhook "Locked" is not served: authentication "basicAuth" is not supported' in text
    assert 'the Webhook "Raw" is not served: option "rawBody": the raw body (binary) is not supported' in text
    assert 'the Webhook "Streamed" is not served: response mode "streaming" is not supported' in text
    assert 'the Webhook "Lonely" is not served: No Respond to Webhook node found in the workflow' in text
    assert 'the Webhook "Unused" is not served: Webhook node not correctly configured' in text


def test_the_scheduler_plans_each_rule_and_names_the_ones_it_cannot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GENERIC_TIMEZONE", raising=False)

    def schedule(name: str, interval: dict, version: float = 1.2) -> dict:
        return {"id": name, "name": name, "type": "n8n-nodes-base.scheduleTrigger", "typeVersion": version,
                "position": [0, 0], "parameters": {"rule": {"interval": [interval]}}}

    _write(tmp_path, "s", [schedule("Often", {"field": "seconds", "secondsInterval": 2}),
                           schedule("Broken", {"field": "cronExpression", "expression": "* * *"}),
                           schedule("Too many", {"field": "hours", "hoursInterval": 30}, version=1.3),
                           schedule("Never", {"field": "cronExpression", "expression": "0 0 30 2 *"})])
    served = serve_targets([str(tmp_path)])
    scheduler = Scheduler(served.schedules, runner=None)
    assert scheduler.rules == 1
    assert scheduler.describe()[0].startswith('Often (s): "*/2 * * * * *" in America/New_York, next at ')
    assert any('"Broken" is not scheduled: Invalid cron expression' in w for w in scheduler.warnings)
    assert any('rule 1 of the Schedule Trigger "Never" is not scheduled: "0 0 30 2 *" never matches' in w
               for w in scheduler.warnings)
    assert any('"Too many" is not scheduled: Invalid interval (Hours must be in range 1-23)' in w for w in scheduler.warnings)
