"""Executions that ended, their ends journaled (end records, engine.store.journal), waiting to be
folded into the database together: one transaction for the ends that come within `after_s` of
the first, up to `most` of them. A timer folds them while an event loop runs; without one, the
store folds them at its next write or read, and at the latest when the process exits: a script
that ran with `asyncio.run` and ends without closing its store leaves its runs in the database,
not for the next process to recover from its journals."""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import time
import weakref
from typing import Callable

from ..errors import MiniN8nError
from .sqlite_rows import WriterState

log = logging.getLogger(__name__)

_holding: weakref.WeakSet[EndsWaiting] = weakref.WeakSet()  # this process's, while ends wait in them
os.register_at_fork(after_in_child=_holding.clear)  # a forked child must not write through its parent's connection


@atexit.register
def fold_at_exit() -> None:
    """The ends still waiting when the process exits go into the database."""
    for ends in list(_holding):
        ends.fold_logged()


class EndsWaiting:
    """The ended executions' writers, oldest first, and when to fold them (`fold_writers` does)."""

    def __init__(self, fold_writers: Callable[[list[WriterState]], None], *, after_s: float, most: int) -> None:
        self._fold_writers = fold_writers
        self._after_s = after_s
        self._most = most
        self._writers: list[WriterState] = []
        self._since = 0.0  # when the oldest of them ended
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None  # the loop it is on (one that has ended never runs it)

    def add(self, writer: WriterState) -> None:
        now = time.monotonic()
        if not self._writers:
            self._since = now
            _holding.add(self)
        self._writers.append(writer)
        if len(self._writers) >= self._most or now - self._since > self._after_s:
            self.fold()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.fold()
            return
        if self._timer is None or self._timer_loop is not loop:
            if self._timer is not None:
                self._timer.cancel()
            self._timer, self._timer_loop = loop.call_later(self._after_s, self._fold_when_due), loop

    def overdue(self) -> bool:
        """Some have waited longer than `after_s` (no event loop ran the timer)."""
        return bool(self._writers) and time.monotonic() - self._since > self._after_s

    def fold(self) -> None:
        """Fold them all now; when that fails they wait on (the next fold tries again)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._writers:
            self._fold_writers(self._writers)
            self._writers = []
            _holding.discard(self)

    def fold_logged(self) -> None:
        """`fold`, a failure logged: their journals keep them, and the store's next write, read or
        close tries again (after the process, the next store to open the file recovers them)."""
        try:
            self.fold()
        except MiniN8nError as exc:
            log.warning("%s", exc)

    def _fold_when_due(self) -> None:
        self._timer = None
        self.fold_logged()
