"""The rows the PostgreSQL store writes in bulk: a boundary's runs and stack, and retention's deletes."""

from __future__ import annotations

import time
from typing import Any

from .base import FINISHED, Retention


def write_rows(db: Any, execution_id: str, runs: list[tuple[Any, ...]], boundary: tuple[Any, ...] | None) -> None:
    """Inside a transaction: the runs, then the boundary (a whole stack drops the boundaries
    before it). Idempotent: rows written again replace themselves."""
    cursor = db.cursor()
    if runs:
        cursor.executemany("INSERT INTO runs (execution_id, seq, node, run_index, base, task, crc)"
                           " VALUES (%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (execution_id, seq) DO UPDATE SET node=EXCLUDED.node,"
                           " run_index=EXCLUDED.run_index, base=EXCLUDED.base, task=EXCLUDED.task, crc=EXCLUDED.crc", runs)
    if boundary is not None:
        if boundary[4] is None:
            cursor.execute("DELETE FROM boundaries WHERE execution_id=%s AND seq<%s", (execution_id, boundary[1]))
        cursor.execute("INSERT INTO boundaries (execution_id, seq, runs, last_node, base, stack, crc)"
                       " VALUES (%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (execution_id, seq) DO UPDATE SET runs=EXCLUDED.runs,"
                       " last_node=EXCLUDED.last_node, base=EXCLUDED.base, stack=EXCLUDED.stack, crc=EXCLUDED.crc", boundary)


def prune_executions(db: Any, retention: Retention, now: float | None = None) -> int:
    """Delete finished executions older than `retention.max_age_days` or beyond the newest
    `retention.max_count` finished ones, with their runs, boundaries and unshared workflows."""
    if not retention.active:
        return 0
    finished = list(FINISHED)
    with db.transaction():
        doomed: set[str] = set()
        if retention.max_age_days is not None:
            cutoff_ms = ((now if now is not None else time.time()) - retention.max_age_days * 86400) * 1000.0
            doomed.update(r[0] for r in db.execute(
                "SELECT id FROM executions WHERE status = ANY(%s) AND started_at < %s", (finished, cutoff_ms)))
        if retention.max_count is not None:
            doomed.update(r[0] for r in db.execute(
                "SELECT id FROM executions WHERE status = ANY(%s) ORDER BY started_at DESC OFFSET %s",
                (finished, retention.max_count)))
        if doomed:
            ids = sorted(doomed)
            for table in ("runs", "boundaries"):
                db.execute(f"DELETE FROM {table} WHERE execution_id = ANY(%s)", (ids,))
            db.execute("DELETE FROM executions WHERE id = ANY(%s)", (ids,))
            db.execute("DELETE FROM workflows w WHERE NOT EXISTS (SELECT 1 FROM executions e WHERE e.workflow_hash = w.hash)")
    return len(doomed)
