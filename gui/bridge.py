"""The GUI's one door to the engine: document access and rules here, runs in `RunBridge` below.

Every other module of `gui/` imports engine things from this module only, so the boundary
between the Qt editor and the headless core stays in one place.
"""

from __future__ import annotations

from engine.connection_types import (
    AI_LANGUAGE_MODEL,
    AI_MEMORY,
    AI_OUTPUT_PARSER,
    AI_TOOL,
    ALL_TYPES,
    MAIN,
    SUB_NODE_TYPES,
    PortSpec,
)
from engine.editing import (
    DocumentEditor, EditError, Link, ParamPath, copy_connections, links_of, new_workflow, unique_name,
)
from engine.errors import MiniN8nError, WorkflowFileError
from engine.processes import pid_alive
from engine.node_type import NodeType, UnsupportedNodeType
from engine.registry import Registry, builtin_registry
from engine.rules import connection_refusal, node_problems, port_name, workflow_problems
from engine.pin_data import pin, pinned_items, unpin
from engine.versions import version_note
from engine.workflow import (
    ConnectionTarget,
    Node,
    Workflow,
    dump_workflow,
    load_workflow,
    load_workflow_text,
    parse_workflow,
    save_workflow,
    workflow_to_data,
)

__all__ = [
    "AI_LANGUAGE_MODEL", "AI_MEMORY", "AI_OUTPUT_PARSER", "AI_TOOL", "ALL_TYPES", "MAIN", "SUB_NODE_TYPES",
    "PortSpec", "MiniN8nError", "WorkflowFileError", "pid_alive", "NodeType", "UnsupportedNodeType", "Registry",
    "builtin_registry", "connection_refusal", "node_problems", "port_name", "workflow_problems",
    "ConnectionTarget", "Node", "Workflow", "dump_workflow", "load_workflow", "load_workflow_text",
    "parse_workflow", "save_workflow", "workflow_to_data",
    "DocumentEditor", "EditError", "Link", "ParamPath", "copy_connections", "links_of", "unique_name", "new_workflow",
    "credential_store", "credential_types_of",
]


def credential_store():  # type: ignore[no-untyped-def]
    """The local credential store (the user's credential file, then the environment)."""
    from engine.credentials import default_credential_store

    return default_credential_store()


def credential_types_of(node_type: NodeType) -> tuple[str, ...]:
    """The credential types a node type reads (offered by the inspector's credential picker)."""
    return tuple(node_type.credential_types)

# ----- running workflows (RunBridge: engine hook events -> Qt signals) ------------------------

import asyncio  # noqa: E402
import gc  # noqa: E402
import logging  # noqa: E402
import threading  # noqa: E402
import uuid  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Callable  # noqa: E402

from PySide6.QtCore import QObject, QTimer, Signal  # noqa: E402

from engine.abort import AbortSignal  # noqa: E402
from engine.cli import answer_of, open_engine, prepare_rerun  # noqa: E402
from engine.debugger import Breakpoints, Debugger  # noqa: E402
from engine.executor import Engine, Execution  # noqa: E402
from engine.hooks import (  # noqa: E402
    ExecutionPaused,
    ExecutionResumed,
    HookEvent,
    Hooks,
    NodeAfter,
    NodeBefore,
    RunUpdated,
    TokenEvent,
    WorkflowAfter,
    WorkflowBefore,
)
from engine.observation import observation as tool_observation  # noqa: E402
from engine.replay import ReplaySource  # noqa: E402
from engine.store import ExecutionStore, ExecutionSummary  # noqa: E402
from engine.run_data import ExecutionState, TaskData, TaskError  # noqa: E402
from engine.expressions.preview import expression_preview  # noqa: E402
from engine.run_log import RunLog, RunLogLine, compact  # noqa: E402
from engine.steps_table import FINAL_ANSWER, StepBook, StepRow, rows_to_csv, rows_to_json  # noqa: E402
from engine.start import StartError, is_pinned, is_trigger, read_input, unsupported_message, unsupported_on_path  # noqa: E402
from nodes.triggers.chat_trigger import chat_item  # noqa: E402

