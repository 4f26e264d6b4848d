"""An execution's end is journaled and folded into the database with the ends after it: one
transaction for several runs. This process reads its ends at once; another process within
FOLD_AFTER_S while an event loop runs, at once after `flush`, and when this process exits; a
process killed before the fold leaves the execution as it ended, not crashed."""

from __future__ import annotations

import asyncio
import logging
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import engine.store.sqlite_file as sqlite_file
import engine.store.sqlite_store as sqlite_store
from engine.errors import MiniN8nError
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.store import ExecutionStore, Retention
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call

ROOT = Path(__file__).parents[2]
REPLIES = [{"toolCalls": [tool_call("Calculator", {"input": "2 * 3"})]}, {"text": "six"}]
ANSWER = [{"json": {"output": "six"}, "pairedItem": {"item": 0}}]


def status_in_the_file(path: Path, execution_id: str) -> str | None:
    """The status the database file holds, read as another process reads it."""
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT status FROM executions WHERE id=?", (execution_id,)).fetchone()
    return None if row is None else row[0]


async def run_one(engine: Engine) -> str:
    state = await engine.run(agent_workflow(REPLIES), items=[chat_item("go", "s")])
    assert state.status == "success"
    return state.id


async def test_runs_ending_one_after_another_are_folded_in_one_transaction(tmp_path: Path) -> None:
    store = ExecutionStore(tmp_path / "x.sqlite", retention=Retention())
    statements: list[str] = []
    store.connection.set_trace_callback(statements.append)
    engine = Engine(builtin_registry(), store=store)
    ids = [await run_one(engine) for _ in range(3)]
    assert [s for s in statements if s.startswith("BEGIN")] == []  # their ends wait in their journals
    listed = store.list()  # this process reads what it has written: the ends go in first
    assert [s for s in statements if s.startswith("BEGIN")] == ["BEGIN IMMEDIATE"]
    assert [(row.id, row.status) for row in listed] == [(i, "success") for i in reversed(ids)]
    for execution_id in ids:
        stored = store.load(execution_id)
        assert stored.result == ANSWER and len(stored.run_data["Calculator"]) == 1
    store.connection.set_trace_callback(None)
    store.close()


