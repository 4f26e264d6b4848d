"""`mini-n8n serve` with `mini-n8n worker`s on real PostgreSQL and RabbitMQ: chat executions all
complete with the right answers, each tool call runs once, a SIGKILLed worker's executions
resume on another worker from their last boundary; bad requests get clear 4xx and store nothing.
(The 200-execution and 10-kill-trial runs are in tests/benchmarks/bench_serve.py.)"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from engine.store import open_store
from tests.serve_harness import API_KEY, BROKER, WEBHOOK_ID, Cluster
from tests.store_backends import pg_schema_or_skip

EXECUTIONS = 24
ROUNDS = 3


def broker_unreachable() -> str | None:
    from kombu import Connection

    try:
        with Connection(BROKER, connect_timeout=3) as broker:
            broker.ensure_connection(max_retries=1)
    except Exception as exc:
        return f"the broker {BROKER} is unreachable: {exc}"
    return None


@pytest.fixture
def store_url() -> Iterator[str]:
    schema = pg_schema_or_skip()
    reason = broker_unreachable()
    if reason is not None:
        schema.drop()
        pytest.skip(reason)
    try:
        yield schema.url
    finally:
        schema.drop()


def chat_all(cluster: Cluster, tags: list[str], threads: int = 12) -> list[httpx.Response]:
    with httpx.Client() as client, ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda tag: cluster.chat(client, tag), tags))


def assert_each_tool_call_once(cluster: Cluster, tags: list[str]) -> None:
    expected = {f"{tag}-{i}" for tag in tags for i in range(1, ROUNDS + 1)}
    assert set(cluster.tool.calls) == expected
    repeated = {call: n for call, n in cluster.tool.calls.items() if n != 1}
    assert repeated == {}


def test_chat_executions_through_serve_and_three_workers(tmp_path: Path, store_url: str) -> None:
    cluster = Cluster(tmp_path, store_url, workers=3, rounds=ROUNDS)
    try:
        cluster.wait_workers_ready()
        tags = [f"m{i}" for i in range(EXECUTIONS)]
        replies = chat_all(cluster, tags)
        assert [r.status_code for r in replies] == [200] * EXECUTIONS, cluster.log_text()
        assert [r.json() for r in replies] == [{"output": f"answer to {tag}"} for tag in tags]
        assert_each_tool_call_once(cluster, tags)
        listed = httpx.get(cluster.url + "/api/v1/executions?limit=100", headers={"X-N8N-API-KEY": API_KEY}).json()["data"]
        assert len(listed) == EXECUTIONS and {e["status"] for e in listed} == {"success"}
        assert {e["mode"] for e in listed} == {"webhook"}
        store = open_store(store_url)
        state = store.load(listed[0]["id"])
        assert len(state.run_data["Lookup"]) == ROUNDS and len(state.run_data["Model"]) == ROUNDS + 1
        store.close()
    finally:
        cluster.close()


def test_a_worker_killed_mid_run_has_its_executions_resumed_by_another(tmp_path: Path, store_url: str) -> None:
    # each model reply streams for a while, so the kill lands inside executions
    cluster = Cluster(tmp_path, store_url, workers=2, rounds=ROUNDS, token_delay=0.02)
    try:
        cluster.wait_workers_ready()
        victim = cluster.workers[0]
        tags = [f"k{i}" for i in range(8)]
        with ThreadPoolExecutor(1) as pool:
            answers = pool.submit(chat_all, cluster, tags, 8)
            while sum(cluster.tool.calls.values()) < 4:  # both workers are inside executions
                assert not answers.done(), cluster.log_text()
                time.sleep(0.01)
            killed_at = time.time()
            cluster.kill(victim)
            replies = answers.result(timeout=240)
            print(f"all answered {time.time() - killed_at:.1f} s after the kill")
        victim_log = cluster.logs[0].read_text(errors="replace")
        unfinished = victim_log.count("] received") - victim_log.count("] succeeded")
        assert unfinished >= 1, victim_log  # it died inside an execution, which another worker finished
        survivor_log = cluster.logs[1].read_text(errors="replace")
        assert survivor_log.count("resuming it from its last boundary") >= unfinished, survivor_log
        assert [r.status_code for r in replies] == [200] * len(tags), cluster.log_text()
        assert [r.json() for r in replies] == [{"output": f"answer to {tag}"} for tag in tags]
        # a tool call may repeat only if it was in flight when the worker died (its node had not finished)
        for call, n in cluster.tool.calls.items():
            if n > 1:
                first_received, first_answered = cluster.tool.times[call][0]
                assert n == 2 and first_received <= killed_at <= first_answered + 0.5, (call, cluster.tool.times[call], killed_at)
        assert set(cluster.tool.calls) == {f"{tag}-{i}" for tag in tags for i in range(1, ROUNDS + 1)}
        store = open_store(store_url)
        for row in store.list():
            state = store.load(row.id)
            assert state.status == "success" and len(state.run_data["Lookup"]) == ROUNDS
        store.close()
    finally:
        cluster.close()


def test_bad_requests_get_clear_4xx_and_store_nothing(tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINI_N8N_RESPONSE_TIMEOUT_S", "1")
    cluster = Cluster(tmp_path, store_url, workers=0, mode="queue")
    chat = f"{cluster.url}/webhook/{WEBHOOK_ID}/chat"
    api = f"{cluster.url}/api/v1/executions"
    key = {"X-N8N-API-KEY": API_KEY}
    try:
        cases = [
            (httpx.post(chat, content=b'{"action": "sendMess'), 400, "not valid JSON"),
            (httpx.post(chat, json=["sendMessage"]), 400, "must be a JSON object"),
            (httpx.post(chat, json={"action": "dance", "sessionId": "s"}), 400, '"action" must be'),
            (httpx.post(chat, json={"action": "sendMessage", "chatInput": "hi"}), 400, '"sessionId" must be'),
            (httpx.post(chat, json={"action": "sendMessage", "sessionId": "s", "chatInput": 7}), 400, '"chatInput" must be'),
            (httpx.post(chat, content=b"x" * (2 * 1024 * 1024)), 413, "at most 1048576"),
            (httpx.post(f"{cluster.url}/webhook/nope/chat", json={}), 404, '"POST nope/chat" is not registered'),
            (httpx.get(api), 401, "header is required"),
            (httpx.get(api, headers={"X-N8N-API-KEY": "wrong"}), 401, "not hold a valid API key"),
            (httpx.get(api + "?limit=0", headers=key), 400, '"limit" must be'),
            (httpx.get(api + "/unknown", headers=key), 404, 'no execution "unknown"'),
            (httpx.delete(api + "/unknown", headers=key), 404, 'no execution "unknown"'),
            (httpx.post(api + "/unknown/resume", headers=key), 404, 'no execution "unknown"'),
            (httpx.post(api + "/unknown/stop", headers=key), 404, 'no execution "unknown"'),
            (httpx.get(api + "/unknown/export", headers=key), 404, 'no execution "unknown"'),
            (httpx.get(f"{cluster.url}/nowhere"), 404, "there is nothing at GET /nowhere"),
            (httpx.put(api, headers=key), 405, "PUT is not allowed at /api/v1/executions"),
            (httpx.get(chat), 404, f'"GET {WEBHOOK_ID}/chat" is not registered'),  # as n8n words an unknown webhook
        ]
        # every API endpoint: no key, a wrong key
        for method, path in (("GET", ""), ("GET", "/x1"), ("GET", "/x1/export"), ("DELETE", "/x1"),
                             ("POST", "/x1/resume"), ("POST", "/x1/stop")):
            for headers, words in (({}, "header is required"), ({"X-N8N-API-KEY": "wrong"}, "not hold a valid API key")):
                cases.append((httpx.request(method, api + path, headers=headers), 401, words))
        for response, status, message in cases:
            assert response.status_code == status, (response.request.url, response.text)
            assert message in response.json()["message"], response.text
        assert httpx.get(api, headers=key).json() == {"data": [], "nextCursor": None}
        assert "401 GET /api/v1/executions: the X-N8N-API-KEY header does not hold a valid API key" in cluster.log_text()
        # a good request while no worker takes jobs: the client is told, after the response
        # timeout, that it goes on and where to look
        waited = httpx.post(chat, json={"action": "sendMessage", "sessionId": "s", "chatInput": "hi"}, timeout=30)
        assert waited.status_code == 504
        assert waited.json()["message"].startswith(f"execution {waited.json()['executionId']} has not finished after 1 s")
    finally:
        cluster.close()


def test_queue_mode_needs_postgresql(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from tests.serve_harness import ROOT

    env = {**os.environ, "MINI_N8N_DB": str(tmp_path / "x.sqlite")}
    for args in (["serve", "--mode", "queue", str(tmp_path)], ["worker"]):
        done = subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 2
        assert "needs the execution store on PostgreSQL" in done.stderr and "set MINI_N8N_DB to a postgresql:// URL" in done.stderr


def wait_status(cluster: Cluster, execution_id: str, wanted: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        reply = httpx.get(f"{cluster.url}/api/v1/executions/{execution_id}", headers={"X-N8N-API-KEY": API_KEY})
        if reply.status_code == 200 and reply.json()["status"] == wanted:
            return reply.json()
        assert time.monotonic() < deadline, (reply.text, cluster.log_text())
        time.sleep(0.05)


@pytest.mark.parametrize("mode", ["regular", "queue"])
async def test_the_api_resumes_a_paused_execution_and_stops_a_running_one(tmp_path: Path, store_url: str, mode: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import json as json_module

    from engine.debugger import Breakpoints
    from engine.executor import Engine
    from engine.registry import builtin_registry
    from engine.workflow import parse_workflow
    from nodes.triggers.chat_trigger import chat_item
    from tests.engine.pausing import run_to_pause

    cluster = Cluster(tmp_path, store_url, workers=1, mode=mode, rounds=ROUNDS, token_delay=0.05)
    api = f"{cluster.url}/api/v1/executions"
    key = {"X-N8N-API-KEY": API_KEY}
    try:
        # paused after its first tool call by another process, which then went away
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        store = open_store(store_url)
        workflow = parse_workflow(json_module.loads(cluster.workflow.read_text()))
        paused = await run_to_pause(  # before the second tool call
            Engine(builtin_registry(), store=store).create(workflow, items=[chat_item("p1", "session-p1")], mode="webhook"),
            Breakpoints(before_tool=True, from_iteration=2))
        assert paused.status == "paused"
        store.close()
        if mode == "queue":
            cluster.wait_workers_ready()
        reply = httpx.post(f"{api}/{paused.id}/resume", headers=key)
        assert reply.status_code == 202, reply.text
        done = wait_status(cluster, paused.id, "success")
        assert done["finished"] is True
        assert cluster.tool.calls == {"p1-1": 1, "p1-2": 1, "p1-3": 1}
        again = httpx.post(f"{api}/{paused.id}/resume", headers=key)
        assert again.status_code == 409 and "only paused or crashed executions resume" in again.json()["message"]

        with httpx.Client() as client, ThreadPoolExecutor(1) as pool:
            answer = pool.submit(cluster.chat, client, "s1")
            while not any(call.startswith("s1-") for call in cluster.tool.calls):
                time.sleep(0.02)
            running = [e for e in httpx.get(api, headers=key).json()["data"] if e["status"] == "running"]
            assert len(running) == 1
            stopped = httpx.post(f"{api}/{running[0]['id']}/stop", headers=key)
            assert stopped.status_code == 200, stopped.text
            reply = answer.result(timeout=60)
        assert reply.status_code == 500 and reply.json()["message"] == "Execution was cancelled"
        assert wait_status(cluster, running[0]["id"], "canceled")["finished"] is False
        assert cluster.tool.calls["s1-1"] == 1 and "s1-3" not in cluster.tool.calls
        deleted = httpx.delete(f"{api}/{running[0]['id']}", headers=key)
        assert deleted.status_code == 200 and deleted.json()["status"] == "canceled"
        assert httpx.get(f"{api}/{running[0]['id']}", headers=key).status_code == 404
    finally:
        cluster.close()


def test_a_server_killed_under_load_loses_no_accepted_execution(tmp_path: Path, store_url: str) -> None:
    """Clients of the killed server get a clear transport error or their answer; every execution
    it had handed to the workers completes; the restarted server answers again."""
    cluster = Cluster(tmp_path, store_url, workers=2, rounds=ROUNDS, token_delay=0.02)
    try:
        cluster.wait_workers_ready()
        tags = [f"r{i}" for i in range(10)]

        def chat_or_error(client: httpx.Client, tag: str) -> object:
            try:
                return cluster.chat(client, tag)
            except httpx.TransportError as exc:
                return exc

        with httpx.Client() as client, ThreadPoolExecutor(10) as pool:
            outcomes = pool.map(lambda tag: chat_or_error(client, tag), tags)
            while sum(cluster.tool.calls.values()) < 3:
                time.sleep(0.01)
            assert cluster.server is not None
            cluster.kill(cluster.server)
            outcomes = list(outcomes)
        answered = [tag for tag, o in zip(tags, outcomes) if isinstance(o, httpx.Response)]
        for tag, outcome in zip(tags, outcomes):
            if isinstance(outcome, httpx.Response):
                assert outcome.status_code == 200 and outcome.json() == {"output": f"answer to {tag}"}
            else:
                assert isinstance(outcome, (httpx.RemoteProtocolError, httpx.ReadError, httpx.ConnectError)), outcome
        assert len(answered) < len(tags)  # the kill came under load
        cluster.start_server()
        store = open_store(store_url)
        deadline = time.monotonic() + 120
        while {row.status for row in store.list()} - {"success"}:
            assert time.monotonic() < deadline, [(r.id, r.status) for r in store.list()]
            time.sleep(0.1)
        accepted = store.list()
        assert len(accepted) >= len(answered)
        for row in accepted:
            state = store.load(row.id)
            tag = state.run_data["Chat"][0].to_json()["data"]["main"][0][0]["json"]["chatInput"]
            assert state.result == [{"json": {"output": f"answer to {tag}"}, "pairedItem": {"item": 0}}]
            assert all(cluster.tool.calls[f"{tag}-{i}"] == 1 for i in range(1, ROUNDS + 1))
        store.close()
        with httpx.Client() as client:
            assert cluster.chat(client, "after").json() == {"output": "answer to after"}
    finally:
        cluster.close()


def test_regular_mode_on_sqlite_answers_chat_and_loads_the_previous_session(tmp_path: Path) -> None:
    """One process, no server but itself: the SQLite store, Simple Memory read back by n8n's
    loadPreviousSession as LangChain's serialised messages."""
    from engine.workflow import workflow_to_data
    from tests.builders import agent_workflow

    doc = workflow_to_data(agent_workflow([{"text": "the answer"}], memory=True, tools=[]))  # each execution: this reply
    for node in doc["nodes"]:
        if node["name"] == "Chat":
            node["webhookId"] = WEBHOOK_ID
            node["parameters"] = {"public": True, "mode": "webhook", "options": {"loadPreviousSession": "memory"}}
    cluster = Cluster(tmp_path, str(tmp_path / "store.sqlite"), mode="regular", workflow=doc)
    chat = f"{cluster.url}/webhook/{WEBHOOK_ID}/chat"
    try:
        with httpx.Client() as client:
            assert cluster.chat(client, "hello", session="s1").json() == {"output": "the answer"}
            assert cluster.chat(client, "again", session="s1").json() == {"output": "the answer"}
        previous = httpx.post(chat, json={"action": "loadPreviousSession", "sessionId": "s1"}).json()["data"]
        assert [(m["id"][-1], m["kwargs"]["content"]) for m in previous] == [
            ("HumanMessage", "hello"), ("AIMessage", "the answer"), ("HumanMessage", "again"), ("AIMessage", "the answer")]
        assert previous[0] == {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "HumanMessage"],
                               "kwargs": {"content": "hello", "additional_kwargs": {}, "response_metadata": {}}}
        assert httpx.post(chat, json={"action": "loadPreviousSession", "sessionId": "other"}).json() == {"data": []}
    finally:
        cluster.close()


