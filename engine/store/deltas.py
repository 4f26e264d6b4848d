"""What the store writes of a boundary's stack and of a model run: a delta (engine.json_delta) made
only where the shapes repeat what came before, so a boundary costs a few comparisons.

A stack entry repeats its items and its pending request's state (an agent's steps, a window that
grows by a round at a time) and the runs answering it; a model or memory run repeats the
conversation so far. The rest of an entry or a run is small and written as it is, but for an
entry that only gained answers: its delta is the answers alone. Any value `decode` reads back
is a valid output here: a delta that shortens less is still exact.
"""

from __future__ import annotations

from typing import Any

from ..connection_types import AI_LANGUAGE_MODEL
from ..json_delta import MARK, SAME, changed_keys, encode


def stack_delta(new: list[dict[str, Any]], old: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`new` (StackEntry.to_json(for_store=True) of each entry) as a delta from the stack `old`;
    an entry's JSON kept from `old` (the entry did not change) is written as SAME."""
    return [(SAME if entry is old[i] else entry_delta(entry, old[i])) if i < len(old) else entry for i, entry in enumerate(new)]


def entry_delta(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """An entry's JSON as a delta from the entry's at the same place in the stack before."""
    out = dict(new)
    out["input"] = encode(new["input"], old.get("input"))
    pending, before = new.get("pending"), old.get("pending")
    if pending is not None and before is not None:
        request, was = pending["request"], before["request"]
        responses, answered = pending["responses"], before["responses"]
        out["pending"] = {
            "request": SAME if request is was else
            {"actions": request["actions"], "metadata": encode(request["metadata"], was["metadata"])},
            "responses": [_response_delta(r, answered[i]) if i < len(answered) else r for i, r in enumerate(responses)],
        }
    return out


def answered_delta(answered: int, added: list[dict[str, Any]]) -> dict[str, Any]:
    """The delta of an entry whose pending request, of `answered` answers then, has gained the
    answers `added` and nothing else: its answers extended (json_delta's shortened-list form),
    nothing else of the entry written (json_delta.changed_keys): the boundary after each tool's
    answer carries the answer alone."""
    return changed_keys({"pending": {"request": SAME, "responses": {MARK: answered, "then": added}}})


def _response_delta(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    if new is old:
        return SAME
    return {"action": new["action"], "data": encode(new["data"], old["data"])}


def run_delta(new: dict[str, Any], old: dict[str, Any], item: dict[str, Any] | None, was: dict[str, Any] | None) -> dict[str, Any]:
    """A model or memory run (TaskData.to_json(for_store=True)) as a delta from the node's run before;
    `item` and `was`: model_item of each one's input. A model run's one input item (messages and
    tools) is compared straight away, anything else walked."""
    out = dict(new)
    if item is not None and was is not None:
        json, was_json = item["json"], was["json"]
        delta = {key: encode(value, was_json.get(key)) for key, value in json.items()}
        out["input"] = {AI_LANGUAGE_MODEL: [[{**item, "json": delta}]]}
    else:
        out["input"] = encode(new["input"], old.get("input"))
    return out


def model_item(inputs: Any) -> dict[str, Any] | None:
    """The one item of a model run's input ({"ai_languageModel": [[item]]}), else None."""
    if type(inputs) is not dict or len(inputs) != 1:
        return None
    runs = inputs.get(AI_LANGUAGE_MODEL)
    if type(runs) is not list or len(runs) != 1 or type(runs[0]) is not list or len(runs[0]) != 1:
        return None
    item = runs[0][0]
    return item if type(item) is dict and type(item.get("json")) is dict else None
