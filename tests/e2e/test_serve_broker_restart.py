"""The broker restarted under load: `mini-n8n serve --mode queue` with two workers on a RabbitMQ
node of the test's own (started from the machine's rabbitmq-server, so the shared broker of other
tests is never touched), stopped and started again while chats run. Every execution the server
accepted completes once (each tool call ran once), each client gets its answer or a clear error
(a 503 saying the job queue is unavailable, for a message sent while the broker was down), and
chats after the restart are answered."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from engine.store import open_store
from tests.serve_harness import Cluster, free_port
from tests.store_backends import pg_schema_or_skip

ROUNDS = 3
CHATS = 12


class PrivateBroker:
    """A RabbitMQ node of its own: its port, node name, data and log folders under `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.node = f"minitest{self.port}@localhost"
        self.url = f"amqp://guest:guest@127.0.0.1:{self.port}//"
        (folder / "rabbitmq.conf").write_text(f"listeners.tcp.default = 127.0.0.1:{self.port}\n")
        (folder / "enabled_plugins").write_text("[].\n")
        for name in ("mnesia", "log"):
            (folder / name).mkdir(exist_ok=True)
        if os.geteuid() == 0:  # rabbitmq-server drops to the rabbitmq user when started by root
            shutil.chown(folder, "rabbitmq", "rabbitmq")
            for path in folder.rglob("*"):
                shutil.chown(path, "rabbitmq", "rabbitmq")
        self.env = {**os.environ, "RABBITMQ_CONFIG_FILE": str(folder / "rabbitmq.conf"), "RABBITMQ_NODENAME": self.node,
                    "RABBITMQ_DIST_PORT": str(free_port()), "RABBITMQ_MNESIA_BASE": str(folder / "mnesia"),
                    "RABBITMQ_LOG_BASE": str(folder / "log"), "RABBITMQ_ENABLED_PLUGINS_FILE": str(folder / "enabled_plugins"),
                    "RABBITMQ_FEATURE_FLAGS_FILE": str(folder / "feature_flags"),
                    "RABBITMQ_PLUGINS_EXPAND_DIR": str(folder / "plugins-expand"), "RABBITMQ_PID_FILE": str(folder / "pid")}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120) -> None:
        with open(self.folder / "server.out", "ab") as out:
            self.process = subprocess.Popen(["rabbitmq-server"], env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        deadline = time.monotonic() + timeout
        while not self._accepts():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"rabbitmq-server did not start: {(self.folder / 'server.out').read_text()[-1500:]}")
            time.sleep(0.2)

    def _accepts(self) -> bool:
        from kombu import Connection

        try:
            with Connection(self.url, connect_timeout=2) as conn:
                conn.ensure_connection(max_retries=1)
            return True
        except Exception:
            return False

    def stop(self) -> None:
        subprocess.run(["rabbitmqctl", "-n", self.node, "stop"], env=self.env, capture_output=True, timeout=120)
        if self.process is not None:
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait(10)
        while self._port_open():
            time.sleep(0.1)

    def _port_open(self) -> bool:
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", self.port)) == 0


@pytest.fixture
def broker() -> Iterator[PrivateBroker]:
    if shutil.which("rabbitmq-server") is None or shutil.which("rabbitmqctl") is None:
        pytest.skip("rabbitmq-server is not installed")
    # a folder the rabbitmq user can reach (pytest's own are its owner's only)
    node = PrivateBroker(Path(tempfile.mkdtemp(prefix="mini-n8n-rabbitmq-")))
    try:
        node.start()
        yield node
    finally:
        node.stop()
        shutil.rmtree(node.folder, ignore_errors=True)


def test_a_broker_restarted_under_load_loses_no_accepted_execution(tmp_path: Path, broker: PrivateBroker) -> None:
    schema = pg_schema_or_skip()
    cluster = Cluster(tmp_path, schema.url, workers=2, rounds=ROUNDS, token_delay=0.02, broker=broker.url)
    try:
        cluster.wait_workers_ready()
        tags = [f"b{i}" for i in range(CHATS)]

        def chat_or_error(client: httpx.Client, tag: str) -> object:
            time.sleep(0.15 * tags.index(tag))  # spread over the restart: some before, some during, some after
            try:
                return cluster.chat(client, tag)
            except httpx.TransportError as exc:
                return exc

        with httpx.Client() as client, ThreadPoolExecutor(CHATS) as pool:
            outcomes_iter = pool.map(lambda tag: chat_or_error(client, tag), tags)
            while sum(cluster.tool.calls.values()) < 2:
                time.sleep(0.01)
            broker.stop()
            stopped_at = time.time()
            time.sleep(1.0)
            broker.start()
            print(f"broker down for {time.time() - stopped_at:.1f} s")
            outcomes = list(outcomes_iter)

        answered, refused = [], []
        for tag, outcome in zip(tags, outcomes):
            assert isinstance(outcome, httpx.Response), (tag, outcome, cluster.log_text())
            if outcome.status_code == 200:
                assert outcome.json() == {"output": f"answer to {tag}"}
                answered.append(tag)
            else:  # sent while the broker was down: said so, nothing queued
                assert outcome.status_code == 503, (tag, outcome.text)
                assert outcome.json()["message"].startswith("the job queue is unavailable"), outcome.text
                refused.append(tag)
        print(f"answered {len(answered)}, refused while the broker was down: {len(refused)}")
        assert answered, cluster.log_text()

        store = open_store(schema.url)
        deadline = time.monotonic() + 180
        while {row.status for row in store.list()} - {"success"}:
            assert time.monotonic() < deadline, [(r.id, r.status) for r in store.list()]
            time.sleep(0.2)
        ran = []
        for row in store.list():
            state = store.load(row.id)
            tag = state.run_data["Chat"][0].to_json()["data"]["main"][0][0]["json"]["chatInput"]
            ran.append(tag)
            assert state.result == [{"json": {"output": f"answer to {tag}"}, "pairedItem": {"item": 0}}]
        store.close()
        assert sorted(ran) == sorted(answered)  # every accepted execution completed; none of the refused ran
        assert set(cluster.tool.calls) == {f"{tag}-{i}" for tag in answered for i in range(1, ROUNDS + 1)}
        assert {call: n for call, n in cluster.tool.calls.items() if n != 1} == {}

        with httpx.Client() as client:  # the restarted broker takes new chats
            assert cluster.chat(client, "after").json() == {"output": "answer to after"}
    finally:
        cluster.close()
        schema.drop()
