"""Runs recorded after the boundary an execution resumes from, served again instead of made again.

Inside an Agent's tool loop the store writes no boundary (engine.store.loop_boundaries): every
change the loop makes to the stack follows from the model replies and tool results it records
as runs. A resumed execution starts from the last boundary written, and the Agent's loop goes
over the same places again: each model call and tool run recorded there is served from its run,
as it was recorded (its times included), in the order it was made; the model is not asked again
and the tool does not run again. Only runs of the kinds the loop records (`servable`) are kept for
this; the first other run, and everything after it, belongs to the node that was running and is
made again.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from .connection_types import AI_LANGUAGE_MODEL, AI_TOOL
from .errors import NodeOperationError
from .run_data import TaskData

_NOT_SERVED = frozenset(("parent", "edits", "pinned", "replayed"))  # a nested agent's run, or one not made as recorded


def waiting_agent(stack: list[Any]) -> tuple[str, int | None] | None:
    """(node, run index) of the lowest entry of a stack (its JSON) that waits on a request: the Agent
    whose loop the runs after a boundary belong to; None when no entry waits."""
    for entry in stack:
        if type(entry) is dict and entry.get("pending") is not None:
            return entry.get("node"), entry.get("runIndex")
    return None


def servable(task: Any, agent: tuple[str, int | None] | None) -> bool:
    """Whether a run (its JSON) can be served again to `agent`'s loop on resume: a successful model
    call or tool run made for that Agent's run itself (not for an agent nested in a tool), neither
    edited, pinned nor itself served by a replay."""
    if agent is None or type(task) is not dict:
        return False
    metadata = task.get("metadata")
    if (type(metadata) is not dict or metadata.get("node") != agent[0] or metadata.get("runIndex") != agent[1]
            or not _NOT_SERVED.isdisjoint(metadata)):
        return False
    if task.get("executionStatus") != "success" or task.get("error") is not None:
        return False
    inputs = task.get("input")
    return type(inputs) is dict and (AI_LANGUAGE_MODEL in inputs or AI_TOOL in inputs)


def servable_prefix(runs: list[tuple[Any, ...]], agent: tuple[str, int | None] | None) -> list[tuple[Any, ...]]:
    """The first runs of `runs` (tuples ending with the run's JSON) that `servable` accepts."""
    kept = []
    for run in runs:
        if not servable(run[-1], agent):
            break
        kept.append(run)
    return kept


class RecordedAhead:
    """The runs a resumed execution serves again, in the order they were recorded: (node, run index, task)."""

    def __init__(self, runs: list[tuple[str, int, TaskData]]) -> None:
        self._runs = deque(runs)

    def __len__(self) -> int:
        """How many are still to serve."""
        return len(self._runs)

    def next_is(self, node: str) -> bool:
        """Whether the next run to serve is one of `node`."""
        return bool(self._runs) and self._runs[0][0] == node

    def take(self, node: str, run_index: int, parent: dict[str, Any] | None) -> TaskData | None:
        """The recorded run for this call of `node` (None once all are served). The call must be
        the one recorded next, at the same place: anything else is an error naming both, as the
        loop has gone another way than it went before and its recorded runs no longer fit."""
        if not self._runs:
            return None
        recorded_node, recorded_index, task = self._runs[0]
        wanted = _place(parent)
        if recorded_node != node or recorded_index != run_index or _place(task.metadata) != wanted:
            raise NodeOperationError(
                f'Resuming: node "{node}" (run {run_index}, {wanted}) was called where the run recorded next is'
                f' "{recorded_node}" (run {recorded_index}, {_place(task.metadata)}): the execution cannot go on as it went',
                node=node)
        self._runs.popleft()
        return task


def _place(where: dict[str, Any] | None) -> str:
    """Where a call was made, as its run's metadata and its parent both say it."""
    where = where or {}
    return ", ".join(f"{key} {where[key]}" for key in ("node", "runIndex", "iteration", "itemIndex", "toolCallId")
                     if where.get(key) is not None)