__all__ += [
    "AbortSignal", "Breakpoints", "Debugger", "ReplaySource",
    "ExecutionStore", "ExecutionSummary", "Engine", "Execution", "ExecutionPaused", "ExecutionResumed",
    "HookEvent", "Hooks", "NodeAfter", "NodeBefore", "RunUpdated", "TokenEvent", "WorkflowAfter", "WorkflowBefore",
    "ExecutionState", "TaskData", "TaskError", "RunLog", "RunLogLine", "compact", "tool_observation", "chat_item",
    "FINAL_ANSWER", "StepBook", "StepRow", "rows_to_csv", "rows_to_json",
    "answer_of", "RunBridge", "RunStart", "RunOutcome", "new_session_id", "is_chat_trigger", "full_collections_held",
    "StartError", "is_pinned", "is_trigger",
]

log = logging.getLogger(__name__)

SLICE_MS = 4.0
"""The engine runs at most this long before the Qt loop gets a turn (paint, input, timers)."""

FLUSH_MS = 25
"""Hook events reach the panels in batches at most this often, so a long run never floods the UI."""


class FullCollectionsHeld:
    """Keeps Python's full (generation-2) garbage collection from pausing the loop mid-run.

    A long run records every message each model call received, so the heap grows by hundreds
    of thousands of objects; a full collection then stalls the window for hundreds of ms.
    While any run is going, only the young generations are collected; when the last run ends
    the surviving objects are frozen (gc.freeze), so later collections do not scan them again.
    """

    def __init__(self) -> None:
        self._runs = 0
        self._saved: tuple[int, int, int] | None = None

    def __enter__(self) -> None:
        if self._runs == 0:
            self._saved = gc.get_threshold()
            gc.set_threshold(self._saved[0], self._saved[1], 1_000_000_000)
        self._runs += 1

    def __exit__(self, *_exc: object) -> None:
        self._runs -= 1
        if self._runs == 0 and self._saved is not None:
            gc.set_threshold(*self._saved)
            gc.freeze()


full_collections_held = FullCollectionsHeld()
"""Enter while a run fills the panels (RunBridge does); nests across runs of several windows."""


def new_session_id() -> str:
    return uuid.uuid4().hex


def is_chat_trigger(node: Node) -> bool:
    return node.type.endswith(".chatTrigger")


