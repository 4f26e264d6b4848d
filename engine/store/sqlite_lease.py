"""One owner per execution in an SQLite store, and what a dead owner left behind.

An execution's row names the process that runs it (pid and start time: a recycled pid is not
taken for the owner). A running execution whose owner is gone is "crashed": what its journal
holds is folded in first, and anyone may resume it; but one whose journal holds its end (it ended
before its owner died, its end not yet folded in) is stored as it ended. An execution whose
process died before its first fold is only a journal (its start record names it and its owner):
it becomes a crashed execution too, or is stored as it ended. Every method here but
`running_of_dead` runs inside the caller's write transaction.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Callable

from ..processes import same_process_alive
from .base import ExecutionBusy
from .journal import Start, read_journal
from .journal_folder import JournalFolder
from .sqlite_rows import apply_rows


class SqliteLeases:
    """The leases of one store object's process, and the recovery of dead owners' executions."""

    def __init__(self, db: sqlite3.Connection, journals: JournalFolder, pid: int, started: int | None,
                 insert_crashed: Callable[[Start], bool]) -> None:
        self._db = db
        self._journals = journals
        self._pid = pid
        self._started = started
        self._insert_crashed = insert_crashed  # a start record's execution stored as crashed; False when its row exists

    def claim(self, execution_id: str) -> str | None:
        """Make this process the owner; returns the stored status (None: no such execution).
        Raises ExecutionBusy when a live other process owns it."""
        row = self._db.execute("SELECT status, owner_pid, owner_start FROM executions WHERE id=?", (execution_id,)).fetchone()
        if row is None:
            return None
        status, pid, started = row
        if pid is not None and (pid, started) != (self._pid, self._started) and same_process_alive(pid, started):
            raise ExecutionBusy(execution_id, pid)
        self._db.execute("UPDATE executions SET owner_pid=?, owner_start=? WHERE id=?", (self._pid, self._started, execution_id))
        return str(status)

    def adopt_dead(self, execution_id: str) -> bool:
        """`execution_id` stored as crashed when only its journal holds it; raises ExecutionBusy
        when the process writing that journal is alive."""
        starts = [start for _path, start in self._journals.of(execution_id) if start is not None]
        for start in starts:
            if same_process_alive(start.owner_pid, start.owner_start):
                raise ExecutionBusy(execution_id, start.owner_pid)
        return bool(starts) and self._insert_crashed(starts[0])

    def recover(self, execution_id: str, starts: list[tuple[Path, Start]] | None = None) -> tuple[list[Path], bool]:
        """With the execution claimed: fold what a dead owner left in its journal; returns the
        journals to remove once committed, and whether one held the execution's end (its row
        says how it ended now). `starts`: the journal folder's, read already."""
        paths = [path for path, _start in self._journals.of(execution_id, starts)]
        ended = False
        for path in paths:
            pending = read_journal(path, execution_id)
            apply_rows(self._db, execution_id, pending)
            ended = ended or pending.end is not None
        return paths, ended

    def running_of_dead(self) -> list[tuple[str, int | None]]:
        """The executions whose row says running (or new) and whose owner is gone, with that owner."""
        rows = self._db.execute("SELECT id, owner_pid, owner_start FROM executions WHERE status IN ('running', 'new')").fetchall()
        return [(eid, pid) for eid, pid, started in rows if not same_process_alive(pid, started)]

    def mark_crashed(self, gone: list[tuple[str, int | None]], starts: list[tuple[Path, Start]]) -> tuple[list[str], set[Path]]:
        """`gone` (running_of_dead) and the executions of the journals among `starts` (the journal
        folder's, read once) whose process is gone crashed, their journals folded in; returns
        those executions and the journals to remove once committed."""
        crashed: list[str] = []
        done: set[Path] = set()

        def recovered(eid: str) -> None:
            paths, ended = self.recover(eid, starts)
            done.update(paths)
            if not ended:
                crashed.append(eid)

        for eid, pid in gone:  # only if no other process took it over meanwhile
            if self._crash(eid, pid):
                recovered(eid)
        for path, start in starts:
            if path in done or same_process_alive(start.owner_pid, start.owner_start):
                continue
            eid = start.execution_id
            if self._insert_crashed(start):  # it died before its first fold
                recovered(eid)
                continue
            row = self._db.execute("SELECT status, owner_pid, owner_start FROM executions WHERE id=?", (eid,)).fetchone()
            status, pid, started = row if row is not None else (None, None, None)
            if pid is not None and same_process_alive(pid, started):
                continue  # a live process took it over (and folds or removes this journal)
            if status in ("running", "new") and self._crash(eid, pid):  # its owner died after the rows were read
                recovered(eid)
            done.add(path)  # else everything in it before its end reached the database with a fold
        return crashed, done

    def _crash(self, execution_id: str, owner_pid: int | None) -> bool:
        """A running execution whose owner `owner_pid` is gone marked crashed, unless another
        process took it over meanwhile."""
        return bool(self._db.execute(
            "UPDATE executions SET status='crashed', owner_pid=NULL, owner_start=NULL, updated_at=?"
            " WHERE id=? AND status IN ('running', 'new') AND owner_pid IS ?", (time.time(), execution_id, owner_pid),
        ).rowcount)
