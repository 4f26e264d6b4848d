"""What the store writes of a boundary's stack and of a model run: a delta (engine.json_delta) made
only where the shapes repeat what came before, so a boundary costs a few comparisons.

A stack entry repeats its items and its pending request's state (an agent's steps, a window that
grows by a round at a time) and the runs answering it; a model or memory run repeats the
conversation so far. The rest of an entry or a run is small and written as it is, but for an
entry that only gained answers: its delta is the answers alone, and for a tool's entry as the
engine pushed it for a request: a reference to the request's action. Any value `decode` reads
back is a valid output here: a delta that shortens less is still exact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..connection_types import AI_LANGUAGE_MODEL
from ..json_delta import MARK, SAME, UnknownDelta, changed_keys, encode

if TYPE_CHECKING:
    from ..requests import Action, ActionResponse
    from ..run_data import StackEntry


def stack_delta(new: list[dict[str, Any]], old: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`new` (StackEntry.to_json(for_store=True) of each entry, or the reference standing for it:
    requested_entry) as a delta from the stack `old`; an entry's JSON kept from `old` (the entry
    did not change) is written as SAME, a reference as it is."""
    return [(SAME if entry is old[i] else entry if MARK in entry else entry_delta(entry, old[i])) if i < len(old) else entry
            for i, entry in enumerate(new)]


