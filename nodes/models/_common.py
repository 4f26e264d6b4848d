"""Pieces every chat model node shares: n8n's resource-locator model names, Stop handling and the
JSON encoding of request bodies."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable

from engine.abort import AbortSignal


def encode_json(value: Any) -> str:
    """JSON as request bodies are sent (httpx's encoding: UTF-8, compact, no NaN)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def js_number(value: Any) -> Any:
    """A number as JSON.stringify writes it: 1, not 1.0 (what n8n sends for a whole-number option)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def locator_value(value: Any) -> Any:
    """n8n stores some parameters as resource locators `{"__rl": true, "value": ..., "mode": ...}`."""
    if isinstance(value, dict) and "value" in value:
        return value["value"]
    return value


class cancel_on_abort:
    """While inside, Stop cancels the current task, so an awaited read ends at once. (A class, not
    a generator: it wraps every model call.)"""

    __slots__ = ("_signal", "_task", "_loop", "_remove")

    def __init__(self, signal: AbortSignal) -> None:
        self._signal = signal
        self._remove: Callable[[], None] | None = None

    def __enter__(self) -> None:
        self._task = asyncio.current_task()
        if self._task is not None:
            self._loop = asyncio.get_running_loop()
            self._remove = self._signal.add_callback(self._from_any_thread)

    def __exit__(self, *exc: object) -> None:
        if self._remove is not None:
            self._remove()

    def _from_any_thread(self) -> None:
        self._loop.call_soon_threadsafe(self._cancel)

    def _cancel(self) -> None:
        task = self._task
        if task is not None and not task.done() and not task.cancelling():  # the engine may have cancelled it already
            task.cancel()