def test_only_public_chat_triggers_with_a_webhook_id_are_served_and_the_rest_is_named(tmp_path: Path) -> None:
    import json as json_module

    from engine.errors import MiniN8nError
    from engine.serve.workflows import chat_endpoints
    from tests.serve_harness import chat_workflow

    def variant(name: str, **chat: object) -> None:
        doc = chat_workflow("http://model", "http://tool", 1)
        doc["name"] = name
        doc["nodes"][0]["parameters"].update(chat)
        (tmp_path / f"{name}.json").write_text(json_module.dumps(doc))

    variant("a-served")
    variant("b-private", public=False)
    variant("c-respond-node", options={"responseMode": "responseNode"})
    (tmp_path / "notes.txt").write_text("not a workflow")
    endpoints, warnings = chat_endpoints([str(tmp_path)])
    assert list(endpoints) == [WEBHOOK_ID] and endpoints[WEBHOOK_ID].workflow.name == "a-served"
    assert any('b-private.json: the Chat Trigger "Chat" is not made publicly available' in w and "n8n answers 404" in w
               for w in warnings), warnings
    assert any('c-respond-node.json: the Chat Trigger "Chat" answers with response mode "responseNode"' in w for w in warnings)
    variant("d-duplicate")
    with pytest.raises(MiniN8nError, match=f'd-duplicate.json: the Chat Trigger "Chat" has the webhookId {WEBHOOK_ID} of "Chat" in '):
        chat_endpoints([str(tmp_path)])
    with pytest.raises(MiniN8nError, match="nowhere.json: no such file or folder"):
        chat_endpoints([str(tmp_path / "nowhere.json")])


