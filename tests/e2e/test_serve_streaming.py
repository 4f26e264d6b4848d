"""Streamed chat replies through `mini-n8n serve`, over real HTTP, against what n8n 1.123 sent for
the same workflows and scripted model (tests/parity/recorded/streaming/): the same chunks in
the same order with the same keys (timestamps aside), the same status and head; each model token
reaches the client while the model is still answering, in regular mode and in queue mode (a
worker relays the chunks through the broker)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from tests.parity.streaming import CASES, MODEL, RECORDED, peer_policy, webhook_id, workflow
from tests.peers.http_peer import Connection, Step
from tests.peers.openai_peer import OpenAIPeer
from tests.serve_harness import API_KEY, Cluster
from tests.store_backends import pg_schema_or_skip

GATE_WAIT_S = 60.0
HEAD = ("content-type", "cache-control", "transfer-encoding")


class GatedPeer(OpenAIPeer):
    """The scripted streaming model of the recordings; a reply to a message holding GATE stops after
    its first piece of text until `gate` is set (by the client that received that piece)."""

    def __init__(self) -> None:
        super().__init__(policy=peer_policy, model=MODEL)
        self.gate = threading.Event()
        self.gate_opened: bool | None = None  # whether the client opened it (else it timed out)

    def _stream(self, conn: Connection, body: dict[str, Any], step: Step) -> bool:
        if "GATE" not in json.dumps(body.get("messages", [])[-1:]):
            return super()._stream(conn, body, step)
        conn.head(200, {"Content-Type": "text/event-stream; charset=utf-8", "Transfer-Encoding": "chunked"})
        chunks = self.chunks(body, step)
        conn.chunk(chunks[0])  # the role
        conn.chunk(chunks[1])  # the first piece of text
        self.gate_opened = self.gate.wait(GATE_WAIT_S)
        for data in chunks[2:]:
            conn.chunk(data)
        conn.end_chunks()
        return True


def without_timestamps(body: str) -> list[str]:
    """Each line with its chunk's timestamp removed, keys in the order they were sent."""
    lines = []
    for line in body.splitlines():
        chunk = json.loads(line)
        chunk["metadata"].pop("timestamp", None)
        lines.append(json.dumps(chunk, separators=(",", ":")))
    return lines


def recorded(case: str) -> dict[str, Any]:
    return json.loads((RECORDED / f"{case}.json").read_text())


def post(url: str, case_or_hook: str, message: str) -> httpx.Response:
    body = {"action": "sendMessage", "sessionId": "recorded-session", "chatInput": message}
    return httpx.post(f"{url}/webhook/{case_or_hook}/chat", json=body, timeout=120)


def assert_like_n8n(url: str, cases: list[str]) -> None:
    for case in cases:
        n8n = recorded(case)
        ours = post(url, webhook_id(case), CASES[case][3])
        assert ours.status_code == n8n["status"], (case, ours.text)
        assert {k: ours.headers.get(k) for k in HEAD} == {k: n8n["headers"].get(k) for k in HEAD}, case
        assert without_timestamps(ours.text) == without_timestamps(n8n["body"]), case
        for line in ours.text.splitlines():
            chunk = json.loads(line)
            if chunk["type"] != "error":
                assert abs(chunk["metadata"]["timestamp"] / 1000 - ours_time(ours)) < 120


def ours_time(response: httpx.Response) -> float:
    from email.utils import parsedate_to_datetime

    return parsedate_to_datetime(response.headers["date"]).timestamp()


def assert_tokens_arrive_while_the_model_answers(url: str, peer: GatedPeer) -> None:
    """The client reads the first item chunk while the model is held mid-reply: nothing waits for
    the reply (or the execution) to end before sending a token on."""
    body = {"action": "sendMessage", "sessionId": "gated", "chatInput": "GATE please"}
    lines = []
    with httpx.stream("POST", f"{url}/webhook/{webhook_id('v3-echo')}/chat", json=body, timeout=GATE_WAIT_S + 30) as reply:
        assert reply.status_code == 200
        for line in reply.iter_lines():
            lines.append(json.loads(line))
            if lines[-1]["type"] == "item":
                peer.gate.set()
    assert peer.gate_opened is True  # opened by the client, before the model's reply went on
    assert [c["type"] for c in lines][:2] == ["begin", "item"] and lines[-1]["type"] == "end"
    assert "".join(c.get("content", "") for c in lines if c["type"] == "item") == "Echo: GATE please"


