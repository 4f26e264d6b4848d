"""The abort signal of one execution: set by Stop, checked at node boundaries, handed to models."""

from __future__ import annotations

import asyncio
from typing import Callable


class AbortSignal:
    """A one-shot flag with callbacks; thread-safe to read from an inference thread."""

    def __init__(self) -> None:
        self.aborted = False
        self.reason = ""
        self._callbacks: list[Callable[[], None]] = []

    def abort(self, reason: str = "stopped by the user") -> None:
        if self.aborted:
            return
        self.aborted = True
        self.reason = reason
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` on abort (at once if already aborted); returns a remover."""
        self.watch(callback)
        return lambda: self.unwatch(callback)

    def watch(self, callback: Callable[[], None]) -> None:
        """Call `callback` on abort (at once if already aborted) unless `unwatch` forgets it first:
        add_callback without a remover made for each call (a model call's hot path)."""
        if self.aborted:
            callback()
        else:
            self._callbacks.append(callback)

    def unwatch(self, callback: Callable[[], None]) -> None:
        """Forget `callback` (found by identity first: give the object `watch` was given)."""
        try:
            self._callbacks.remove(callback)
        except ValueError:
            pass  # aborted meanwhile (called), or never added

    async def wait(self) -> None:
        """Wait until aborted."""
        if self.aborted:
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        remove = self.add_callback(lambda: future.done() or future.set_result(None))
        try:
            await future
        finally:
            remove()