def test_in_queue_mode_simple_memory_is_shared_by_the_workers_and_the_server(tmp_path: Path, store_url: str) -> None:
    """A conversation whose turns run on different workers reads as one, to the model and to
    loadPreviousSession on the server: Simple Memory lives in the PostgreSQL store."""
    cluster = Cluster(tmp_path, store_url, workers=2, rounds=1, memory=True)
    try:
        cluster.wait_workers_ready()
        turns = ["t1", "t2", "t3", "t4"]
        with httpx.Client() as client:
            for tag in turns:
                assert cluster.chat(client, tag, session="one").json() == {"output": f"answer to {tag}"}
        deadline = time.monotonic() + 30  # a worker logs the end just after the store has it
        while sum(per_worker := [log.read_text().count(": success") for log in cluster.logs
                                 if log.name.startswith("worker")]) < len(turns):
            assert time.monotonic() < deadline, per_worker
            time.sleep(0.05)
        assert min(per_worker) >= 1, per_worker  # the broker spread the turns over both workers
        last = cluster.model.requests[-1].json["messages"]
        assert [m["content"] for m in last if m["role"] == "user"] == turns  # the earlier turns came from memory
        previous = httpx.post(f"{cluster.url}/webhook/{WEBHOOK_ID}/chat",
                              json={"action": "loadPreviousSession", "sessionId": "one"}).json()["data"]
        assert [m["kwargs"]["content"] for m in previous] == [text for tag in turns for text in (tag, f"answer to {tag}")]
    finally:
        cluster.close()
