"""The rows the SQLite store writes outside a single execution's flow: journaled rows folded in,
and retention's deletes; and what a writer keeps per attached execution."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..run_data import ExecutionState
from .base import FINISHED, Retention
from .codec import StoreDamaged
from .journal import Journal, Pending, RowStatus, RunRow, Start, decode_records, encode_record, salt
from .run_batch import RunBatch
from .run_records import RunRecords
from .sqlite_file import fields_crc


@dataclass
class WriterState(RunRecords):
    """What one attached execution's next writes need: sequence numbers, its journal, the rows
    not yet in the database, and the JSON the next deltas are made from (shared with live run data)."""

    journal: Journal
    execution_id: str = ""
    boundary_seq: int = 0
    stack: Any = None  # the last boundary journaled (JSON: its stack, or its stack and state: boundary_state)
    # per entry then: (entry, revision, pending, answers, entry_changes.kept_fields when its JSON was made)
    seen: list[tuple[Any, int, Any, int, Any]] = field(default_factory=list)
    folded_stack: Any = None  # the last boundary row in the database, as `stack`
    folded_seq: int = 0
    deltas_folded: int = 0  # boundary rows in the database since the last whole one
    unfolded: Pending = field(default_factory=Pending)  # journaled, not yet in the database
    records: int = 0  # records journaled since the last fold (a boundary's, or a loop's runs alone)
    batch: RunBatch = field(default_factory=RunBatch)  # the runs of `unfolded`, gathered for the fold's batch row
    unfolded_since: float = 0.0
    timer: asyncio.TimerHandle | None = None
    row: tuple[Any, ...] | None = None  # the status fields last written to the execution row
    row_due: ExecutionState | None = None  # a row change left for the next fold
    result: Any = None  # the result last seen (the row is rewritten for it only with a fold)
    fresh: bool = False  # a new execution (its row says "new")
    start: Start | None = None  # a new execution's start record, until its first fold puts its row in the database
    head: int = 0  # the length of the start record its journal begins with (a fold keeps it there)
    unlisten: Callable[[], None] | None = None  # stops its execution telling it its runs
    referenced: set[int] = field(default_factory=set)  # seqs of runs a boundary written may refer to (deltas.answer_json)
    checked_answers: dict[int, Any] = field(default_factory=dict)  # CHECK_STACKS: run seq -> the JSON an answer refers to
    salt: int = 0  # where its journal records' crcs start (engine.store.journal.salt)
    ended: RowStatus | None = None  # its end, journaled: folded into the database with other executions' ends

    def stop_listening(self) -> None:
        """Its execution tells it no more runs. The callback is dropped: it holds the writer (a
        cycle), and through it the execution and all its run data, which only the collector
        would free otherwise (a pause of milliseconds at a run's end)."""
        unlisten, self.unlisten = self.unlisten, None
        if unlisten is not None:
            unlisten()


INSERT_RUNS = "INSERT OR REPLACE INTO runs (execution_id, seq, node, run_index, base, task, crc) VALUES (?,?,?,?,?,?,?)"
INSERT_WHOLE_RUNS = "INSERT OR REPLACE INTO runs (execution_id, seq, node, run_index, base, task, crc) VALUES (?,?,?,?,NULL,?,?)"
INSERT_BOUNDARIES = "INSERT OR REPLACE INTO boundaries (execution_id, seq, runs, last_node, base, stack, crc) VALUES (?,?,?,?,?,?,?)"


INSERT_RUN_BATCH = "INSERT OR REPLACE INTO run_batches (execution_id, first_seq, last_seq, runs) VALUES (?,?,?,?)"
RUN_BATCH_MAX = 4096  # runs in one batch row, at most (a journal record holds up to 65,535)


def apply_rows(db: sqlite3.Connection, execution_id: str, pending: Pending, *, first: bool = False,
               batch: RunBatch | None = None) -> None:
    """Write journaled rows (idempotent: a journal folded twice leaves the same rows), and the row's
    status fields when they hold the execution's end (recovery of a journal). The runs of a
    fold go in as one batch row (run_batches: the runs as a journal record holds them, each with its
    own checksum): one insert instead of one per run, which was most of a fold; made from `batch`
    when it holds those very runs (gathered as they were journaled), else packed here. `first`:
    the execution has no rows in the database yet (its first fold): none to delete."""
    boundaries = pending.boundaries
    wholes = [b[1] for b in boundaries if b[4] is None]
    if wholes:  # a whole stack: the boundaries before it are not needed any more
        newest = max(wholes)
        if not first:
            db.execute("DELETE FROM boundaries WHERE execution_id=? AND seq<?", (execution_id, newest))
        boundaries = [b for b in boundaries if b[1] >= newest]
    runs = pending.runs
    if runs and batch is not None and len(runs) <= RUN_BATCH_MAX and batch.holds(runs[0][1], runs[-1][1], len(runs)):
        db.execute(INSERT_RUN_BATCH, (execution_id, runs[0][1], runs[-1][1], bytearray(batch.record(salt(execution_id)))))
    elif runs:
        seqs = [run[1] for run in runs]
        if all(seqs[i] < seqs[i + 1] for i in range(len(seqs) - 1)):  # a fold's runs, each once, in order
            seed = salt(execution_id)
            for start in range(0, len(runs), RUN_BATCH_MAX):
                batch = runs[start:start + RUN_BATCH_MAX]
                # a bytearray is bound without the sqlite3 module's adapter lookup
                db.execute(INSERT_RUN_BATCH, (execution_id, batch[0][1], batch[-1][1], bytearray(encode_record(batch, None, seed))))
        else:
            db.executemany(INSERT_RUNS, runs)
    if boundaries:
        db.executemany(INSERT_BOUNDARIES, boundaries)
    if pending.end is not None:  # a journal's end record (recovered): the row as the execution ended
        write_status(db, execution_id, pending.end, release=True)


def write_status(db: sqlite3.Connection, execution_id: str, row: RowStatus, *, release: bool) -> None:
    """An execution row's status fields as `row` says (`release`: owned by no process now)."""
    owner = ", owner_pid=NULL, owner_start=NULL" if release else ""
    db.execute(f"UPDATE executions SET status=?, stopped_at=?, error=?, result=?, pause=?, crc=?, updated_at=?{owner} WHERE id=?",
               (row.status, row.stopped_at, *row.fields, fields_crc(row.fields), time.time(), execution_id))


def stored_runs(db: sqlite3.Connection, execution_id: str, upto: int | None = None, where: str = "") -> list[tuple[Any, ...]]:
    """(seq, node, run index, base, task, crc) of each stored run of an execution (up to seq `upto`),
    in order: from its batch rows and its single rows, a single row winning over a batch's run of
    the same seq (a run rewritten after it was folded: an edit). `where` names the store in errors."""
    found: dict[int, tuple[Any, ...]] = {}
    query, args = "SELECT first_seq, last_seq, runs FROM run_batches WHERE execution_id=?", (execution_id,)
    if upto is not None:
        query, args = query + " AND first_seq<=?", (execution_id, upto)
    for first, last, blob in db.execute(query, args).fetchall():
        for _eid, seq, node, run_index, base, task, crc in _batch(execution_id, first, last, blob, where):
            if upto is None or seq <= upto:
                found[seq] = (seq, node, run_index, base, task, crc)
    query, args = "SELECT seq, node, run_index, base, task, crc FROM runs WHERE execution_id=?", (execution_id,)
    if upto is not None:
        query, args = query + " AND seq<=?", (execution_id, upto)
    for row in db.execute(query, args).fetchall():
        found[row[0]] = row
    return [found[seq] for seq in sorted(found)]


def last_run_seq(db: sqlite3.Connection, execution_id: str) -> int:
    """The highest seq of an execution's stored runs (0 when it has none)."""
    single = db.execute("SELECT COALESCE(MAX(seq), 0) FROM runs WHERE execution_id=?", (execution_id,)).fetchone()[0]
    batched = db.execute("SELECT COALESCE(MAX(last_seq), 0) FROM run_batches WHERE execution_id=?", (execution_id,)).fetchone()[0]
    return int(max(single, batched))


def _batch(execution_id: str, first: int, last: int, blob: bytes, where: str) -> list[RunRow]:
    """The runs of a batch row, each of seqs `first` to `last` once; damage reported, not read."""
    read = decode_records(execution_id, bytes(blob)).runs
    if [run[1] for run in read] != list(range(first, last + 1)):
        raise StoreDamaged(f"runs {first} to {last} of execution {execution_id}{where} fail their checksum:"
                           " the file is damaged (the damaged data is not shown)")
    return read


def drop_runs_after(db: sqlite3.Connection, execution_id: str, seq: int, where: str = "") -> None:
    """Delete an execution's runs after `seq` (a resumed execution runs their nodes again); a batch
    holding runs on both sides keeps those up to `seq`. `where` names the store in errors."""
    db.execute("DELETE FROM runs WHERE execution_id=? AND seq>?", (execution_id, seq))
    db.execute("DELETE FROM run_batches WHERE execution_id=? AND first_seq>?", (execution_id, seq))
    for first, last, blob in db.execute("SELECT first_seq, last_seq, runs FROM run_batches WHERE execution_id=? AND last_seq>?",
                                        (execution_id, seq)).fetchall():
        kept = [run for run in _batch(execution_id, first, last, blob, where) if run[1] <= seq]
        db.execute("UPDATE run_batches SET last_seq=?, runs=? WHERE execution_id=? AND first_seq=?",
                   (kept[-1][1], bytearray(encode_record(kept, None, salt(execution_id))), execution_id, first))


def rewrite_run(db: sqlite3.Connection, execution_id: str, seq: int | None, node: str, run_index: int, task: bytes, crc: int) -> None:
    """Store a run written again whole (an edit made while paused), over its single row or beside
    its batch (stored_runs reads the single row); `seq` None: found by node and run index."""
    if seq is None:
        seq = next((row[0] for row in stored_runs(db, execution_id) if row[1] == node and row[2] == run_index), None)
        if seq is None:
            return
    db.execute(INSERT_WHOLE_RUNS, (execution_id, seq, node, run_index, bytearray(task), crc))


def prune_executions(db: sqlite3.Connection, retention: Retention, now: float | None = None) -> int:
    """Delete finished executions older than `retention.max_age_days` or beyond the newest
    `retention.max_count` finished ones, with their runs, boundaries and unshared workflows."""
    if not retention.active:
        return 0
    finished = ",".join(f"'{s}'" for s in FINISHED)
    selects, args = [], []
    if retention.max_age_days is not None:
        cutoff_ms = ((now if now is not None else time.time()) - retention.max_age_days * 86400) * 1000.0
        selects.append(f"SELECT id FROM executions WHERE status IN ({finished}) AND started_at < ?")
        args.append(cutoff_ms)
    if retention.max_count is not None:
        selects.append(f"SELECT id FROM (SELECT id FROM executions WHERE status IN ({finished})"
                       " ORDER BY started_at DESC LIMIT -1 OFFSET ?)")
        args.append(retention.max_count)
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("CREATE TEMP TABLE IF NOT EXISTS doomed (id TEXT PRIMARY KEY)")
        db.execute("DELETE FROM doomed")
        db.execute("INSERT OR IGNORE INTO doomed " + " UNION ".join(selects), args)
        count = db.execute("SELECT COUNT(*) FROM doomed").fetchone()[0]
        if count:
            for table in ("runs", "run_batches", "boundaries"):
                db.execute(f"DELETE FROM {table} WHERE execution_id IN (SELECT id FROM doomed)")
            db.execute("DELETE FROM executions WHERE id IN (SELECT id FROM doomed)")
            db.execute("DELETE FROM workflows WHERE hash NOT IN (SELECT workflow_hash FROM executions)")
        db.execute("DELETE FROM doomed")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return int(count)
