"""A damaged store file: a clear error naming the file, and never a write to it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.errors import MiniN8nError
from engine.executor import Engine
from engine.json_delta import MARK
from engine.registry import builtin_registry
from engine.store import ExecutionStore, StoreDamaged, sqlite_rows
from engine.store.codec import pack
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call

ROOT = Path(__file__).parents[2]
REPLIES = [
    {"toolCalls": [tool_call("Calculator", {"input": "17 * 25"}, "c1")]},
    {"text": "It is 425."},
]


async def stored_runs(path: Path, count: int = 30) -> list[str]:
    store = ExecutionStore(path)
    ids = []
    for i in range(count):
        state = await Engine(builtin_registry(), store=store).run(agent_workflow(REPLIES), items=[chat_item(f"go {i}", "s")])
        ids.append(state.id)
    store.close()  # the last connection folds the WAL into the file
    assert not Path(f"{path}-wal").exists()
    return ids


def mini_n8n(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def damage_pages(path: Path) -> None:
    """Scribble over a few whole pages in the middle of the file (the b-tree pages of the data)."""
    data = bytearray(path.read_bytes())
    page = 4096
    for n in (2, 3, len(data) // page // 2):
        data[n * page: n * page + page] = bytes((n * 37 + i * 11) % 256 for i in range(page))
    path.write_bytes(bytes(data))


async def test_damaged_pages_give_a_clear_error_and_the_file_is_not_written(tmp_path: Path) -> None:
    path = Path(os.environ["MINI_N8N_DB"])
    await stored_runs(path)
    damage_pages(path)
    before = path.read_bytes()
    with pytest.raises(StoreDamaged, match=f"the execution store {path} is damaged .*it was not changed"):
        ExecutionStore(path)
    for args in (["executions", "list"], ["executions", "show", "x"], ["run", str(ROOT / "resources/examples/scripted-calculator-agent.json"),
                                                                           "--message", "hi"]):
        result = mini_n8n(*args)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "Traceback" not in result.stderr
        assert f"the execution store {path} is damaged" in result.stderr
    assert path.read_bytes() == before
    wal = Path(f"{path}-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # nothing was written for it either


def test_a_file_that_is_not_a_store_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    path.write_bytes(b"SQLite format 2\x00" + bytes(5000))
    with pytest.raises(StoreDamaged, match="does not start with an SQLite header"):
        ExecutionStore(path)
    assert path.read_bytes() == b"SQLite format 2\x00" + bytes(5000)


async def test_a_flipped_byte_in_a_stored_run_is_reported_not_decoded(tmp_path: Path) -> None:
    path = Path(os.environ["MINI_N8N_DB"])
    ids = await stored_runs(path, count=1)
    data = path.read_bytes()
    marker = b'"response":"425"'
    assert marker in data
    path.write_bytes(data.replace(marker, b'"response":"426"'))  # still valid JSON: only a checksum sees it
    shown = mini_n8n("executions", "show", ids[0])
    assert shown.returncode == 2
    assert "Traceback" not in shown.stderr
    # the runs were folded as one batch row: the message names the batch's runs
    assert f"runs 1 to 5 of execution {ids[0]} in {path} fail their checksum: the file is damaged" in shown.stderr
    garbled = path.read_bytes().replace(b'"response":"426"', b'"response":"4\xff5"')
    path.write_bytes(garbled)
    with pytest.raises(StoreDamaged, match="fail their checksum"):
        ExecutionStore(path).load(ids[0])


async def test_rows_a_newer_mini_n8n_wrote_are_named_not_read_as_data(tmp_path: Path) -> None:
    """A run or boundary holding a delta or reference of a kind this code does not write is
    refused with an error that names the row and says a newer mini-n8n wrote it; a delta that
    does not fit the row it extends is damage. Neither is read as data."""
    path = Path(os.environ["MINI_N8N_DB"])
    (eid,) = await stored_runs(path, count=1)
    db = sqlite3.connect(path)
    model_run = next(row for row in sqlite_rows.stored_runs(db, eid) if row[1] == "Model" and row[3] is not None)
    seq, base = model_run[0], model_run[3]
    boundary_seq = db.execute("SELECT MAX(seq) FROM boundaries WHERE execution_id=?", (eid,)).fetchone()[0]
    db.close()

    def stored(statement: str, *row: Any) -> None:
        with sqlite3.connect(path) as db:
            db.execute(statement, row)
        db.close()

    def run_delta(value: Any) -> None:
        stored(sqlite_rows.INSERT_RUNS, eid, seq, "Model", model_run[2], base, *pack(value))

    def boundary(value: Any, seq: int, base: int | None) -> None:
        stored(sqlite_rows.INSERT_BOUNDARIES, eid, seq, 0, "AI Agent", base, *pack(value))

    newer = "a newer mini-n8n wrote it, and this one cannot read it"
    run_delta({"input": {MARK: "later", "x": 1}})
    with pytest.raises(MiniN8nError, match=f"run {seq} \\(Model\\) of execution {eid} in .* holds a delta of a kind"
                                           f" this mini-n8n does not know \\('later'\\): {newer}") as raised:
        ExecutionStore(path).load(eid)
    assert not isinstance(raised.value, StoreDamaged)
    shown = mini_n8n("executions", "show", eid)
    assert shown.returncode == 2 and "Traceback" not in shown.stderr and newer in shown.stderr
    run_delta({"input": {MARK: 3, "then": []}})  # extends a list where the run it extends has a dict
    with pytest.raises(StoreDamaged, match=f"run {seq} \\(Model\\) of execution {eid} .* does not follow from the row it extends"):
        ExecutionStore(path).load(eid)
    stored("DELETE FROM runs WHERE execution_id=?", eid)

    boundary([{MARK: "later"}], boundary_seq + 1, boundary_seq)
    with pytest.raises(MiniN8nError, match=f"boundary {boundary_seq + 1} of execution {eid} .*\\('later'\\): {newer}"):
        ExecutionStore(path).load(eid)
    boundary([{MARK: "later"}], boundary_seq + 1, None)  # whole: read by the references' resolving
    with pytest.raises(MiniN8nError, match=f"the last boundary of execution {eid} .* holds a stack entry of a kind"
                                           f" this mini-n8n does not know \\('later'\\): {newer}"):
        ExecutionStore(path).load(eid)
    answer = {"action": {MARK: "action", "at": 0}, "data": {MARK: "later"}}
    boundary([{"node": "AI Agent", "pending": {"request": {"actions": [{}], "metadata": {}}, "responses": [answer]}}],
             boundary_seq + 1, None)
    with pytest.raises(MiniN8nError, match=f"holds an answer of a kind this mini-n8n does not know \\('later'\\): {newer}"):
        ExecutionStore(path).load(eid)