def entry_delta(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """An entry's JSON as a delta from the entry's at the same place in the stack before."""
    out = dict(new)
    out["input"] = encode(new["input"], old.get("input"))
    pending, before = new.get("pending"), old.get("pending")
    if pending is not None and before is not None:
        out["pending"] = pending_delta(pending, before)
    return out


def pending_delta(pending: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """An entry's pending request (JSON) as a delta from the one its entry had before: its steps
    (the request's metadata) and answers as far as they repeat those."""
    request, was = pending["request"], before["request"]
    responses, answered = pending["responses"], before["responses"]
    return {
        "request": SAME if request is was else
        {"actions": request["actions"], "metadata": encode(request["metadata"], was["metadata"])},
        "responses": [_response_delta(r, answered[i]) if i < len(answered) else r for i, r in enumerate(responses)],
    }


def answered_delta(answered: int, added: list[dict[str, Any]]) -> dict[str, Any]:
    """The delta of an entry whose pending request, of `answered` answers then, has gained the
    answers `added` and nothing else: its answers extended (json_delta's shortened-list form),
    nothing else of the entry written (json_delta.changed_keys): the boundary after each tool's
    answer carries the answer alone."""
    return changed_keys({"pending": {"request": SAME, "responses": {MARK: answered, "then": added}}})


REQUESTED = "requested"  # {MARK: REQUESTED, "at": k}: the entry the engine pushes for the k-th action of a request
ANSWERED_BY = "run"  # {MARK: ANSWERED_BY, "seq": s}: an answer's data is the JSON of run s, the tool run that gave it
ACTION_AT = "action"  # {MARK: ACTION_AT, "at": k}: an answer's action is the k-th of the request it answers
REFERENCES = frozenset((REQUESTED, ANSWERED_BY, ACTION_AT))  # what json_delta.decode leaves for resolve_references


def answer_json(response: ActionResponse, actions: list[Action], answers: list[tuple[dict[str, Any], int]]) -> dict[str, Any]:
    """An answer appended to a pending request, as a boundary writes it: its data, when it is the
    very JSON of a run recorded since the last boundary (`answers`: each such JSON and its run's
    seq, from RunRecords), as that run's seq, and its action, when it is one of the request's own
    `actions`, as its place there. A tool's answer is then a few bytes instead of its run again
    and its action again; resolve_references reads them back."""
    fields = response.__dict__
    action, data = fields["action"], fields["data"]
    action_json: dict[str, Any] | None = None
    for at, candidate in enumerate(actions):
        if candidate is action:
            action_json = {MARK: ACTION_AT, "at": at}
            break
    for json, seq in answers:
        if json is data:
            data = {MARK: ANSWERED_BY, "seq": seq}
            break
    return {"action": action.to_json(shared=True) if action_json is None else action_json, "data": data}


def requested_entry(entry: StackEntry, actions: list[Action] | None) -> dict[str, Any] | None:
    """The reference that stands for `entry` (a StackEntry), None when it is not one: the entry
    of a tool the engine pushed for an action of the request `actions` (the nearest entry below
    it that waits on one: Execution._push_request puts them right above it), unchanged since
    (revision 0; any change moves it). Its JSON is then the action's and the requester's fields,
    as `_requested_json` makes it again."""
    fields = entry.__dict__
    if actions is None or fields["revision"] != 0 or fields["mode"] != "tool":
        return None
    action = fields["action"]
    for at, candidate in enumerate(actions):
        if candidate is action:
            return {MARK: REQUESTED, "at": at}
    return None


def _requested_json(reference: dict[str, Any], requester: dict[str, Any]) -> dict[str, Any]:
    """StackEntry.to_json(for_store=True) of the tool entry `reference` stands for, made as
    Execution._push_request made the entry from its `requester`'s fields and action."""
    action = requester["pending"]["request"]["actions"][reference["at"]]
    metadata = action["metadata"]
    parent = {"node": requester["node"], "runIndex": requester.get("runIndex"), "iteration": requester["round"],
              "itemIndex": metadata.get("itemIndex", 0), "toolCallId": action["id"],
              "toolName": metadata.get("toolName", action["nodeName"])}
    if requester.get("parent") is not None:
        parent["parent"] = requester["parent"]
    return {"node": action["nodeName"], "source": [], "mode": "tool", "action": action, "parent": parent, "round": 0,
            "modelUsage": {}, "edits": [], "replayed": False, "pinned": False, "input": [{"json": action["input"]}]}


def resolve_references(entries: list[dict[str, Any]], run_json: Callable[[int], Any]) -> list[dict[str, Any]]:
    """Stack entries (JSON) with every reference a boundary wrote made whole again: a tool's
    entry written as its request's action (requested_entry), and an answer written by
    answer_json (its action from the request, its data from `run_json(seq)`). Entries without
    references are returned themselves; the others are new (decoded values may share their
    containers). A marked entry, action or answer of another kind is an UnknownDelta."""
    out = []
    requester = None  # the nearest entry so far that waits on a request
    for entry in entries:
        if type(entry) is dict and MARK in entry:
            if entry[MARK] != REQUESTED:
                raise UnknownDelta(f"a stack entry of a kind this mini-n8n does not know ({entry[MARK]!r})")
            if requester is None:
                raise KeyError("a tool's entry refers to a request below it, and none is there")
            entry = _requested_json(entry, requester)
        pending = entry.get("pending") if type(entry) is dict else None
        responses = pending.get("responses") if type(pending) is dict else None
        if responses and any(_written_by_reference(r) for r in responses):
            actions = pending["request"]["actions"]
            whole = [_resolved(r, actions, run_json) for r in responses]
            entry = {**entry, "pending": {**pending, "responses": whole}}
        if pending is not None:
            requester = entry
        out.append(entry)
    return out


def _marked(value: Any) -> bool:
    return type(value) is dict and MARK in value


def _written_by_reference(response: Any) -> bool:
    return type(response) is dict and (_marked(response.get("action")) or _marked(response.get("data")))


def _resolved(response: Any, actions: list[Any], run_json: Callable[[int], Any]) -> Any:
    if not _written_by_reference(response):
        return response
    action, data = response["action"], response["data"]
    if _marked(action):
        if action[MARK] != ACTION_AT:
            raise UnknownDelta(f"an answer's action of a kind this mini-n8n does not know ({action[MARK]!r})")
        action = actions[action["at"]]
    if _marked(data):
        if data[MARK] != ANSWERED_BY:
            raise UnknownDelta(f"an answer of a kind this mini-n8n does not know ({data[MARK]!r})")
        data = run_json(data["seq"])
    return {**response, "action": action, "data": data}


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
    """The one item of a model run's input ({"ai_languageModel": [[item]]}), else None. Taken by
    unpacking (one step where checking each level's type and length took five): any other shape
    fails to unpack or yields no dict with a "json" dict, and run_delta writes the item back as lists."""
    if type(inputs) is not dict or len(inputs) != 1:
        return None
    try:
        ((item,),) = inputs[AI_LANGUAGE_MODEL]
    except (KeyError, TypeError, ValueError):
        return None
    return item if type(item) is dict and type(item.get("json")) is dict else None
