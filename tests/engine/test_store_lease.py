"""One owner per execution: resuming claims it in the store; a second resume is refused clearly."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.errors import MiniN8nError
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.store import ExecutionBusy, ExecutionStore
from engine.workflow import save_workflow
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call

ROOT = Path(__file__).parents[2]
ANSWER = " ".join(["word"] * 60)  # streamed at 20 ms a token: the resumed run lasts over a second
LONG_ANSWER = " ".join(["word"] * 400)  # about 8 s: a second process starts well within it


def replies(answer: str) -> list[dict]:
    return [
        {"toolCalls": [tool_call("Calculator", {"input": "17 * 25"}, "c1")]},
        {"toolCalls": [tool_call("Calculator", {"input": "425 + 75"}, "c2")]},
        {"text": answer},
    ]


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "engine.cli", *args]


def field(output: str, name: str) -> str:
    return next(line.split(": ", 1)[1] for line in output.splitlines() if line.startswith(f"{name}: "))


def paused_execution(tmp_path: Path, answer: str) -> str:
    path = tmp_path / "wf.json"
    save_workflow(agent_workflow(replies(answer), model_options={"tokenDelayMs": 20}), path)
    paused = subprocess.run(cli("run", str(path), "--message", "go", "--break", "before_tool:Calculator", "--break",
                                "from-iteration:2"), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert paused.returncode == 3, paused.stdout + paused.stderr
    return field(paused.stdout, "execution")


def test_a_second_resume_while_the_first_runs_is_refused_naming_the_process(tmp_path: Path) -> None:
    execution_id = paused_execution(tmp_path, LONG_ANSWER)
    first = subprocess.Popen(cli("resume", execution_id), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with sqlite3.connect(os.environ["MINI_N8N_DB"]) as db:  # wait until the first one holds it and runs
            deadline = time.monotonic() + 60
            while db.execute("SELECT status, owner_pid FROM executions WHERE id=?", (execution_id,)).fetchone() != ("running", first.pid):
                assert time.monotonic() < deadline and first.poll() is None, "the first resume never started running"
                time.sleep(0.02)
        second = subprocess.run(cli("resume", execution_id), cwd=ROOT, capture_output=True, text=True, timeout=60)
        out, err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert second.returncode == 2
    assert second.stderr.strip() == f"mini-n8n: error: execution {execution_id} is already running in process {first.pid}"
    assert first.returncode == 0, out + err
    assert field(out, "answer") == LONG_ANSWER
    final = ExecutionStore().load(execution_id)
    assert final.status == "success" and len(final.run_data["Calculator"]) == 2


def test_resumes_started_together_run_the_execution_once(tmp_path: Path) -> None:
    execution_id = paused_execution(tmp_path, ANSWER)
    racers = [subprocess.Popen(cli("resume", execution_id), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for _ in range(4)]
    results = [(p.pid, p.wait(120), *p.communicate()) for p in racers]
    winners = [r for r in results if r[1] == 0]
    assert len(winners) == 1, results
    winner = winners[0][0]
    for pid, code, out, err in results:
        assert "Traceback" not in err and "IntegrityError" not in err, err
        if pid != winner:  # refused while the winner ran, or after it had finished
            assert code == 2, out + err
            assert err.strip() in (f"mini-n8n: error: execution {execution_id} is already running in process {winner}",
                                   f'mini-n8n: error: execution "{execution_id}" is success; only paused or crashed executions resume')
    assert field(winners[0][2], "answer") == ANSWER
    final = ExecutionStore().load(execution_id)
    assert final.status == "success" and final.result == [{"json": {"output": ANSWER}, "pairedItem": {"item": 0}}]
    assert len(final.run_data["Calculator"]) == 2 and len(final.run_data["Model"]) == 3


async def test_a_lease_of_a_dead_or_recycled_process_is_taken_over(tmp_path: Path) -> None:
    store = ExecutionStore(tmp_path / "x.sqlite")
    execution = Engine(builtin_registry(), store=store).create(agent_workflow(replies("ok")[:1] + [{"text": "ok"}]), items=[chat_item("go", "s")])
    state = await execution.run(pause=lambda b: b.kind == "tool")
    assert state.status == "paused"
    other = ExecutionStore(tmp_path / "x.sqlite")
    # this process under another start time: the pid was recycled, the owner is gone
    store.connection.execute("UPDATE executions SET owner_pid=?, owner_start=1 WHERE id=?", (os.getpid(), state.id))
    resumed = await Engine(builtin_registry(), store=other).resume(state.id).run()
    assert resumed.status == "success" and resumed.result == [{"json": {"output": "ok"}, "pairedItem": {"item": 0}}]
    row = other.connection.execute("SELECT owner_pid FROM executions WHERE id=?", (state.id,)).fetchone()
    assert row == (None,)  # an ended execution has no owner


def test_a_live_owner_keeps_its_execution(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    ExecutionStore(path).close()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with sqlite3.connect(path) as db:
            db.execute("INSERT INTO workflows VALUES ('w', '{}', 0)")
            db.execute("INSERT INTO executions (id, workflow_name, workflow_hash, mode, status, started_at, owner_pid, updated_at)"
                       " VALUES ('x1', 'w', 'w', 'cli', 'paused', 0, ?, 0)", (sleeper.pid,))
        store = ExecutionStore(path)
        with pytest.raises(ExecutionBusy, match=f"execution x1 is already running in process {sleeper.pid}"):
            store.prepare_resume("x1")
        with pytest.raises(MiniN8nError, match="already running"):
            store.delete("x1")
    finally:
        sleeper.kill()
        sleeper.wait()
    assert ExecutionStore(path).delete("x1")  # its owner is gone now
