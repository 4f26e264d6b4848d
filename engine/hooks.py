"""Lifecycle hook events: immutable records that the CLI, the GUI bridge and tests listen to.

They are named tuples, not frozen dataclasses: a frozen dataclass compiles six generated methods
when its module is imported (~1 ms each event type, a fortieth of a one-round `mini-n8n run`), a
named tuple one, and an event is built in a third of the time.
"""

import logging
from typing import Any, Callable, NamedTuple, Union

from .run_data import TaskData, TaskError

log = logging.getLogger(__name__)


class WorkflowBefore(NamedTuple):
    execution_id: str
    workflow_name: str
    resumed: bool = False


class NodeBefore(NamedTuple):
    execution_id: str
    node: str
    run_index: int
    parent: dict[str, Any] | None = None


class NodeAfter(NamedTuple):
    """A node run ended. `answer`: a tool run's TaskData as JSON, the very object handed to the
    request it answers (a store may write that answer as a reference to this run). `served`: a run
    recorded after the boundary a resumed execution started from, served again instead of made again
    (engine.resume_runs): told to the execution's store alone, which has it already."""

    execution_id: str
    node: str
    run_index: int
    task: TaskData
    parent: dict[str, Any] | None = None
    answer: dict[str, Any] | None = None
    served: bool = False


class TokenEvent(NamedTuple):
    """A streamed piece of a model reply; `node` is the model, `parent` the Agent that asked."""

    execution_id: str
    node: str
    text: str
    parent: dict[str, Any] | None = None


class WorkflowAfter(NamedTuple):
    execution_id: str
    status: str
    error: TaskError | None = None


class ExecutionPaused(NamedTuple):
    """The execution paused; `where` is the pause point (engine.debugger.PausePoint as JSON)."""

    execution_id: str
    where: dict[str, Any]


class ExecutionResumed(NamedTuple):
    """The execution left a pause point and runs again."""

    execution_id: str


class RunUpdated(NamedTuple):
    """A recorded run changed after its node_after event (an edit made while paused)."""

    execution_id: str
    node: str
    run_index: int
    task: TaskData


class ChunkSent(NamedTuple):
    """A chunk of a streamed response (engine/streaming.py), sent while the execution streams."""

    execution_id: str
    chunk: dict[str, Any]


HookEvent = Union[
    WorkflowBefore, NodeBefore, NodeAfter, TokenEvent, WorkflowAfter, ExecutionPaused, ExecutionResumed, RunUpdated,
    ChunkSent,
]
Listener = Callable[[HookEvent], None]


class Hooks:
    """A list of listeners; a listener that raises is logged and does not stop the run. A listener
    may name the event types it wants: the others are neither built for it nor sent to it."""

    def __init__(self, *listeners: Listener) -> None:
        self._listeners: list[tuple[Listener, tuple[type, ...] | None]] = [(listener, None) for listener in listeners]
        self._wanted: frozenset[type] = frozenset()
        self._update()

    def add(self, listener: Listener, kinds: tuple[type, ...] | None = None) -> Callable[[], None]:
        """Listen to every event, or to those of `kinds`; returns the function that stops it."""
        pair = (listener, kinds)
        self._listeners = [*self._listeners, pair]  # a new list: an emit going on goes on over the one it has
        self._update()

        def remove() -> None:
            if pair in self._listeners:
                self._listeners = [other for other in self._listeners if other is not pair]
                self._update()

        return remove

    def _update(self) -> None:
        wanted: set[type] = set()
        for _listener, kinds in self._listeners:
            wanted.update(_EVENT_TYPES if kinds is None else kinds)
        self._wanted = frozenset(wanted)

    @property
    def active(self) -> bool:
        """Whether anyone listens."""
        return bool(self._listeners)

    def wants(self, kind: type) -> bool:
        """Whether anyone listens to events of `kind`: the hot paths build their events only then."""
        return kind in self._wanted

    def emit(self, event: HookEvent) -> None:
        kind = type(event)
        for listener, kinds in self._listeners:
            if kinds is not None and kind not in kinds:
                continue
            try:
                listener(event)
            except Exception:  # a broken listener must not break the execution
                log.exception("hook listener failed on %s", kind.__name__)


StoredEvent = Union[NodeAfter, RunUpdated, WorkflowAfter]  # what an execution tells its store first (Execution.tell)
_EVENT_TYPES = HookEvent.__args__  # type: ignore[attr-defined]