async def test_an_end_reaches_other_processes_within_fold_after_s_while_the_loop_runs(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    store = ExecutionStore(path, retention=Retention())
    execution_id = await run_one(Engine(builtin_registry(), store=store))
    assert status_in_the_file(path, execution_id) is None  # a new execution: only its journal holds it yet
    started = time.monotonic()
    while status_in_the_file(path, execution_id) != "success":
        assert time.monotonic() - started < 10, "the end was not folded in"
        await asyncio.sleep(0.01)
    assert time.monotonic() - started >= sqlite_store.FOLD_AFTER_S / 2  # by the timer, not at once
    row = sqlite3.connect(path).execute("SELECT owner_pid FROM executions WHERE id=?", (execution_id,)).fetchone()
    assert row == (None,)  # an ended execution has no owner
    store.close()


def test_ends_left_by_a_loop_that_ended_are_folded_by_the_next_loops_timer(tmp_path: Path) -> None:
    """Each `asyncio.run` is a loop of its own: a timer set on one that has ended never fires, so
    the next loop sets its own."""
    path = tmp_path / "x.sqlite"
    store = ExecutionStore(path, retention=Retention())
    engine = Engine(builtin_registry(), store=store)
    first = asyncio.run(run_one(engine))

    async def second_then_wait() -> str:
        execution_id = await run_one(engine)
        started = time.monotonic()
        while status_in_the_file(path, execution_id) != "success":
            assert time.monotonic() - started < 10, "the ends were not folded in"
            await asyncio.sleep(0.01)
        return execution_id

    second = asyncio.run(second_then_wait())
    assert status_in_the_file(path, first) == status_in_the_file(path, second) == "success"
    store.close()


async def test_flush_puts_the_ends_where_other_processes_read_them(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    store = ExecutionStore(path, retention=Retention())
    execution_id = await run_one(Engine(builtin_registry(), store=store))
    assert status_in_the_file(path, execution_id) is None
    store.flush()
    assert status_in_the_file(path, execution_id) == "success"
    store.close()


async def test_ends_fold_once_enough_wait_and_their_journals_are_used_again(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    store = ExecutionStore(path, retention=Retention())
    engine = Engine(builtin_registry(), store=store)
    together = sqlite_store.ENDS_FOLDED_TOGETHER
    ids = [await run_one(engine) for _ in range(together)]
    assert [status_in_the_file(path, i) for i in ids] == ["success"] * together  # folded at the last of them
    journals = {p.stat().st_ino for p in Path(f"{path}-boundaries").iterdir()}
    assert len(journals) == together
    more = [await run_one(engine) for _ in range(together)]
    assert {p.stat().st_ino for p in Path(f"{path}-boundaries").iterdir()} == journals  # the same files, emptied and used again
    assert [status_in_the_file(path, i) for i in more] == ["success"] * together
    store.close()


async def test_a_fold_of_ends_that_fails_is_logged_and_tried_again(tmp_path: Path, monkeypatch, caplog) -> None:
    monkeypatch.setattr(sqlite_file, "BUSY_TIMEOUT_S", 0.05)
    path = tmp_path / "x.sqlite"
    store = ExecutionStore(path, retention=Retention())
    execution_id = await run_one(Engine(builtin_registry(), store=store))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process writes: the store's fold cannot begin
    with caplog.at_level(logging.WARNING, logger="engine.store.ends_waiting"):
        started = time.monotonic()
        while not caplog.records:
            assert time.monotonic() - started < 10, "the fold's failure was not logged"
            await asyncio.sleep(0.01)
    assert f"storing the end of execution {execution_id}" in caplog.records[0].getMessage()
    assert "database is locked" in caplog.records[0].getMessage()
    with pytest.raises(MiniN8nError, match=f"storing the end of execution {execution_id}"):
        store.list()  # a read in this process needs the end in the database first
    other.execute("COMMIT")
    other.close()
    assert store.load(execution_id).status == "success"  # kept in its journal, folded now
    assert status_in_the_file(path, execution_id) == "success"
    store.close()


CHILD = """
import asyncio, os, signal, sys
import engine.store.sqlite_store as sqlite_store
sqlite_store.FOLD_AFTER_S = 10**9  # the end is never folded in: the process dies first
sqlite_store.FOLD_EVERY = int(sys.argv[2])
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.store import ExecutionStore
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call

async def main():
    store = ExecutionStore(sys.argv[1])
    replies = [{"toolCalls": [tool_call("Calculator", {"input": "2 * 3"})]}, {"text": "six"}]
    state = await Engine(builtin_registry(), store=store).run(agent_workflow(replies), items=[chat_item("go", "k")])
    print(state.id, state.status, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


@pytest.mark.parametrize("fold_every", [10**9, 2], ids=["only-in-its-journal", "its-row-says-running"])
def test_a_process_killed_before_its_end_was_folded_leaves_the_execution_ended_not_crashed(tmp_path: Path, fold_every: int) -> None:
    path = tmp_path / "x.sqlite"
    child = subprocess.run([sys.executable, "-c", CHILD, str(path), str(fold_every)], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr
    execution_id, status = child.stdout.split()
    assert status == "success"
    assert status_in_the_file(path, execution_id) == (None if fold_every > 100 else "running")
    store = ExecutionStore(path, retention=Retention())  # opening it takes in what the dead process left
    assert [(row.id, row.status) for row in store.list()] == [(execution_id, "success")]
    stored = store.load(execution_id)
    assert stored.result == ANSWER and stored.stopped_at is not None
    assert {name: len(runs) for name, runs in stored.run_data.items()} == {"Chat": 1, "AI Agent": 1, "Model": 2, "Calculator": 1}
    assert list(Path(f"{path}-boundaries").iterdir()) == []
    with pytest.raises(MiniN8nError, match="is success; only paused or crashed executions resume"):
        store.prepare_resume(execution_id)
    store.close()


EXITS = """
import asyncio, sys
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.store import ExecutionStore
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call

async def main():
    store = ExecutionStore(sys.argv[1])  # never closed
    replies = [{"toolCalls": [tool_call("Calculator", {"input": "2 * 3"})]}, {"text": "six"}]
    state = await Engine(builtin_registry(), store=store).run(agent_workflow(replies), items=[chat_item("go", "x")])
    print(state.id, state.status, flush=True)

asyncio.run(main())  # its loop ends before the fold's timer is due
"""


def test_ends_still_waiting_when_the_process_exits_go_into_the_database(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    child = subprocess.run([sys.executable, "-c", EXITS, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    execution_id, status = child.stdout.split()
    assert status == "success"
    with sqlite3.connect(path) as db:  # as another process reads the file, before any store recovers journals
        assert db.execute("SELECT status, owner_pid FROM executions WHERE id=?", (execution_id,)).fetchall() == [("success", None)]
        assert db.execute("SELECT COUNT(*) FROM runs WHERE execution_id=?", (execution_id,)).fetchone()[0] + \
            db.execute("SELECT COUNT(*) FROM run_batches WHERE execution_id=?", (execution_id,)).fetchone()[0] > 0
