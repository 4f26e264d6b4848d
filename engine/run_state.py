"""What a run looks like, folded from its hook events: every node's state, the chat transcript
and the steps table's rows, with the run-log lines.

The editor renders a RunState and decides nothing itself. A live run, a resumed run, a re-run
or replay, and a stored execution opened later all come out of the same fold, so they look
the same: a node's state follows from its runs (open, finished, failed, pinned) and from where
the run is paused, never from the order in which pauses and continues happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

from .hooks import (
    ExecutionPaused, ExecutionResumed, HookEvent, NodeAfter, NodeBefore, RunUpdated, TokenEvent, WorkflowAfter,
    WorkflowBefore,
)
from .run_log import RunLogLine, format_line
from .run_data import ENDED
from .run_outcome import RunOutcome, chat_message_of
from .steps_table import StepBook, StepsDiff

if TYPE_CHECKING:
    from .run_data import ExecutionState, TaskError

CANCELLED_NOTE = "Execution was cancelled"
UNFINISHED_NOTE = "did not finish"
STOPPED_REPLY = "Stopped: the run was cancelled"


class NodeState(NamedTuple):
    """One node in one run: idle, running, paused, success, error or pinned; its finished runs
    and the error of its last run (or why an unfinished run ended)."""

    status: str = "idle"
    runs: int = 0
    error: str | None = None


IDLE = NodeState()


@dataclass
class ChatTurn:
    """One bubble of a run's conversation: the user's message, the agent's reply, an error."""

    role: str  # "user", "assistant", "error"
    text: str
    streaming: bool = False
    empty: bool = False  # an answer with no text: shown as such, never dropped


@dataclass
class RunChanges:
    """What changed since the last `RunState.take_changes()`, for the views to apply at once."""

    nodes: dict[str, NodeState] = field(default_factory=dict)
    steps: StepsDiff = field(default_factory=StepsDiff)
    lines: list[RunLogLine] = field(default_factory=list)
    chat: bool = False
    pause: bool = False
    finished: bool = False

    @property
    def empty(self) -> bool:
        return not (self.nodes or self.steps or self.lines or self.chat or self.pause or self.finished)


def _depth(parent: dict[str, Any] | None) -> int:
    depth = 0
    while parent:
        depth += 1
        parent = parent.get("parent")
    return max(0, depth - 1)


def _top_level(parent: dict[str, Any] | None) -> bool:
    return parent is None or parent.get("parent") is None


