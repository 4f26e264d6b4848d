"""A served chat agent on real parts, for tests and benchmarks of `mini-n8n serve` and `worker`.

The agent's model is the scripted OpenAI-compatible peer (tests/peers/openai_peer.py): for a
chat message TAG it calls the HTTP Request Tool `rounds` times with call ids TAG-1, TAG-2, ...,
then answers "answer to TAG". The tool is a loopback peer that counts every call it receives,
so a test sees whether any tool call ran twice. Servers and workers are real subprocesses
(`python -m engine.cli serve|worker`), on a PostgreSQL schema and a RabbitMQ queue of their own.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from tests.peers.http_peer import Connection, PeerServer, Request, Step
from tests.peers.openai_peer import OpenAIPeer

ROOT = Path(__file__).parents[1]
WEBHOOK_ID = "served-chat-1"
API_KEY = "test-api-key-1234"
BROKER = os.environ.get("MINI_N8N_TEST_QUEUE", "amqp://guest:guest@127.0.0.1:5672//")


class ToolPeer(PeerServer):
    """GET /call/<id>: answers {"ok": id} after `delay` seconds, counting each call and when it came."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__(policy=lambda request: Step())
        self.delay = delay
        self.calls: Counter[str] = Counter()
        self.times: dict[str, list[tuple[float, float]]] = {}  # call id -> (received, answered) per call
        self._count_lock = threading.Lock()

    def respond(self, conn: Connection, request: Request, step: Step) -> bool:
        received = time.time()
        call = request.path.split("?")[0].rsplit("/", 1)[-1]
        with self._count_lock:
            self.calls[call] += 1
        if self.delay:
            time.sleep(self.delay)
        conn.whole(200, "application/json", self.json_bytes({"ok": call}))
        with self._count_lock:
            self.times.setdefault(call, []).append((received, time.time()))
        return True


def model_policy(rounds: int) -> Any:
    """Tool calls TAG-1..TAG-rounds for the chat message TAG, then the answer."""

    def policy(request: Request) -> Step:
        body = request.json
        messages = body.get("messages", [])
        tag = next(m["content"] for m in reversed(messages) if m.get("role") == "user")
        done = sum(1 for m in messages if m.get("role") == "tool")
        if done < rounds:
            name = body["tools"][0]["function"]["name"]
            return Step(tool_calls=[{"id": f"call_{done + 1}", "name": name, "arguments": {"call": f"{tag}-{done + 1}"}}],
                        usage=(20, 5))
        return Step(text=f"answer to {tag}", usage=(30, 3))

    return policy


