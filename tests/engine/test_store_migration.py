"""A store written by an earlier layout (version 1, version 2) is migrated when opened, and its
executions read and resume as before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine.errors import MiniN8nError
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.store import SCHEMA_VERSION, ExecutionStore

FIXTURE = Path(__file__).parents[1] / "fixtures" / "store-v1.sql"
FINISHED, PAUSED = "40899436c4e7", "eacb1574b121"


def v1_store(path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.executescript(FIXTURE.read_text())
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    return path


async def test_a_version_1_store_is_migrated_and_its_executions_read_and_resume(tmp_path: Path) -> None:
    path = v1_store(tmp_path / "old.sqlite")
    with sqlite3.connect(path) as db:
        old_runs = db.execute("SELECT execution_id, seq, node, task FROM runs ORDER BY execution_id, seq").fetchall()
    store = ExecutionStore(path)
    assert store.connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    tables = {r[0] for r in store.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"workflows", "executions", "runs", "run_batches", "boundaries", "memory"}
    assert store.connection.execute("SELECT COUNT(*) FROM workflows").fetchone()[0] == 2  # one per distinct workflow

    listed = {row.id: row.status for row in store.list()}
    assert listed == {FINISHED: "success", PAUSED: "paused"}
    finished = store.load(FINISHED)
    assert finished.result == [{"json": {"output": "503"}}]
    assert len(finished.run_data["Calculator"]) == 5 and len(finished.run_data["Model"]) == 6
    assert [(e.node, e.run_index) for e in store.events(FINISHED)][:3] == [("Chat", 0), ("Memory", 0), ("Model", 0)]
    # every run reads back as the old layout stored it (deltas included)
    assert len(list(store.runs(FINISHED))) + len(list(store.runs(PAUSED))) == len(old_runs)

    paused = store.load(PAUSED, for_resume=True)
    assert paused.pause is None and paused.stack[-1].node in ("AI Agent", "Calculator")
    resumed = await Engine(builtin_registry(), store=store).resume(PAUSED).run()
    assert resumed.status == "success" and resumed.result == [{"json": {"output": "503"}, "pairedItem": {"item": 0}}]
    assert len(store.load(PAUSED).run_data["Calculator"]) == 5
    store.close()
    reopened = ExecutionStore(path)  # migrated once; opens as a current store
    assert {row.id: row.status for row in reopened.list()} == {FINISHED: "success", PAUSED: "success"}


def test_a_store_of_a_newer_layout_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    ExecutionStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version=4")
    before = path.read_bytes()
    with pytest.raises(MiniN8nError, match="has layout version 4, .* a newer mini-n8n wrote it; move the file away"):
        ExecutionStore(path)
    assert path.read_bytes() == before


def as_version_2(path: Path) -> None:
    from engine.store.journal import decode_records

    """A store turned into layout 2 as that layout wrote it: every run a row of the runs table."""
    with sqlite3.connect(path) as db:
        for execution_id, blob in db.execute("SELECT execution_id, runs FROM run_batches").fetchall():
            for row in decode_records(execution_id, bytes(blob)).runs:
                db.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?)", row)
        db.execute("DROP TABLE run_batches")
        db.execute("PRAGMA user_version=2")


async def test_a_version_2_store_is_migrated_and_its_executions_read_and_resume(tmp_path: Path) -> None:
    """Layout 2 kept every run in a row of its own; layout 3 folds a run's runs into batch rows
    beside them. Opened, a layout 2 store gains the batch table, reads its runs as before, and
    an execution resumed there adds batches after its single rows."""
    from engine.debugger import Breakpoints
    from nodes.triggers.chat_trigger import chat_item
    from tests.builders import agent_workflow, tool_call
    from tests.engine.pausing import run_to_pause

    path = tmp_path / "v2.sqlite"
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} * 2"})]} for i in range(4)] + [{"text": "done"}]
    store = ExecutionStore(path)
    finished = await Engine(builtin_registry(), store=store).run(agent_workflow(replies), items=[chat_item("go", "s")])
    paused = await run_to_pause(Engine(builtin_registry(), store=store).create(agent_workflow(replies), items=[chat_item("go", "s")]),
                                Breakpoints(after_tool_result=True))
    assert paused.status == "paused"
    expected = {eid: [t.to_json() for runs in store.load(eid).run_data.values() for t in runs] for eid in (finished.id, paused.id)}
    store.close()
    as_version_2(path)

    store = ExecutionStore(path)
    assert store.connection.execute("PRAGMA user_version").fetchone()[0] == 3
    assert store.connection.execute("SELECT COUNT(*) FROM run_batches").fetchone()[0] == 0
    for eid, runs in expected.items():
        assert [t.to_json() for runs_of in store.load(eid).run_data.values() for t in runs_of] == runs
    resumed = await Engine(builtin_registry(), store=store).resume(paused.id).run()
    assert resumed.status == "success"
    assert len(store.load(paused.id).run_data["Calculator"]) == 4
    assert store.connection.execute("SELECT COUNT(*) FROM run_batches WHERE execution_id=?", (paused.id,)).fetchone()[0] >= 1
    store.close()
