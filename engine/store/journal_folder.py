"""The journals beside a store file (FILE-boundaries/): one per execution being written, named by
its id, and each store's spare (an ended execution's journal, emptied, for the next execution).
What a dead process left there is found here: its spares (they hold nothing) and the journals of
executions it started that never reached the database (their start records)."""

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


class JournalFolder:
    """One store object's view of its file's journal folder, and its spare journal."""

    def __init__(self, store_path: Path, pid: int, started: int | None) -> None:
        self.path = Path(f"{store_path}-boundaries")
        parked = _parked.get(self.path)
        self._spare: Journal | None = parked.pop() if parked else None
        # one name per store object: two stores of one process on the same file keep theirs apart
        self.spare_path = self.path / f"spare.{pid}.{started}.{next(_stores)}.journal"

    def path_of(self, execution_id: str) -> Path:
        name = execution_id if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", execution_id) else hashlib.sha256(
            execution_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.path / f"{name}.journal"

    def new(self, execution_id: str) -> Journal:
        """The execution's journal (the spare's file, renamed at its first record, if there is one)."""
        spare, self._spare = self._spare, None
        return Journal(self.path_of(execution_id), spare=spare)

    def retire(self, journal: Journal) -> None:
        """A journal everything of which is in the database: kept emptied as the spare, or removed."""
        if self._spare is None and journal.park(self.spare_path):
            self._spare = journal
        else:
            journal.close(remove=True)

    def close(self) -> None:
        """The spare goes to the next store of this process on this file."""
        if self._spare is not None:
            _park(self.path, self._spare)
            self._spare = None

    def _names(self) -> list[str]:
        try:
            return os.listdir(self.path)
        except OSError:
            return []

    def remove_dead_spares(self) -> None:
        """Spare journals (spare.PID.START.N.journal) of processes that are gone: they hold nothing."""
        for name in self._names():
            parts = name.split(".")
            if len(parts) == 5 and parts[0] == "spare" and parts[4] == "journal" and parts[1].isdigit():
                started = int(parts[2]) if parts[2].isdigit() else None
                if not same_process_alive(int(parts[1]), started):
                    (self.path / name).unlink(missing_ok=True)

    def orphans(self) -> list[Start]:
        """The start records of journals whose process is gone (an execution that died before its
        first fold has nothing else: the caller stores those with no row)."""
        found = []
        for name in self._names():
            if not name.startswith("spare.") and name.endswith(".journal"):
                start = read_start(self.path / name)
                if start is not None and not same_process_alive(start.owner_pid, start.owner_start):
                    found.append(start)
        return found
