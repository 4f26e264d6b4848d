"""The run log: one line per node run, as the CLI prints it and the GUI's Run log tab shows it.

`[  129 ms] Model      out={...}`; tool runs also show `in={...}`. Times are from the start
of the execution to the end of the node run.
"""

import json
from typing import Any, Callable, NamedTuple

from .connection_types import AI_TOOL, MAIN
from .hooks import HookEvent, NodeAfter, WorkflowBefore
from .run_data import TaskData


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _items_json(outputs: list[list[dict[str, Any]]]) -> Any:
    items = [item.get("json", {}) for item in (outputs[0] if outputs else [])]
    return items[0] if len(items) == 1 else items


def _summary(task: TaskData) -> tuple[Any | None, Any]:
    """(input shown with `in=`, output shown with `out=`) for one node run."""
    shown_in = None
    if AI_TOOL in task.input:
        shown_in = _items_json(task.input[AI_TOOL])
    for conn, outputs in task.data.items():
        value = _items_json(outputs)
        if conn != MAIN and isinstance(value, dict) and "messages" in value:
            value = {k: v for k, v in value.items() if k != "messages"}
        return shown_in, value
    return shown_in, {}


class RunLogLine(NamedTuple):
    """One line of the run log, with the node it is about (the GUI makes the name clickable)."""

    elapsed_ms: float
    node: str
    run_index: int
    status: str
    text: str
    depth: int = 0


def format_line(node: str, task: TaskData, elapsed_ms: float, depth: int = 0) -> str:
    shown_in, out = _summary(task)
    name = ("  " * depth + node).ljust(10)
    parts = [f"[{elapsed_ms:5.0f} ms] {name}"]
    if shown_in is not None:
        parts.append(f"in={compact(shown_in)}")
    if task.error is not None:
        parts.append(f"error={compact(task.error.message)}")
    else:
        parts.append(f"out={compact(out)}")
    for note in task.metadata.get("notes") or ():  # a version mapped, a difference from n8n
        parts.append(f"note={compact(note)}")
    return " ".join(parts)


def _depth(parent: dict[str, Any] | None) -> int:
    depth = 0
    while parent:
        depth += 1
        parent = parent.get("parent")
    return max(0, depth - 1)


class RunLog:
    """A hook listener that turns node_after events into run-log lines."""

    def __init__(self, on_line: Callable[[RunLogLine], None] | None = None) -> None:
        self.lines: list[RunLogLine] = []
        self._start: float | None = None
        self._on_line = on_line

    def __call__(self, event: HookEvent) -> None:
        if isinstance(event, WorkflowBefore):
            self._start = None
        elif isinstance(event, NodeAfter):
            task = event.task
            if self._start is None:
                self._start = task.start_time
            end = task.start_time + task.execution_time
            depth = _depth(event.parent)
            line = RunLogLine(end - self._start, event.node, event.run_index, task.execution_status,
                              format_line(event.node, task, end - self._start, depth), depth)
            self.lines.append(line)
            if self._on_line is not None:
                self._on_line(line)

    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)
