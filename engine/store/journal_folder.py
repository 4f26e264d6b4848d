"""The journals beside a store file (FILE-boundaries/): one per execution being written (or ended,
its end not yet folded in), and each store's spares (ended executions' journals, emptied, for the
next executions).

A journal file is named for the store object that made it (PID.START.STORE.N.journal), never for
an execution: it keeps its name from one execution to the next. Which execution a journal holds
is what its start record says (engine.store.journal), so finding an execution's journal reads the
start of each file here; that happens only when an execution is recovered, claimed or deleted.
What a dead process left here is found the same way: journals whose start record names an owner
that is gone, and empty files named for a process that is gone. Files an older layout named for
their execution (ID.journal) are still found by that name."""

from __future__ import annotations

import atexit
import hashlib
import itertools
import os
import re
from pathlib import Path

from ..processes import same_process_alive
from .journal import Journal, Start, read_start

_stores = itertools.count()
# spare journals of closed stores, by journal folder: the next store of this process on the same
# file takes one over (removed when the process exits; a later store removes what a killed one left)
_parked: dict[Path, list[Journal]] = {}
PARKED_MAX = 4  # kept open at most (a file descriptor and a mapping each)


def _park(folder: Path, journal: Journal) -> None:
    _parked.setdefault(folder, []).append(journal)
    while sum(map(len, _parked.values())) > PARKED_MAX:  # the oldest folder's first goes
        oldest = next(where for where, parked in _parked.items() if parked)
        _parked[oldest].pop(0).close(remove=True)


os.register_at_fork(after_in_child=_parked.clear)  # a forked child must not take its parent's files


@atexit.register
def remove_parked() -> None:
    for journals in _parked.values():
        while journals:
            journals.pop().close(remove=True)


def _owner_named(name: str) -> tuple[int, int | None] | None:
    """The process (pid, start time) a journal's file name says made it: PID.START.STORE.N.journal,
    or an older layout's spare, spare.PID.START.STORE.journal; None for any other name."""
    parts = name.split(".")
    if len(parts) != 5 or parts[4] != "journal":
        return None
    pid, started = (parts[1], parts[2]) if parts[0] == "spare" else (parts[0], parts[1])
    if not pid.isdigit():
        return None
    return int(pid), int(started) if started.isdigit() else None


class JournalFolder:
    """One store object's view of its file's journal folder, and its spare journals (at most
    `spares`: as many as executions may wait with their ends journaled, and one)."""

    def __init__(self, store_path: Path, pid: int, started: int | None, spares: int) -> None:
        self.path = Path(f"{store_path}-boundaries")
        parked = _parked.get(self.path)
        self._spares: list[Journal] = [parked.pop()] if parked else []
        self._spares_kept = spares
        # one prefix per store object: two stores of one process on the same file keep theirs apart
        self._prefix = f"{pid}.{started}.{next(_stores)}"
        self._made = itertools.count()

    def new(self) -> Journal:
        """A journal for an execution: a spare, else a new file named for this store."""
        if self._spares:
            return self._spares.pop()
        return Journal(self.path / f"{self._prefix}.{next(self._made)}.journal")

    def retire(self, journal: Journal) -> None:
        """A journal everything of which is in the database: kept emptied as a spare, or removed."""
        if len(self._spares) < self._spares_kept and journal.has_file:
            journal.empty()
            self._spares.append(journal)
        else:
            journal.close(remove=True)

    def close(self) -> None:
        """A spare goes to the next store of this process on this file; the others are removed."""
        if self._spares:
            _park(self.path, self._spares.pop())
        while self._spares:
            self._spares.pop().close(remove=True)

    def _files(self) -> list[Path]:
        try:
            return [self.path / name for name in os.listdir(self.path) if name.endswith(".journal")]
        except OSError:
            return []

    def _older_layout_path(self, execution_id: str) -> Path:
        name = execution_id if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", execution_id) else hashlib.sha256(
            execution_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.path / f"{name}.journal"

    def starts(self) -> list[tuple[Path, Start]]:
        """Each journal here that holds an execution, with its start record."""
        found = []
        for path in self._files():
            start = read_start(path)
            if start is not None:
                found.append((path, start))
        return found

    def of(self, execution_id: str, starts: list[tuple[Path, Start]] | None = None) -> list[tuple[Path, Start | None]]:
        """The journals holding `execution_id` (a file of the older layout named for it may have
        no start record: None); `starts`: what `starts()` read already (one pass over the folder
        for many executions)."""
        starts = self.starts() if starts is None else starts
        found: list[tuple[Path, Start | None]] = [(path, start) for path, start in starts if start.execution_id == execution_id]
        older = self._older_layout_path(execution_id)
        if older.exists() and all(path != older for path, _start in found):
            found.append((older, None))
        return found

    def remove_dead_spares(self) -> None:
        """Journals that hold no execution, named for a process that is gone."""
        for path in self._files():
            owner = _owner_named(path.name)
            if owner is not None and not same_process_alive(*owner) and read_start(path) is None:
                path.unlink(missing_ok=True)
