"""Folding the store's WAL into its database file on a thread of its own, with its own connection.

A checkpoint copies the WAL's pages into the file and syncs both to disk (two fsyncs): tens of
ms on a busy disk. SQLite's automatic checkpoint runs it inside whichever commit crossed the
size limit, on the writer's thread, which in the editor is the thread that paints. Here the
writer's commits only wake this thread (`written`), which runs a PASSIVE checkpoint once the
writer pauses: it never blocks the writer, and the writer restarts the WAL from its start once
everything is copied.
The writer keeps an automatic checkpoint at a higher limit (sqlite_file.WAL_AUTOCHECKPOINT_PAGES)
in case this thread cannot keep up. Durability is the same either way: a commit is in the WAL
before it returns.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path


QUIET_S = 0.02
"""A checkpoint starts once no commit came for this long (a writer that never pauses meets its
own automatic checkpoint instead). A write transaction that would begin while it copies waits
for it (`wait_copied`): begun meanwhile, it could not start the WAL over at its beginning, and
the WAL would grow past its size limit."""


class WalCheckpointer:
    """One store file's background checkpoints; started at the first commit, stopped by `close`."""

    def __init__(self, path: Path, busy_timeout_s: float) -> None:
        self._path = path
        self._busy_timeout_s = busy_timeout_s
        self._wake = threading.Event()
        self._closing = False
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._copying = threading.Lock()  # held while a checkpoint runs

    def written(self) -> None:
        """A commit went into the WAL: have it folded into the file soon (a microsecond here)."""
        if self._thread is None:
            if self._closing or self._pid != os.getpid():  # a forked child checkpoints on its own commits
                return
            self._thread = threading.Thread(target=self._run, name="mini-n8n store checkpoint", daemon=True)
            self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        try:
            db = sqlite3.connect(self._path, isolation_level=None, timeout=self._busy_timeout_s, check_same_thread=False)
        except sqlite3.Error:
            return  # the writer's own automatic checkpoint still bounds the WAL
        try:
            db.execute("PRAGMA wal_autocheckpoint=0")  # this connection writes nothing; it only checkpoints
            while True:
                self._wake.wait()
                while self._wake.is_set() and not self._closing:  # until the writer pauses
                    self._wake.clear()
                    self._wake.wait(QUIET_S)
                if self._closing:
                    return
                with self._copying:
                    try:
                        db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    except sqlite3.Error:
                        pass  # busy or failing now: the next commit wakes it again
        finally:
            db.close()

    def wait_copied(self) -> None:
        """Before a write transaction: a checkpoint still copying ends first, so the writer starts
        the WAL over at its beginning instead of growing it (rare: checkpoints wait for a pause)."""
        if self._thread is not None:
            with self._copying:
                pass

    def close(self) -> None:
        """Stop the thread and close its connection (before the writer's: the last connection
        to close folds the whole WAL in and removes it)."""
        self._closing = True
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
