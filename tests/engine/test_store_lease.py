"""One owner per execution: resuming claims it in the store; a second resume is refused clearly.
On both back ends: SQLite (the owner's pid and start time), PostgreSQL (an advisory lock held by
the owner's connection)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engine.errors import MiniN8nError
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.store import ExecutionBusy, ExecutionStore, open_store
from engine.workflow import save_workflow
from nodes.triggers.chat_trigger import chat_item
from engine.debugger import Breakpoints
from tests.builders import agent_workflow, tool_call
from tests.engine.pausing import hold_at_pause, run_to_pause
from tests.store_backends import is_pg, sql

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


def owner_where(target: str, pid: int) -> str:
    return f"process {pid} on {socket.gethostname()}" if is_pg(target) else f"process {pid}"


def test_a_second_resume_while_the_first_runs_is_refused_naming_the_process(tmp_path: Path, store_target: str) -> None:
    execution_id = paused_execution(tmp_path, LONG_ANSWER)
    first = subprocess.Popen(cli("resume", execution_id), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        watcher = open_store(store_target)  # wait until the first one holds it and runs
        deadline = time.monotonic() + 60
        while sql(watcher, "SELECT status, owner_pid FROM executions WHERE id=?", execution_id) != [("running", first.pid)]:
            assert time.monotonic() < deadline and first.poll() is None, "the first resume never started running"
            time.sleep(0.02)
        watcher.close()
        second = subprocess.run(cli("resume", execution_id), cwd=ROOT, capture_output=True, text=True, timeout=60)
        out, err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert second.returncode == 2
    assert second.stderr.strip() == f"mini-n8n: error: execution {execution_id} is already running in {owner_where(store_target, first.pid)}"
    assert first.returncode == 0, out + err
    assert field(out, "answer") == LONG_ANSWER
    final = open_store(store_target).load(execution_id)
    assert final.status == "success" and len(final.run_data["Calculator"]) == 2


def test_resumes_started_together_run_the_execution_once(tmp_path: Path, store_target: str) -> None:
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
            assert err.strip() in (f"mini-n8n: error: execution {execution_id} is already running in {owner_where(store_target, winner)}",
                                   f'mini-n8n: error: execution "{execution_id}" is success; only paused or crashed executions resume')
    assert field(winners[0][2], "answer") == ANSWER
    final = open_store(store_target).load(execution_id)
    assert final.status == "success" and final.result == [{"json": {"output": ANSWER}, "pairedItem": {"item": 0}}]
    assert len(final.run_data["Calculator"]) == 2 and len(final.run_data["Model"]) == 3


async def test_sqlite_a_lease_of_a_dead_or_recycled_process_is_taken_over(tmp_path: Path) -> None:
    store = ExecutionStore(tmp_path / "x.sqlite")
    execution = Engine(builtin_registry(), store=store).create(agent_workflow(replies("ok")[:1] + [{"text": "ok"}]), items=[chat_item("go", "s")])
    state = await run_to_pause(execution, Breakpoints(before_tool=True))
    assert state.status == "paused"
    other = ExecutionStore(tmp_path / "x.sqlite")
    # this process under another start time: the pid was recycled, the owner is gone
    store.connection.execute("UPDATE executions SET owner_pid=?, owner_start=1 WHERE id=?", (os.getpid(), state.id))
    resumed = await Engine(builtin_registry(), store=other).resume(state.id).run()
    assert resumed.status == "success" and resumed.result == [{"json": {"output": "ok"}, "pairedItem": {"item": 0}}]
    other.flush()  # its end, journaled, folded in
    row = other.connection.execute("SELECT owner_pid FROM executions WHERE id=?", (state.id,)).fetchone()
    assert row == (None,)  # an ended execution has no owner


def test_sqlite_a_live_owner_keeps_its_execution(tmp_path: Path) -> None:
    import sqlite3

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


def test_sqlite_restoring_an_execution_a_live_process_owns_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    store = ExecutionStore(path)
    engine = Engine(builtin_registry(), store=store)
    state = engine.create(agent_workflow(replies("ok")), items=[chat_item("go", "s")]).state
    snapshot = state.to_json()
    store.release(state)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        store.connection.execute("UPDATE executions SET owner_pid=?, owner_start=NULL WHERE id=?", (sleeper.pid, state.id))
        with pytest.raises(ExecutionBusy, match=f"execution {state.id} is already running in process {sleeper.pid}"):
            engine.restore(snapshot)
        row = store.connection.execute("SELECT status, owner_pid FROM executions WHERE id=?", (state.id,)).fetchone()
        assert row == ("new", sleeper.pid)
        assert store.connection.execute("SELECT COUNT(*) FROM boundaries WHERE execution_id=?", (state.id,)).fetchone() == (1,)
    finally:
        sleeper.kill()
        sleeper.wait()
    restored = engine.restore(snapshot)  # its owner is gone: taken over, its boundaries continued
    assert store.connection.execute("SELECT owner_pid FROM executions WHERE id=?", (state.id,)).fetchone() == (os.getpid(),)
    assert store.connection.execute("SELECT MAX(seq) FROM boundaries WHERE execution_id=?", (state.id,)).fetchone() == (2,)
    store.release(restored.state)
    store.close()


def close_and_wait_gone(owner: Any, watcher: Any, timeout_s: float = 10.0) -> None:
    """Close the owner's store and wait (bounded) until its server process has ended: the server
    drops a closed connection's locks a moment after the client has gone."""
    backend = sql(owner, "SELECT pg_backend_pid()")[0][0]
    owner.close()
    deadline = time.monotonic() + timeout_s
    while sql(watcher, "SELECT count(*) FROM pg_stat_activity WHERE pid=?", backend)[0][0]:
        assert time.monotonic() < deadline, f"the owner's server process {backend} is still there after {timeout_s} s"
        time.sleep(0.01)


