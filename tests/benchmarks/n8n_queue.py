"""Real n8n in queue mode as the peer of `mini-n8n serve --mode queue`: the same chat workflow
(tests/serve_harness.py) on the same PostgreSQL (a schema of its own), Redis (Bull, a key prefix
of its own) and peers, with `n8n start` as the main process and `n8n worker`s, as n8n's queue-mode
documentation sets it up (recipe in ../shared/n8n-reference.md)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from tests.benchmarks.n8n_live import n8n_binary
from tests.serve_harness import WEBHOOK_ID, free_port
from tests.store_backends import PgSchema

WORKFLOW_ID = "serveBench000001"
CREDENTIAL_ID = "servecred000001"


def n8n_workflow(doc: dict[str, Any]) -> dict[str, Any]:
    """The served workflow as n8n imports it: an id, and the model's key as a credential."""
    doc = json.loads(json.dumps(doc))
    doc.update({"id": WORKFLOW_ID, "active": False, "settings": {"executionOrder": "v1"}})
    for node in doc["nodes"]:
        if node["type"].endswith("lmChatOpenAi"):
            node["credentials"] = {"openAiApi": {"id": CREDENTIAL_ID, "name": "Peer"}}
    return doc


class N8nQueue:
    """n8n's main process and `workers` workers in queue mode, serving the workflow's chat webhook."""

    def __init__(self, workflow: dict[str, Any], model_url: str, workers: int) -> None:
        binary = n8n_binary()
        if binary is None:
            raise RuntimeError("n8n is not installed")
        self.binary = binary
        self.home = Path(tempfile.mkdtemp(prefix="n8n-queue-"))
        self.schema = PgSchema()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.processes: list[subprocess.Popen[bytes]] = []
        self.env = dict(
            os.environ, N8N_USER_FOLDER=str(self.home), N8N_DIAGNOSTICS_ENABLED="false",
            N8N_VERSION_NOTIFICATIONS_ENABLED="false", N8N_TEMPLATES_ENABLED="false", N8N_RUNNERS_ENABLED="false",
            N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS="false", N8N_EXPRESSION_ENGINE="legacy",
            N8N_ENCRYPTION_KEY="mini-n8n-bench-key", N8N_PORT=str(self.port), N8N_LISTEN_ADDRESS="127.0.0.1",
            EXECUTIONS_MODE="queue", QUEUE_BULL_REDIS_HOST="127.0.0.1", QUEUE_BULL_REDIS_PORT="6379",
            QUEUE_BULL_PREFIX=f"bench{uuid.uuid4().hex[:8]}", DB_TYPE="postgresdb", DB_POSTGRESDB_HOST="127.0.0.1",
            DB_POSTGRESDB_PORT="5432", DB_POSTGRESDB_DATABASE="test", DB_POSTGRESDB_USER="root",
            DB_POSTGRESDB_SCHEMA=self.schema.name, N8N_LOG_LEVEL="info", QUEUE_HEALTH_CHECK_ACTIVE="false",
            OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS="true",
        )
        try:
            credentials = [{"id": CREDENTIAL_ID, "name": "Peer", "type": "openAiApi",
                            "data": {"apiKey": "sk-bench", "url": model_url}}]
            (self.home / "credentials.json").write_text(json.dumps(credentials))
            (self.home / "workflow.json").write_text(json.dumps(n8n_workflow(workflow)))
            self._n8n("import:credentials", f"--input={self.home / 'credentials.json'}")
            self._n8n("import:workflow", f"--input={self.home / 'workflow.json'}")
            self._n8n("update:workflow", f"--id={WORKFLOW_ID}", "--active=true")
            self._spawn("main", "start")
            self._wait_ready()
            for i in range(workers):
                self._spawn(f"worker{i}", "worker", "--concurrency=1")
            self._wait_workers(workers)
        except BaseException:
            self.close()
            raise

    def _n8n(self, *args: str) -> None:
        done = subprocess.run([str(self.binary), *args], env=self.env, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"n8n {args[0]} failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-500:]}")

    def _spawn(self, name: str, *args: str) -> None:
        with open(self.home / f"{name}.log", "wb") as out:
            self.processes.append(subprocess.Popen([str(self.binary), *args], env=self.env, stdout=out,
                                                   stderr=subprocess.STDOUT, start_new_session=True))

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                reply = httpx.post(f"{self.url}/webhook/{WEBHOOK_ID}/chat", timeout=2,
                                   json={"action": "loadPreviousSession", "sessionId": "ready"})
                if reply.status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.processes[0].poll() is not None:
                break
            time.sleep(0.5)
        raise RuntimeError(f"n8n did not start: {(self.home / 'main.log').read_text(errors='replace')[-1500:]}")

    def _wait_workers(self, workers: int) -> None:
        """Until each worker logs that it is ready; a worker that exits is an error naming its log."""
        deadline = time.monotonic() + 300
        for i, process in enumerate(self.processes[1:1 + workers]):
            log = self.home / f"worker{i}.log"
            while "n8n worker is now ready" not in log.read_text(errors="replace"):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"n8n worker {i} did not start ({process.poll()}): "
                                       f"{log.read_text(errors='replace')[-1500:]}")
                time.sleep(0.2)

    def chat(self, client: httpx.Client, tag: str) -> httpx.Response:
        body = {"action": "sendMessage", "sessionId": f"session-{tag}", "chatInput": tag}
        return client.post(f"{self.url}/webhook/{WEBHOOK_ID}/chat", json=body, timeout=120)

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        self.schema.drop()
        self._drop_bull_keys()
        shutil.rmtree(self.home, ignore_errors=True)

    def _drop_bull_keys(self) -> None:
        """n8n's Bull queue keys, all under this run's prefix."""
        import redis

        client = redis.Redis(host="127.0.0.1", port=6379)
        keys = list(client.scan_iter(match=f"{self.env['QUEUE_BULL_PREFIX']}:*"))
        if keys:
            client.delete(*keys)
        client.close()
