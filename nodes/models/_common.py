"""Pieces every chat model node shares: n8n's resource-locator model names, Stop handling and the
JSON encoding of request bodies."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, Iterator

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


@contextlib.contextmanager
def cancel_on_abort(signal: AbortSignal) -> Iterator[None]:
    """While inside, Stop cancels the current task, so an awaited read ends at once."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if task is None:
        yield
        return

    def cancel() -> None:
        if not task.done() and not task.cancelling():  # the engine may have cancelled it already
            task.cancel()

    remove = signal.add_callback(lambda: loop.call_soon_threadsafe(cancel))
    try:
        yield
    finally:
        remove()