def chat_workflow(model_url: str, tool_url: str, rounds: int, memory: bool = False) -> dict[str, Any]:
    """Chat Trigger (webhookId WEBHOOK_ID) -> AI Agent with an OpenAI Chat Model and an HTTP Request
    Tool; with `memory`, Simple Memory too, which the trigger's loadPreviousSession reads."""
    def node(name: str, type_: str, version: float, x: int, parameters: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {"id": f"id-{name}", "name": name, "type": type_, "typeVersion": version, "position": [x, 0],
                "parameters": parameters, **extra}

    doc = {
        "name": "served agent",
        "nodes": [
            node("Chat", "@n8n/n8n-nodes-langchain.chatTrigger", 1.1, 0, {"public": True, "mode": "webhook", "options": {}},
                 webhookId=WEBHOOK_ID),
            node("AI Agent", "@n8n/n8n-nodes-langchain.agent", 1.7, 200,
                 {"promptType": "auto", "options": {"maxIterations": rounds + 2}}),
            node("Model", "@n8n/n8n-nodes-langchain.lmChatOpenAi", 1.2, 200,
                 {"model": {"__rl": True, "value": "peer-model", "mode": "list"}, "options": {"baseURL": model_url}}),
            node("Lookup", "@n8n/n8n-nodes-langchain.toolHttpRequest", 1.1, 400,
                 {"toolDescription": "Look a call up", "url": tool_url + "/call/{call}",
                  "placeholderDefinitions": {"values": [{"name": "call", "description": "the call id", "type": "string"}]}}),
        ],
        "connections": {
            "Chat": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
            "Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
            "Lookup": {"ai_tool": [[{"node": "AI Agent", "type": "ai_tool", "index": 0}]]},
        },
    }
    if memory:
        doc["nodes"][0]["parameters"]["options"] = {"loadPreviousSession": "memory"}
        doc["nodes"].append(node("Memory", "@n8n/n8n-nodes-langchain.memoryBufferWindow", 1.3, 300, {"contextWindowLength": 10}))
        doc["connections"]["Memory"] = {"ai_memory": [[{"node": "AI Agent", "type": "ai_memory", "index": 0}]]}
    return doc


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def delete_queue(name: str, url: str = BROKER) -> None:
    from kombu import Connection as Broker

    with Broker(url, connect_timeout=5) as broker:
        channel = broker.channel()
        try:
            channel.queue_delete(name)
        except Exception:  # never declared: nothing to delete
            pass


class Cluster:
    """serve (and in queue mode N workers) as subprocesses, on one store, queue and pair of peers."""

    def __init__(self, tmp: Path, store_url: str, *, workers: int = 3, mode: str = "queue", rounds: int = 3,
                 token_delay: float = 0.0, tool_delay: float = 0.0, workflow: dict[str, Any] | None = None,
                 memory: bool = False, workflows: list[dict[str, Any]] | None = None, broker: str = BROKER) -> None:
        self.tmp = tmp
        self.rounds = rounds
        self.stack = ExitStack()
        self.model = self.stack.enter_context(OpenAIPeer(policy=model_policy(rounds), token_delay=token_delay))
        self.tool = self.stack.enter_context(ToolPeer(tool_delay))
        self.queue = f"mini-n8n-test-{uuid.uuid4().hex[:10]}"
        self.workflow = tmp / "served.json"
        if workflows:  # several workflows: a folder of them is served
            self.workflow = tmp / "served"
            self.workflow.mkdir()
            for i, doc in enumerate(workflows):
                (self.workflow / f"{i:02d}.json").write_text(json.dumps(doc))
        else:
            self.workflow.write_text(json.dumps(workflow or chat_workflow(self.model.base_url, self.tool.url, rounds, memory)))
        self.broker = broker
        self.env = {**os.environ, "MINI_N8N_DB": store_url, "MINI_N8N_QUEUE": broker, "MINI_N8N_QUEUE_NAME": self.queue,
                    "MINI_N8N_API_KEY": API_KEY, "OPENAI_API_KEY": "sk-test", "PYTHONPATH": str(ROOT)}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.mode = mode
        self.workers: list[subprocess.Popen[bytes]] = []
        self.server: subprocess.Popen[bytes] | None = None
        self.logs: list[Path] = []
        try:
            for _ in range(workers if mode == "queue" else 0):
                self.start_worker()
            self.start_server()
        except BaseException:
            self.close()
            raise

    def _spawn(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = self.tmp / f"{name}-{len(self.logs)}.log"
        self.logs.append(log)
        with open(log, "wb") as out:
            return subprocess.Popen([sys.executable, "-m", "engine.cli", *args], cwd=ROOT, env=self.env, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)

    def start_worker(self, concurrency: int = 1) -> subprocess.Popen[bytes]:
        worker = self._spawn("worker", "worker", "--concurrency", str(concurrency))
        self.workers.append(worker)
        return worker

    def start_server(self) -> None:
        self.server = self._spawn("serve", "serve", "--mode", self.mode, "--port", str(self.port), str(self.workflow))
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"serve did not start: {self.log_text()}")
            time.sleep(0.1)

    def wait_workers_ready(self, timeout: float = 60) -> None:
        """Until every worker says it is ready (consuming)."""
        deadline = time.monotonic() + timeout
        while sum(log.read_text(errors="replace").count(" ready.") for log in self.logs if log.name.startswith("worker")) \
                < len(self.workers):
            if time.monotonic() > deadline:
                raise RuntimeError(f"workers did not start: {self.log_text()}")
            time.sleep(0.1)

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        """SIGKILL the process and its pool children (its own process group)."""
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(10)

    def log_text(self) -> str:
        return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}" for log in self.logs if log.exists())

    def close(self) -> None:
        for process in [*self.workers, *([self.server] if self.server else [])]:
            if process.poll() is None:
                self.kill(process)
        self.stack.close()
        if self.mode == "queue":
            delete_queue(self.queue, self.broker)

    def chat(self, client: httpx.Client, tag: str, session: str | None = None) -> httpx.Response:
        body = {"action": "sendMessage", "sessionId": session or f"session-{tag}", "chatInput": tag}
        return client.post(f"{self.url}/webhook/{WEBHOOK_ID}/chat", json=body, timeout=300)
