"""Folding the store's WAL into its database file on a thread of its own, with its own connection.

A checkpoint copies the WAL's pages into the file and syncs both to disk (two fsyncs): tens of
ms on a busy disk. SQLite's automatic checkpoint runs it inside whichever commit crossed the
size limit, on the writer's thread, which in the editor is the thread that paints. Here the
writer's commits only count themselves (`written`); this thread runs a PASSIVE checkpoint once
the writer pauses: it never blocks the writer, and the writer restarts the WAL from its start
once everything is copied. A commit wakes the thread only when it sleeps with nothing to copy:
while commits keep coming it looks at their count once every QUIET_S, so the writer's thread
neither makes a system call per commit nor hands the GIL over at each one.
A pause alone does not start a checkpoint: CHECKPOINT_COMMITS commits must also wait to be
copied, or the first of them have waited MAX_DELAY_S. Every checkpoint costs its two fsyncs, and
the commit after it, which starts the WAL over, costs the writer's thread one more: SQLite syncs
the new WAL header before it writes a frame behind it. Checkpointing at every pause paid that at
nearly every run's end when runs came one after another. The thread counts commits, not the
WAL's pages: those are in the WAL's index, the "-shm" file, which no code but SQLite's may open
in a process with a connection to the store. Closing any descriptor of a file drops every POSIX
lock the process holds on it, SQLite's among them: its connections would go on without the lock
that tells other processes the index is in use, and one of them could start the index over
beneath them (a damaged store, seen with 16 processes writing at once).
The writer keeps an automatic checkpoint at a higher limit (sqlite_file.WAL_AUTOCHECKPOINT_PAGES)
in case this thread cannot keep up. A killed process loses nothing either way: a commit is in the
WAL before it returns. What a power cut can take (synchronous=NORMAL) is what no checkpoint has
synced yet: after a pause, at most MAX_DELAY_S of commits.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path


QUIET_S = 0.02
"""A checkpoint can start once no commit came for this long (between one and two of these after the
last commit; whether it does: CHECKPOINT_COMMITS, MAX_DELAY_S; a writer that never pauses meets
its own automatic checkpoint instead). A write transaction begun while it copies cannot start the
WAL over at its beginning and appends to it: under commits every few ms the WAL would grow past
its size limit. So of two transactions in a row that would begin while a checkpoint copies, the
second waits for it (`wait_copied`); the first does not, which spares most waits for two fsyncs
(up to 15 ms seen) of the writer's thread, in the editor the thread that paints: a run of a few
tens of ms commits at its start and at its end, and a checkpoint between them still copied at one
commit in five."""

CHECKPOINT_COMMITS = 20
"""Commits waiting to be copied for which a pause starts a checkpoint at once: a run of 50 agent
iterations commits once at its end, about 25 pages (4 KB each), so 20 of them are about 2 MB."""
MAX_DELAY_S = 1.0
"""After a pause, fewer commits than CHECKPOINT_COMMITS wait this long at most from the first of them."""


class WalCheckpointer:
    """One store file's background checkpoints; started at the first commit, stopped by `close`."""

    def __init__(self, path: Path, busy_timeout_s: float) -> None:
        self._path = path
        self._busy_timeout_s = busy_timeout_s
        self._commits = 0  # counted by the writer, read by the thread (no lock: only a change matters)
        self._asleep = False  # the thread waits for `_wake`: the next commit sets it
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._copying = threading.Lock()  # held while a checkpoint runs
        self._appended = False  # the last write transaction began while a checkpoint copied

    def written(self) -> None:
        """A commit went into the WAL: have it folded into the file soon (a fraction of a
        microsecond, unless the thread sleeps or is still to start)."""
        self._commits += 1
        if self._asleep:
            self._asleep = False
            self._wake.set()
        elif self._thread is None:
            if self._closed.is_set() or self._pid != os.getpid():  # a forked child checkpoints on its own commits
                return
            self._thread = threading.Thread(target=self._run, name="mini-n8n store checkpoint", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            db = sqlite3.connect(self._path, isolation_level=None, timeout=self._busy_timeout_s, check_same_thread=False)
        except sqlite3.Error:
            return  # the writer's own automatic checkpoint still bounds the WAL
        try:
            db.execute("PRAGMA wal_autocheckpoint=0")  # this connection writes nothing; it only checkpoints
            copied = 0  # the commit count the last checkpoint saw
            since = time.monotonic()  # when commits not yet copied began to wait (the thread starts at the first)
            while not self._closed.is_set():
                seen = self._commits
                if seen == copied:  # nothing new: sleep until a commit wakes it
                    self._wake.clear()
                    self._asleep = True
                    if self._commits == seen:  # else a commit came before it could see `_asleep`
                        self._wake.wait()
                    self._asleep = False
                    since = time.monotonic()
                    continue
                while not self._closed.wait(QUIET_S) and self._commits != seen:  # until the writer pauses
                    seen = self._commits
                if self._closed.is_set():
                    break
                if seen - copied < CHECKPOINT_COMMITS and time.monotonic() - since < MAX_DELAY_S:
                    continue  # a few commits: more may come (looked at again after the next pause)
                with self._copying:
                    try:
                        db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    except sqlite3.Error:
                        pass  # busy or failing now: the next commit has it tried again
                copied, since = seen, time.monotonic()
        finally:
            db.close()

    def wait_copied(self) -> None:
        """Before a write transaction: a checkpoint still copying ends first when the last
        transaction also began while one copied, so that the WAL is not kept from starting over
        at its beginning twice in a row."""
        if self._thread is None:
            return
        copying = self._copying
        if copying.acquire(blocking=False):
            copying.release()
            self._appended = False
        elif not self._appended:
            self._appended = True
        else:
            with copying:
                self._appended = False

    def close(self) -> None:
        """Stop the thread and close its connection (before the writer's: the last connection
        to close folds the whole WAL in and removes it)."""
        self._closed.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