async def test_postgres_a_lease_ends_with_its_owners_connection(pg_target: str) -> None:
    """A live owner (another open store, as another machine's process would be) keeps its
    execution; once its connection is gone (the process died), anyone takes it over."""
    owner = open_store(pg_target)
    execution = Engine(builtin_registry(), store=owner).create(agent_workflow(replies("ok")[:1] + [{"text": "ok"}]),
                                                               items=[chat_item("go", "s")])
    held = await hold_at_pause(execution, Breakpoints(before_tool=True))  # paused in its owner, not left
    state = execution.state
    assert state.status == "paused"
    other = open_store(pg_target)
    where = f"process {os.getpid()} on {socket.gethostname()}"
    with pytest.raises(ExecutionBusy, match=f"execution {state.id} is already running in {where}"):
        other.prepare_resume(state.id)
    with pytest.raises(MiniN8nError, match="already running"):
        other.delete(state.id)
    assert other.mark_crashed() == []
    close_and_wait_gone(owner, other)
    held.cancel()  # the owner's run is gone with its connection
    resumed = await Engine(builtin_registry(), store=other).resume(state.id).run()
    assert resumed.status == "success" and resumed.result == [{"json": {"output": "ok"}, "pairedItem": {"item": 0}}]
    assert sql(other, "SELECT owner_pid, owner_token FROM executions WHERE id=?", state.id) == [(None, None)]
    assert other.delete(state.id)


async def test_postgres_a_running_execution_whose_owner_is_gone_is_marked_crashed(pg_target: str) -> None:
    owner = open_store(pg_target)
    execution = Engine(builtin_registry(), store=owner).create(agent_workflow(replies("ok")), items=[chat_item("go", "s")])
    state = await run_to_pause(execution, Breakpoints(before_tool=True, from_iteration=2))  # before the second tool
    sql(owner, "UPDATE executions SET status='running' WHERE id=?", state.id)  # as a killed process leaves it
    watcher = open_store(pg_target)
    assert watcher.mark_crashed() == []  # its owner is alive
    close_and_wait_gone(owner, watcher)
    other = open_store(pg_target)  # opening a store marks what dead owners left
    assert other.list()[0].status == "crashed"
    resumed = await Engine(builtin_registry(), store=other).resume(state.id).run()
    assert resumed.status == "success" and len(resumed.run_data["Calculator"]) == 2
