"""What the store writes of a boundary's stack and of a model run: a delta (engine.json_delta) made
only where the shapes repeat what came before, so a boundary costs a few comparisons.

A stack entry repeats its items and its pending request's state (an agent's steps, a window that
grows by a round at a time) and the runs answering it; a model or memory run repeats the
conversation so far. The rest of an entry or a run is small and written as it is. Any value
`decode` reads back is a valid output here: a delta that shortens less is still exact.
"""

from __future__ import annotations

from typing import Any

from ..json_delta import encode


def stack_delta(new: list[dict[str, Any]], old: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`new` (StackEntry.to_json(windows=True) of each entry) as a delta from the stack `old`."""
    return [_entry_delta(entry, old[i]) if i < len(old) else entry for i, entry in enumerate(new)]


def _entry_delta(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    out = dict(new)
    out["input"] = encode(new["input"], old.get("input"))
    pending, before = new.get("pending"), old.get("pending")
    if pending is not None and before is not None:
        request, was = pending["request"], before["request"]
        responses, answered = pending["responses"], before["responses"]
        out["pending"] = {
            "request": {"actions": request["actions"], "metadata": encode(request["metadata"], was["metadata"])},
            "responses": [_response_delta(r, answered[i]) if i < len(answered) else r for i, r in enumerate(responses)],
        }
    return out


def _response_delta(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    return {"action": new["action"], "data": encode(new["data"], old["data"])}


def run_delta(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """A model or memory run (TaskData.to_json(windows=True)) as a delta from the node's run before."""
    out = dict(new)
    out["input"] = encode(new["input"], old.get("input"))
    return out
