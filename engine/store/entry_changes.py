"""An entry that waits on a request, back at its place on the stack after another run of its node
(an Agent's next round): its JSON made from the last boundary's with the fields such a run
changes (round, model usage, the pending request) made again, and its delta those fields alone
(json_delta.changed_keys), instead of the whole entry made and compared again. When any other
field changed, the entry is made whole as before.

The other fields are compared as the JSON shares them (engine.run_data.StackEntry.to_json):
the very objects for the items, the action and the parent (never changed in place), the sources
one by one, and the edits by their count (only ever appended to).
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from ..json_delta import changed_keys
from ..run_data import StackEntry, pending_json, usage_json
from .deltas import pending_delta


def kept_fields(entry: StackEntry) -> tuple[Any, ...] | None:
    """The fields other than round, model usage and pending request that an entry's JSON is made
    from, kept beside the JSON of an entry that waits on a request (the one kind that comes back
    to its place after a run); None for any other entry."""
    fields = entry.__dict__
    if fields["pending"] is None or fields["inputs"] is not None:
        return None
    return (*_KEPT(fields), tuple(fields["source"]), len(fields["edits"]), len(fields["input"]))


_KEPT = itemgetter("node", "mode", "action", "parent", "start_time", "run_index", "replayed", "pinned", "input")


def changed_entry(entry: StackEntry, old: dict[str, Any], kept: tuple[Any, ...] | None) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(JSON, delta) of `entry`, whose JSON at the last boundary was `old`, made from that with
    `kept` (kept_fields then); None when it cannot be: no fields kept, no request pending now or
    then, or a field other than round, model usage and pending request changed."""
    if kept is None or "pending" not in old:
        return None
    fields = entry.__dict__
    pending = fields["pending"]
    if pending is None or kept_fields(entry) != kept:
        return None
    new = dict(old)
    changes: dict[str, Any] = {}
    round_ = fields["round"]
    if round_ != old["round"]:
        new["round"] = changes["round"] = round_
    usage = usage_json(fields["model_usage"])
    if usage != old["modelUsage"]:
        new["modelUsage"] = changes["modelUsage"] = usage
    made = new["pending"] = pending_json(pending, True)
    changes["pending"] = pending_delta(made, old["pending"])
    return new, changed_keys(changes)
