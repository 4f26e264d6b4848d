"""The rows the SQLite store writes outside a single execution's flow: journaled rows folded in,
and retention's deletes; and what a writer keeps per attached execution."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any

from ..run_data import ExecutionState
from .base import FINISHED, Retention
from .journal import Journal, Pending
from .run_records import RunRecords


@dataclass
class WriterState(RunRecords):
    """What one attached execution's next writes need: sequence numbers, its journal, the rows
    not yet in the database, and the JSON the next deltas are made from (shared with live run data)."""

    journal: Journal
    boundary_seq: int = 0
    stack: Any = None  # the last boundary journaled (JSON: its stack, or its stack and state: boundary_state)
    seen: list[tuple[Any, int, Any, int]] = field(default_factory=list)  # per entry then: (entry, revision, pending, answers)
    folded_stack: Any = None  # the last boundary row in the database, as `stack`
    folded_seq: int = 0
    deltas_folded: int = 0  # boundary rows in the database since the last whole one
    unfolded: Pending = field(default_factory=Pending)  # journaled, not yet in the database
    unfolded_since: float = 0.0
    timer: asyncio.TimerHandle | None = None
    row: tuple[Any, ...] | None = None  # the status fields last written to the execution row
    row_due: ExecutionState | None = None  # a row change left for the next fold
    result: Any = None  # the result last seen (the row is rewritten for it only with a fold)
    fresh: bool = False  # a new execution (its row says "new")
    referenced: set[int] = field(default_factory=set)  # seqs of runs a boundary written may refer to (deltas.answer_json)
    checked_answers: dict[int, Any] = field(default_factory=dict)  # CHECK_STACKS: run seq -> the JSON an answer refers to
    salt: int = 0  # where its journal records' crcs start (engine.store.journal.salt)


INSERT_RUNS = "INSERT OR REPLACE INTO runs (execution_id, seq, node, run_index, base, task, crc) VALUES (?,?,?,?,?,?,?)"
INSERT_WHOLE_RUNS = "INSERT OR REPLACE INTO runs (execution_id, seq, node, run_index, base, task, crc) VALUES (?,?,?,?,NULL,?,?)"
INSERT_BOUNDARIES = "INSERT OR REPLACE INTO boundaries (execution_id, seq, runs, last_node, base, stack, crc) VALUES (?,?,?,?,?,?,?)"


def apply_rows(db: sqlite3.Connection, execution_id: str, pending: Pending) -> None:
    """Write journaled rows (idempotent: a journal folded twice leaves the same rows)."""
    boundaries = pending.boundaries
    wholes = [b[1] for b in boundaries if b[4] is None]
    if wholes:  # a whole stack: the boundaries before it are not needed any more
        first = max(wholes)
        db.execute("DELETE FROM boundaries WHERE execution_id=? AND seq<?", (execution_id, first))
        boundaries = [b for b in boundaries if b[1] >= first]
    runs = pending.runs
    if runs:
        # bound as SQLite's module binds fastest: a blob given as bytes and a None go through its
        # adapter lookup (microseconds a row), a bytearray and a NULL in the statement do not; rows
        # of one fold have distinct seqs, so writing the whole ones first changes no outcome
        if len({run[1] for run in runs}) == len(runs):
            db.executemany(INSERT_WHOLE_RUNS, [(e, seq, node, index, bytearray(data), crc)
                                               for e, seq, node, index, base, data, crc in runs if base is None])
            db.executemany(INSERT_RUNS, [(e, seq, node, index, base, bytearray(data), crc)
                                         for e, seq, node, index, base, data, crc in runs if base is not None])
        else:
            db.executemany(INSERT_RUNS, runs)
    if boundaries:
        db.executemany(INSERT_BOUNDARIES, boundaries)


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
            for table in ("runs", "boundaries"):
                db.execute(f"DELETE FROM {table} WHERE execution_id IN (SELECT id FROM doomed)")
            db.execute("DELETE FROM executions WHERE id IN (SELECT id FROM doomed)")
            db.execute("DELETE FROM workflows WHERE hash NOT IN (SELECT workflow_hash FROM executions)")
        db.execute("DELETE FROM doomed")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return int(count)