@dataclass(frozen=True)
class RunStart:
    """A run has begun: which execution, from which node, with which chat message (if any)."""

    execution_id: str
    workflow_name: str
    start_node: str
    message: str | None = None
    session_id: str | None = None
    mode: str = "manual"


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended: status (success/error/cancelled), error, final state and chat answer."""

    status: str
    error: TaskError | None
    state: ExecutionState | None
    answer: str | None = None
    message: str | None = None


class RunBridge(QObject):
    """Runs workflows on the asyncio loop inside Qt and turns engine hook events into Qt signals.

    One bridge (and one Engine) per window, so Simple Memory keeps a session's conversation
    between messages. Events arrive in batches (`events`, `log_lines`) every FLUSH_MS. The
    engine stores every execution (engine.store), so runs can be reopened, resumed and re-run.
    """

    run_started = Signal(object)  # RunStart
    events = Signal(list)  # list[HookEvent], in order
    log_lines = Signal(list)  # list[RunLogLine]
    run_finished = Signal(object)  # RunOutcome
    run_failed = Signal(str)  # a problem that kept the run from starting or broke it
    busy_changed = Signal(bool)

    def __init__(self, registry: Registry | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = open_engine(registry)
        self.debugger: Debugger | None = None  # set for a debug run: breakpoints and stepping
        self.replay_source: ReplaySource | None = None  # the recorded results of the last re-run or replay
        self._pending: list[HookEvent] = []
        self._pending_lines: list[RunLogLine] = []
        self._run_log = RunLog(on_line=self._pending_lines.append)  # a fresh one for each run
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self.flush)
        self._task: asyncio.Task[RunOutcome] | None = None
        self._signal: AbortSignal | None = None
        self._execution: Execution | None = None
        self._recorded: list[HookEvent] = []
        self._workflow_started = False
        self._thread = threading.get_ident()
        self._loop: asyncio.AbstractEventLoop | None = None

    # ----- state ---------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def state(self) -> ExecutionState | None:
        """The state of the current or last execution (its run data feeds the Node data tab)."""
        return self._execution.state if self._execution is not None else None

    @property
    def task(self) -> asyncio.Task[RunOutcome] | None:
        return self._task

    @property
    def store(self) -> ExecutionStore:
        return self.engine.store  # type: ignore[no-any-return]

    @property
    def paused(self) -> bool:
        """The running execution waits at a pause point of the debugger."""
        return self.running and self.debugger is not None and self.debugger.is_paused

    # ----- starting and stopping -----------------------------------------------------------------
    def send_chat(self, workflow: Workflow, message: str, session_id: str) -> asyncio.Task[RunOutcome] | None:
        """Run `workflow` from its Chat Trigger with one chat message of `session_id`."""
        return self._start(lambda: self._create(workflow, message, session_id), message, session_id)

    def run_manual(self, workflow: Workflow) -> asyncio.Task[RunOutcome] | None:
        """Run `workflow` from its first trigger (the toolbar's Run)."""
        return self._start(lambda: self._create(workflow, None, None), None, None)

    def run_from_trigger(self, workflow: Workflow, trigger: str, input_json: str | None) -> asyncio.Task[RunOutcome] | None:
        """Run `workflow` from the trigger `trigger`, as `mini-n8n run --trigger/--input` does: its
        output item(s) given as JSON (`input_json`), else its pinned data or its own run. Raises
        StartError, before anything runs, for bad JSON or a trigger that cannot start."""
        items = read_input(input_json) if input_json is not None else None
        start = self.engine.start_node(workflow, trigger=trigger, injected=items is not None)
        blocked = unsupported_on_path(workflow, self.engine.registry, start.name, injected=items is not None)
        if blocked:
            raise StartError(unsupported_message(blocked))
        return self._start(lambda: self.engine.create(
            workflow, start=start.name, items=items, hooks=Hooks(self._on_event), signal=self._fresh_signal(),
            mode="debug" if self.debugger is not None else "manual"), None, None)

    def resume(self, execution_id: str) -> asyncio.Task[RunOutcome] | None:
        """Continue a stored paused or crashed execution (with `debugger`, when set)."""
        def make() -> Execution:
            execution = self.engine.resume(execution_id, hooks=Hooks(self._on_event), signal=self._fresh_signal())
            self._recorded = self.store.events(execution.state.id)
            return execution
        return self._start(make, None, None)

    def rerun(self, execution_id: str, from_iteration: int) -> asyncio.Task[RunOutcome] | None:
        """A new execution that reuses a stored one's results up to `from_iteration`, live after."""
        return self._start(lambda: self._rerun(execution_id, from_iteration, False), None, None)

    def replay(self, execution_id: str) -> asyncio.Task[RunOutcome] | None:
        """Run a stored execution again on its recorded model replies; `replay_source.divergence`
        tells where the new run first differs."""
        return self._start(lambda: self._rerun(execution_id, None, True), None, None)

    def detach(self) -> bool:
        """Leave a paused execution stored as paused and end its task (the window closes)."""
        execution = self._execution
        if not self.paused or execution is None:
            return False
        execution.detach()
        return True

    def stop(self) -> None:
        """Stop the running execution: the engine's abort signal cancels its asyncio task."""
        if self._signal is not None:
            self._signal.abort()

    def _start(self, make: Callable[[], Execution], message: str | None,
               session_id: str | None) -> asyncio.Task[RunOutcome] | None:
        if self.running:
            self.run_failed.emit("A run is already going; stop it first")
            return None
        self._task = asyncio.ensure_future(self._run(make, message, session_id))
        self._loop = self._task.get_loop()
        return self._task

    async def _run(self, make: Callable[[], Execution], message: str | None, session_id: str | None) -> RunOutcome:
        self.busy_changed.emit(True)
        outcome = RunOutcome("error", TaskError(message="the run did not start"), None, message=message)
        try:
            self._recorded = []
            self._workflow_started = False
            self._run_log = RunLog(on_line=self._pending_lines.append)
            execution = make()
            execution.debugger = self.debugger
            self._execution = execution
            state = execution.state
            self.run_started.emit(RunStart(state.id, state.workflow.name, state.start_node or "", message, session_id,
                                           state.mode))
            if self._recorded:  # a resumed execution: what it did before, as it was shown live
                self._workflow_started = True
                for event in self._recorded:
                    self._on_event(event)
                self._recorded = []
            with full_collections_held:
                state = await self._drive(execution)
            answer = answer_of(state) if state.status == "success" else None
            outcome = RunOutcome(state.status, state.error, state, answer, message)
        except asyncio.CancelledError:  # cancelled outside the engine's own handling
            state = self.state
            if state is not None and state.status == "running":
                state.status = "cancelled"
            outcome = RunOutcome("cancelled", TaskError(message="Execution was cancelled"), state, None, message)
        except MiniN8nError as exc:
            self.run_failed.emit(str(exc))
            outcome = RunOutcome("error", TaskError(message=str(exc)), self.state, None, message)
        except Exception as exc:  # a bug must reach the user in the window, not only the console
            log.exception("run failed")
            text = f"{type(exc).__name__}: {exc}"
            self.run_failed.emit(text)
            outcome = RunOutcome("error", TaskError(message=text), self.state, None, message)
        finally:
            self.flush()
            self._signal = None
            self.run_finished.emit(outcome)
            self.busy_changed.emit(False)
        return outcome

    def _create(self, workflow: Workflow, message: str | None, session_id: str | None) -> Execution:
        if message is not None:
            start = self.engine.start_node(workflow, prefer_chat=True)
            if not is_chat_trigger(start):
                raise MiniN8nError(f'"{workflow.name}" has no Chat Trigger: run it from the toolbar instead')
            items = [chat_item(message, session_id)]
        else:
            start = self.engine.start_node(workflow)
            items = None
        return self.engine.create(
            workflow, start=start.name, items=items, hooks=Hooks(self._on_event), signal=self._fresh_signal(),
            mode="debug" if self.debugger is not None else "manual",
        )

    def _rerun(self, execution_id: str, from_iteration: int | None, compare: bool) -> Execution:
        execution, self.replay_source = prepare_rerun(
            self.engine, execution_id, from_iteration=from_iteration, compare=compare,
            hooks=Hooks(self._on_event), signal=self._fresh_signal(),
        )
        return execution

    def _fresh_signal(self) -> AbortSignal:
        self._signal = AbortSignal()
        return self._signal

    async def _drive(self, execution: Execution) -> ExecutionState:
        """Run it, letting the Qt loop have a turn at a node boundary every SLICE_MS."""
        execution.yield_interval_s = SLICE_MS / 1000.0
        return await execution.run()

    # ----- events --------------------------------------------------------------------------------
    def _on_event(self, event: HookEvent) -> None:
        if threading.get_ident() != self._thread and self._loop is not None:
            self._loop.call_soon_threadsafe(self._on_event, event)  # Qt objects live on the loop's thread
            return
        if isinstance(event, WorkflowBefore):
            if self._workflow_started:  # a resumed execution: its log goes on from what was shown
                return
            self._workflow_started = True
        self._run_log(event)
        self._pending.append(event)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def flush(self) -> None:
        """Hand the events gathered since the last flush to the panels."""
        self._flush_timer.stop()
        events, self._pending = self._pending, []
        lines = list(self._pending_lines)
        self._pending_lines.clear()
        if events:
            self.events.emit(events)
        if lines:
            self.log_lines.emit(lines)
