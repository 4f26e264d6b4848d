"""Boundaries inside an Agent's tool loop, left out: a resume goes over the loop again from its runs.

A boundary written with an Agent waiting on a request (the loop's anchor) is followed, round
after round, by boundaries that differ from it only in that Agent's entry (its round, model usage
and request) and the tool entries its request pushed. What changes them is written anyway, as
runs: the model's replies and the tools' results. So while the loop goes on as that boundary left
it — the same entries under the Agent, only tool entries above it, no runs waiting for inputs and
no node context, and every run since a model call or tool run of that Agent that can be served
again (engine.resume_runs.servable) — a boundary is not written; the runs are, as always. A
resumed execution starts from the anchor's boundary and is served those runs in order
(engine.resume_runs.RecordedAhead): no model call is made again and no tool runs again, so a
SIGKILL still loses at most the node that was running. Any other run, a pause or any other change
of the execution's status writes the next boundary.
"""

from __future__ import annotations

from typing import Any

from ..run_data import StackEntry


class LoopAnchor:
    """The lowest entry waiting on a request at the last boundary written, and the entries under it
    with their revisions then."""

    __slots__ = ("index", "entry", "agent", "below")

    def __init__(self, index: int, entry: StackEntry, below: list[tuple[StackEntry, int]]) -> None:
        self.index = index
        self.entry = entry
        fields = entry.__dict__
        self.agent: tuple[str, int | None] = (fields["node"], fields["run_index"])  # as its loop's runs name it
        self.below = below


def loop_anchor(stack: list[StackEntry]) -> LoopAnchor | None:
    """The anchor a boundary written with `stack` sets (None when no entry waits on a request)."""
    for index, entry in enumerate(stack):
        if entry.__dict__["pending"] is not None:
            return LoopAnchor(index, entry, [(below, below.__dict__["revision"]) for below in stack[:index]])
    return None


def inside_loop(fields: dict[str, Any], anchor: LoopAnchor) -> bool:
    """Whether the execution (its state's __dict__) is still in `anchor`'s loop as its boundary
    left it, so that a boundary now can be left out (its runs since then all servable: the caller's
    part)."""
    if fields["waiting"] or fields["node_context"]:
        return False
    stack = fields["stack"]
    index = anchor.index
    if len(stack) <= index:
        return False
    entry = stack[index]
    if entry is not anchor.entry or entry.__dict__["pending"] is None:
        return False
    for now, (then, revision) in zip(stack, anchor.below):
        if now is not then or now.__dict__["revision"] != revision:
            return False
    for above in stack[index + 1:]:
        above_fields = above.__dict__
        if above_fields["mode"] != "tool" or above_fields["pending"] is not None:
            return False
    return True
