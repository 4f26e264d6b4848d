"""How a run ended and what it answered: the little a caller (the CLI, the editor) judges a run by,
kept apart from the run's fold (run_state) so that judging a run does not load the fold."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from .run_log import compact

if TYPE_CHECKING:
    from .run_data import ExecutionState, TaskError


def answer_of(state: ExecutionState) -> str | None:
    """The chat answer of a finished run: its last node's first item's `output` (as text)."""
    items = state.result or []
    if not items:
        return None
    data = items[0].get("json", {})
    if "output" in data:
        value = data["output"]
        return value if isinstance(value, str) else compact(value)
    return compact(data)


def chat_message_of(state: ExecutionState) -> str | None:
    """The chat message an execution started from, when it started from a Chat Trigger."""
    first = state.run_data.get(state.start_node or "", [])
    if first:
        items = first[0].input.get("main", [[]])[0]
    elif state.stack and state.stack[0].node == state.start_node:  # not run yet
        items = state.stack[0].input
    else:
        items = []
    text = items[0].get("json", {}).get("chatInput") if items else None
    return text if isinstance(text, str) else None


class RunOutcome(NamedTuple):
    """How a run ended: status (success/error/cancelled/paused), error, final state, chat answer
    and the chat message it answered."""

    status: str
    error: TaskError | None
    state: ExecutionState | None
    answer: str | None = None
    message: str | None = None

    @classmethod
    def of(cls, state: ExecutionState, message: str | None = None) -> RunOutcome:
        answer = answer_of(state) if state.status == "success" else None
        return cls(state.status, state.error, state, answer, message)
