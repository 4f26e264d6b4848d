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
        if self.aborted:
            callback()
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

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
