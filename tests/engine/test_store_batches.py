"""A fold's runs are stored as one batch row: they read back as single rows did, a run rewritten
after its fold (an edit) reads as rewritten, a resumed execution's runs after its boundary are
dropped from the middle of a batch, and a damaged batch is reported, not read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine.store import ExecutionStore
from engine.store.codec import StoreDamaged, pack
from engine.store.journal import Pending
from engine.store.sqlite_rows import RUN_BATCH_MAX, apply_rows, drop_runs_after, last_run_seq, rewrite_run, stored_runs


def runs(eid: str, seqs: range) -> list[tuple]:
    out = []
    for seq in seqs:
        data, crc = pack({"startTime": float(seq), "data": {"main": [[{"json": {"n": seq}}]]}})
        out.append((eid, seq, f"Node {seq % 3}", seq // 3, None, data, crc))
    return out


@pytest.fixture
def db(tmp_path: Path) -> sqlite3.Connection:
    ExecutionStore(tmp_path / "x.sqlite").close()
    connection = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    yield connection
    connection.close()


def test_a_folds_runs_are_one_row_and_read_back_as_written(db: sqlite3.Connection) -> None:
    apply_rows(db, "e1", Pending(runs=runs("e1", range(1, 6))))
    apply_rows(db, "e1", Pending(runs=runs("e1", range(6, 9))))
    apply_rows(db, "e2", Pending(runs=runs("e2", range(1, 3))))
    assert db.execute("SELECT execution_id, first_seq, last_seq FROM run_batches ORDER BY execution_id, first_seq").fetchall() == [
        ("e1", 1, 5), ("e1", 6, 8), ("e2", 1, 2)]
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    assert stored_runs(db, "e1") == [run[1:] for run in runs("e1", range(1, 9))]
    assert stored_runs(db, "e1", upto=6) == [run[1:] for run in runs("e1", range(1, 7))]
    assert last_run_seq(db, "e1") == 8 and last_run_seq(db, "e3") == 0
    apply_rows(db, "e1", Pending(runs=runs("e1", range(6, 9))))  # a journal folded twice: the same rows
    assert stored_runs(db, "e1") == [run[1:] for run in runs("e1", range(1, 9))]


def test_a_fold_of_more_runs_than_a_batch_holds_is_split(db: sqlite3.Connection) -> None:
    apply_rows(db, "e1", Pending(runs=runs("e1", range(1, RUN_BATCH_MAX + 3))))
    assert db.execute("SELECT first_seq, last_seq FROM run_batches").fetchall() == [(1, RUN_BATCH_MAX), (RUN_BATCH_MAX + 1, RUN_BATCH_MAX + 2)]
    assert [row[0] for row in stored_runs(db, "e1")] == list(range(1, RUN_BATCH_MAX + 3))


def test_a_run_rewritten_after_its_fold_reads_as_rewritten(db: sqlite3.Connection) -> None:
    apply_rows(db, "e1", Pending(runs=runs("e1", range(1, 6))))
    data, crc = pack({"edited": True})
    rewrite_run(db, "e1", 3, "Node 0", 1, data, crc)
    rewrite_run(db, "e1", None, "Node 1", 1, data, crc)  # found by node and run index: seq 4
    read = {row[0]: row for row in stored_runs(db, "e1")}
    assert read[3] == (3, "Node 0", 1, None, data, crc) and read[4][4] == data
    assert [read[seq][4] for seq in (1, 2, 5)] == [run[5] for run in runs("e1", range(1, 6)) if run[1] in (1, 2, 5)]


def test_runs_after_a_boundary_are_dropped_from_the_middle_of_a_batch(db: sqlite3.Connection) -> None:
    apply_rows(db, "e1", Pending(runs=runs("e1", range(1, 6))))
    apply_rows(db, "e1", Pending(runs=runs("e1", range(6, 9))))
    drop_runs_after(db, "e1", 3)
    assert db.execute("SELECT first_seq, last_seq FROM run_batches").fetchall() == [(1, 3)]
    assert stored_runs(db, "e1") == [run[1:] for run in runs("e1", range(1, 4))]
    assert last_run_seq(db, "e1") == 3
    drop_runs_after(db, "e1", 0)
    assert stored_runs(db, "e1") == [] and last_run_seq(db, "e1") == 0


def test_a_damaged_batch_is_reported_naming_its_runs(db: sqlite3.Connection) -> None:
    apply_rows(db, "e1", Pending(runs=runs("e1", range(1, 6))))
    blob = bytes(db.execute("SELECT runs FROM run_batches").fetchone()[0])
    at = blob.index(b'"n":3')
    db.execute("UPDATE run_batches SET runs=?", (blob[:at] + b'"n":4' + blob[at + 5:],))
    with pytest.raises(StoreDamaged, match="runs 1 to 5 of execution e1 in here fail their checksum"):
        stored_runs(db, "e1", where=" in here")
    db.execute("UPDATE run_batches SET runs=?", (blob[:40],))  # cut short
    with pytest.raises(StoreDamaged, match="runs 1 to 5 of execution e1"):
        stored_runs(db, "e1")