def assert_a_client_that_leaves_leaves_the_execution_going(url: str, peer: GatedPeer) -> None:
    """A client closing its connection mid-reply does not stop the execution (as n8n's): it ends
    and is stored with its whole answer."""
    import time

    peer.gate.clear()
    body = {"action": "sendMessage", "sessionId": "leaving", "chatInput": "GATE bye"}
    with httpx.stream("POST", f"{url}/webhook/{webhook_id('v3-echo')}/chat", json=body, timeout=60) as reply:
        for line in reply.iter_lines():
            if json.loads(line)["type"] == "item":
                break  # the client leaves after the first token
    peer.gate.set()
    key = {"X-N8N-API-KEY": API_KEY}
    deadline = time.monotonic() + 60
    while True:
        newest = httpx.get(f"{url}/api/v1/executions?limit=1", headers=key).json()["data"][0]
        if newest["status"] == "success":
            break
        assert time.monotonic() < deadline, newest
        time.sleep(0.05)
    data = httpx.get(f"{url}/api/v1/executions/{newest['id']}?includeData=true", headers=key).json()["data"]
    assert data["resultData"]["runData"]["AI Agent"][0]["data"]["main"][0][0]["json"] == {"output": "Echo: GATE bye"}


@pytest.fixture
def peer() -> Iterator[GatedPeer]:
    with GatedPeer() as model:
        yield model


def test_streamed_replies_match_n8n_in_regular_mode(tmp_path: Path, peer: GatedPeer) -> None:
    docs = [workflow(case, peer.base_url, for_n8n=False) for case in CASES]
    cluster = Cluster(tmp_path, str(tmp_path / "store.sqlite"), mode="regular", workflows=docs)
    try:
        assert_like_n8n(cluster.url, list(CASES))
        assert_tokens_arrive_while_the_model_answers(cluster.url, peer)
        # each chat is stored as any execution
        listed = httpx.get(f"{cluster.url}/api/v1/executions", headers={"X-N8N-API-KEY": API_KEY}).json()["data"]
        assert len(listed) == len(CASES) + 1 and {e["status"] for e in listed} == {"success", "error"}
        # a bad request to a streaming trigger is a clear 4xx, not a stream, and stores nothing
        chat = f"{cluster.url}/webhook/{webhook_id('v3-echo')}/chat"
        for reply, status, words in (
                (httpx.post(chat, content=b'{"action": "sendMess'), 400, "not valid JSON"),
                (httpx.post(chat, json={"action": "sendMessage", "sessionId": "s", "chatInput": 7}), 400, '"chatInput" must be'),
                (httpx.post(chat, content=b"x" * (2 * 1024 * 1024)), 413, "at most 1048576")):
            assert reply.status_code == status and words in reply.json()["message"], reply.text
            assert reply.headers["content-type"] == "application/json"
        again = httpx.get(f"{cluster.url}/api/v1/executions", headers={"X-N8N-API-KEY": API_KEY}).json()["data"]
        assert len(again) == len(listed)
        assert_a_client_that_leaves_leaves_the_execution_going(cluster.url, peer)
    finally:
        cluster.close()


def test_streamed_replies_match_n8n_in_queue_mode(tmp_path: Path, peer: GatedPeer) -> None:
    schema = pg_schema_or_skip()
    from tests.e2e.test_serve import broker_unreachable

    reason = broker_unreachable()
    if reason is not None:
        schema.drop()
        pytest.skip(reason)
    docs = [workflow(case, peer.base_url, for_n8n=False) for case in ("v3-tool", "v3-echo", "v3-fail", "v22-tool")]
    cluster = Cluster(tmp_path, schema.url, mode="queue", workers=1, workflows=docs)
    try:
        cluster.wait_workers_ready()
        assert_like_n8n(cluster.url, ["v3-tool", "v3-fail", "v22-tool"])
        assert_tokens_arrive_while_the_model_answers(cluster.url, peer)
    finally:
        cluster.close()
        schema.drop()
