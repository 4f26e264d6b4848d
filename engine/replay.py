"""Re-running from recorded results: "re-run from here" and offline replay with divergence checks.

A ReplaySource indexes a finished execution's model replies and tool runs by where they were
made (agent, iteration, item, tool call). The engine asks it before each model call and tool
run; a recorded result is used instead of calling the model or running the tool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .chat import ModelReply
from .connection_types import AI_LANGUAGE_MODEL, AI_TOOL
from .errors import NodeOperationError
from .run_data import ExecutionState, StackEntry, TaskData

_PLACE_KEYS = ("node", "runIndex", "iteration", "itemIndex", "toolCallId")


def place(parent: dict[str, Any] | None) -> str:
    """A stable text key for where a call was made (its chain of parents, without timings)."""
    chain = []
    while parent:
        chain.append({k: parent.get(k) for k in _PLACE_KEYS if parent.get(k) is not None})
        parent = parent.get("parent")
    return json.dumps(chain, sort_keys=True)


def outer_iteration(parent: dict[str, Any] | None) -> int:
    """The iteration of the outermost agent a call belongs to (nested agents count as theirs)."""
    iteration = 0
    while parent:
        iteration = int(parent.get("iteration") or 0)
        parent = parent.get("parent")
    return iteration


@dataclass(frozen=True)
class Divergence:
    """The first place where a replayed run differs from the recorded one."""

    kind: str  # "model_input", "tool_output", "tool_error", "missing_reply"
    node: str
    iteration: int | None
    expected: Any
    actual: Any

    def describe(self) -> str:
        where = f"iteration {self.iteration}, " if self.iteration is not None else ""
        what = {
            "model_input": "the model would receive other messages",
            "tool_output": "the tool returned something else",
            "tool_error": "the tool failed or succeeded where it had not",
            "missing_reply": "the run asks the model something the recording never did",
        }.get(self.kind, self.kind)
        return f"Replay diverged at {where}node \"{self.node}\": {what} (recorded: {_short(self.expected)}; now: {_short(self.actual)})"


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ReplayDiverged(NodeOperationError):
    """Raised on the first divergence of a replay; the execution ends there with this error."""

    def __init__(self, divergence: Divergence) -> None:
        super().__init__(divergence.describe(), node=divergence.node)
        self.divergence = divergence


class ReplaySource:
    """Recorded results of one execution, served to a new one.

    `upto_iteration`: use recorded results only up to this outer iteration, then go live
    (re-run from here). `compare`: replay mode: tools run live and every model input and tool
    result is compared with the recording; the first difference ends the run.
    """

    def __init__(self, recorded: ExecutionState, *, upto_iteration: int | None = None, compare: bool = False) -> None:
        self.upto_iteration = upto_iteration
        self.compare = compare
        self.divergence: Divergence | None = None
        self._models: dict[tuple[str, str], TaskData] = {}
        self._tools: dict[str, TaskData] = {}
        for node, runs in recorded.run_data.items():
            for task in runs:
                meta = task.metadata
                if AI_LANGUAGE_MODEL in task.data or (AI_LANGUAGE_MODEL in task.input and task.error is not None):
                    self._models.setdefault((node, place(meta)), task)
                elif AI_TOOL in task.input and meta.get("toolCallId"):
                    self._tools.setdefault(place(meta), task)
        self.used_models = 0
        self.used_tools = 0

    def _in_range(self, parent: dict[str, Any] | None) -> bool:
        return self.upto_iteration is None or outer_iteration(parent) <= self.upto_iteration

    def _diverge(self, divergence: Divergence) -> None:
        self.divergence = divergence
        raise ReplayDiverged(divergence)

    def model_reply(self, node: str, parent: dict[str, Any], input_json: dict[str, Any]) -> ModelReply | None:
        """The recorded reply for this model call, or None to call the model."""
        if not self._in_range(parent):
            return None
        task = self._models.get((node, place(parent)))
        if task is None or task.error is not None:
            if self.compare:
                self._diverge(Divergence("missing_reply", node, parent.get("iteration"), None, input_json.get("messages")))
            return None
        if self.compare:
            recorded_messages = task.input[AI_LANGUAGE_MODEL][0][0]["json"].get("messages")
            if recorded_messages != input_json["messages"]:
                self._diverge(Divergence("model_input", node, parent.get("iteration"), recorded_messages, input_json["messages"]))
        self.used_models += 1
        return ModelReply.model_validate(task.data[AI_LANGUAGE_MODEL][0][0]["json"])

    def tool_run(self, entry: StackEntry) -> TaskData | None:
        """The recorded run of this tool call, or None to run the tool (always None in replay mode)."""
        if self.compare or not self._in_range(entry.parent):
            return None
        task = self._tools.get(place(entry.parent))
        if task is not None:
            self.used_tools += 1
        return task

    def check_tool(self, entry: StackEntry, task: TaskData) -> None:
        """In replay mode, compare a live tool run with the recording."""
        if not self.compare:
            return
        recorded = self._tools.get(place(entry.parent))
        if recorded is None:
            return
        iteration = (entry.parent or {}).get("iteration")
        if (recorded.error is None) != (task.error is None):
            expected = recorded.error.message if recorded.error else recorded.data.get(AI_TOOL)
            actual = task.error.message if task.error else task.data.get(AI_TOOL)
            self._diverge(Divergence("tool_error", entry.node, iteration, expected, actual))
        if task.error is None and recorded.data.get(AI_TOOL) != task.data.get(AI_TOOL):
            self._diverge(Divergence("tool_output", entry.node, iteration, _items(recorded), _items(task)))


def _items(task: TaskData) -> Any:
    outputs = task.data.get(AI_TOOL) or [[]]
    items = [i.get("json") for i in outputs[0]] if outputs else []
    return items[0] if len(items) == 1 else items