class RunState:
    """One execution as the editor shows it; `apply(event)` folds a hook event in."""

    def __init__(self, execution_id: str = "", *, workflow_name: str = "", start_node: str = "",
                 message: str | None = None, mode: str = "manual", started_at: float | None = None) -> None:
        self.execution_id = execution_id
        self.workflow_name = workflow_name
        self.start_node = start_node
        self.message = message
        self.mode = mode
        self.status = "running"
        self.pause: dict[str, Any] | None = None
        self.error: TaskError | None = None
        self.answer: str | None = None
        self.steps = StepBook()
        self.lines: list[RunLogLine] = []
        self.chat: list[ChatTurn] = []
        self._runs: dict[str, int] = {}
        self._open: dict[str, int] = {}
        self._last: dict[str, tuple[str, str | None]] = {}  # the last finished run: (status, error)
        self._ended: dict[str, str] = {}  # runs the end of the execution left open: why
        self._started_at = started_at
        self._stream_scope: Any = None
        self._changed: set[str] = set()
        self._new_lines: list[RunLogLine] = []
        self._chat_changed = False
        self._pause_changed = False
        self._finished_changed = False
        if message is not None:
            self.chat = [ChatTurn("user", message), ChatTurn("assistant", "", streaming=True)]
            self._chat_changed = True

    # ----- reading -------------------------------------------------------------------------------
    def node(self, name: str) -> NodeState:
        runs = self._runs.get(name, 0)
        if self.pause is not None and self.pause.get("node") == name:
            return NodeState("paused", runs)
        if self._open.get(name):
            return NodeState("running", runs)
        if name in self._ended:
            return NodeState("error", runs, self._ended[name])
        last = self._last.get(name)
        if last is None:
            return IDLE
        return NodeState(last[0], runs, last[1])

    @property
    def nodes(self) -> dict[str, NodeState]:
        """Every node that is not idle, with its state."""
        names = {*self._runs, *self._open, *self._ended}
        if self.pause is not None and self.pause.get("node"):
            names.add(str(self.pause["node"]))
        return {name: self.node(name) for name in names}

    # ----- folding events ------------------------------------------------------------------------
    def apply_all(self, events: Iterable[HookEvent]) -> None:
        for event in events:
            self.apply(event)

    def apply(self, event: HookEvent) -> None:
        if isinstance(event, NodeAfter):
            self._node_after(event)
        elif isinstance(event, NodeBefore):
            self._open[event.node] = self._open.get(event.node, 0) + 1
            self._ended.pop(event.node, None)
            self._changed.add(event.node)
        elif isinstance(event, TokenEvent):
            if _top_level(event.parent):
                self._token(event)
        elif isinstance(event, ExecutionPaused):
            self._set_pause(dict(event.where))
            self.status = "paused"
        elif isinstance(event, ExecutionResumed):
            self._set_pause(None)
            self.status = "running"
        elif isinstance(event, RunUpdated):
            self.steps.update(event.node, event.task)
        elif isinstance(event, WorkflowBefore):
            self.execution_id = event.execution_id
            self.workflow_name = event.workflow_name
            self.status = "running"
            self._set_pause(None)  # a resumed execution leaves its stored pause point
        elif isinstance(event, WorkflowAfter):
            self.error = event.error

    def _node_after(self, event: NodeAfter) -> None:
        name, task = event.node, event.task
        open_runs = self._open.get(name, 0)
        if open_runs > 1:
            self._open[name] = open_runs - 1
        else:
            self._open.pop(name, None)
        self._runs[name] = self._runs.get(name, 0) + 1
        if task.error is not None or task.execution_status == "error":
            self._last[name] = ("error", task.error.message if task.error is not None else None)
        else:
            self._last[name] = ("pinned" if task.metadata.get("pinned") else "success", None)
        self._changed.add(name)
        self.steps.feed(event)
        if self._started_at is None:
            self._started_at = task.start_time
        elapsed = task.start_time + task.execution_time - self._started_at
        depth = _depth(event.parent)
        line = RunLogLine(elapsed, name, event.run_index, task.execution_status,
                          format_line(name, task, elapsed, depth), depth)
        self.lines.append(line)
        self._new_lines.append(line)

    def _token(self, event: TokenEvent) -> None:
        reply = self._reply()
        if reply is None:
            return
        parent = event.parent or {}
        scope = (event.node, parent.get("iteration"), parent.get("itemIndex"))
        if scope != self._stream_scope:  # a new model call: its text replaces the last one's
            self._stream_scope = scope
            reply.text = ""
        reply.text += event.text
        self._chat_changed = True

    def _reply(self) -> ChatTurn | None:
        return next((t for t in reversed(self.chat) if t.role == "assistant" and t.streaming), None)

    def _set_pause(self, where: dict[str, Any] | None) -> None:
        if where == self.pause:
            return
        for point in (self.pause, where):
            if point is not None and point.get("node"):
                self._changed.add(str(point["node"]))
        self.pause = where
        self._pause_changed = True

    # ----- the end -------------------------------------------------------------------------------
    def finish(self, outcome: RunOutcome) -> None:
        """The run has ended (or was left paused): settle the nodes, the steps and the reply."""
        self.status = outcome.status
        self.error = outcome.error
        self.answer = outcome.answer
        self._finished_changed = True
        if outcome.status == "paused":  # left stored at its pause point, to resume later
            state = outcome.state
            self._set_pause(dict(state.pause) if state is not None and state.pause else self.pause)
            self._end_reply(None, None)
            return
        self._set_pause(None)
        note = CANCELLED_NOTE if outcome.status == "cancelled" else UNFINISHED_NOTE
        for name in list(self._open):
            self._ended[name] = note
            self._changed.add(name)
        self._open.clear()
        self.steps.finish("cancelled" if outcome.status == "cancelled" else "not run")
        if outcome.status == "success":
            self._end_reply(outcome.answer if outcome.answer is not None else "", None)
        elif outcome.status == "cancelled":
            self._end_reply(None, STOPPED_REPLY)
        else:
            error = outcome.error
            where = f"[{error.node}] " if error is not None and error.node else ""
            self._end_reply(None, f"{where}{error.message if error is not None else 'the run failed'}")

    def _end_reply(self, answer: str | None, error: str | None) -> None:
        reply = self._reply()
        if reply is not None:
            reply.streaming = False
            if answer is not None:
                reply.text = answer
                reply.empty = not answer.strip()
            elif not reply.text:  # no answer (paused, stopped or failed) and nothing streamed
                self.chat.remove(reply)
        if error and self.message is not None:
            self.chat.append(ChatTurn("error", error))
        self._chat_changed = True

    # ----- changes -------------------------------------------------------------------------------
    def take_changes(self) -> RunChanges:
        """What changed since the last call (node states, new step rows, run-log lines, chat)."""
        changes = RunChanges(
            nodes={name: self.node(name) for name in self._changed},
            steps=self.steps.take_diff(),
            lines=self._new_lines,
            chat=self._chat_changed,
            pause=self._pause_changed,
            finished=self._finished_changed,
        )
        self._changed = set()
        self._new_lines = []
        self._chat_changed = self._pause_changed = self._finished_changed = False
        return changes

    # ----- a stored execution --------------------------------------------------------------------
    @classmethod
    def of_stored(cls, state: ExecutionState, events: Iterable[NodeAfter]) -> RunState:
        """The run as it was shown live, from the store: its runs, the nodes still running at its
        last boundary (the stack), its pause point and, when it ended, its outcome."""
        run = cls(state.id, workflow_name=state.workflow.name, start_node=state.start_node or "",
                  message=chat_message_of(state), mode=state.mode, started_at=state.started_at)
        run.apply_all(events)
        for entry in state.stack:
            if entry.round > 0:  # started, waiting for its tools: the run stands inside it
                run._open[entry.node] = run._open.get(entry.node, 0) + 1
                run._changed.add(entry.node)
        if state.status in ENDED:
            run.finish(RunOutcome.of(state))
        else:
            run.status = state.status
            if state.status == "paused" and state.pause:
                run._set_pause(dict(state.pause))
                agent = state.pause.get("agent")  # paused inside an agent's call, past its last boundary
                if agent and not run._open.get(agent):
                    run._open[agent] = 1
                    run._changed.add(agent)
        return run
