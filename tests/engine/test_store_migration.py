"""A store written by the previous layout (version 1) is migrated when opened, and its executions
read and resume as before."""

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
    assert store.connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    tables = {r[0] for r in store.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"workflows", "executions", "runs", "boundaries", "memory"}
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
        db.execute("PRAGMA user_version=3")
    before = path.read_bytes()
    with pytest.raises(MiniN8nError, match="has layout version 3, .* a newer mini-n8n wrote it; move the file away"):
        ExecutionStore(path)
    assert path.read_bytes() == before
