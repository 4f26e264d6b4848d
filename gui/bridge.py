"""The GUI's one door to the engine: it runs workflows (`RunBridge`), opens the stored executions
and the credential store.

Only this module drives the engine: runs, stored executions, the store and the debugger. Other
modules of `gui/` import the engine's value types (the document, run data, run state, step rows)
from `engine` themselves; tests/gui/test_boundary.py holds them to it.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import uuid
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from PySide6.QtCore import QObject, QTimer, Signal

from engine import runs
from engine.abort import AbortSignal
from engine.debugger import Breakpoints, Debugger, PausePoint
from engine.errors import MiniN8nError, StoreFailed
from engine.hooks import HookEvent, Hooks
from engine.node_type import NodeType
from engine.registry import Registry
from engine.rules import problems_by_node
from engine.run_data import ExecutionState, Item, TaskError
from engine.run_outcome import RunOutcome
from engine.run_state import RunChanges, RunState
from engine.start import StartError, read_input, unsupported_message, unsupported_on_path
from engine.workflow import Node, Workflow

if TYPE_CHECKING:
    from engine.executor import Engine, Execution
    from engine.remote import Server, ServerBook
    from engine.replay import ReplaySource
    from engine.store import ExecutionSummary

__all__ = [
    "RunBridge", "RunStart", "StoredRun", "FullCollectionsHeld", "full_collections_held", "new_session_id",
    "credential_store", "credential_types_of", "credential_book", "credential_form", "node_warnings", "warnings_by_node",
]


def credential_store():  # type: ignore[no-untyped-def]
    """The local credential store (the user's credential file, then the environment)."""
    from engine.credentials import default_credential_store

    return default_credential_store()


def credential_types_of(node_type: NodeType) -> tuple[str, ...]:
    """The credential types a node type reads (offered by the inspector's credential picker)."""
    return tuple(node_type.credential_types)


def credential_book():  # type: ignore[no-untyped-def]
    """The Credentials dialog's access to the user's credential store (secrets masked)."""
    from engine.credential_book import CredentialBook

    return CredentialBook(credential_store())


def credential_form(cred_type: str):  # type: ignore[no-untyped-def]
    """The fields the Credentials dialog shows for a credential type."""
    from engine.credential_book import form_for

    return form_for(cred_type)


def server_book() -> "ServerBook":
    """The servers the Executions panel reads (kept as n8nApi credentials); httpx loads with it."""
    from engine.remote import ServerBook

    return ServerBook(credential_store())


def node_warnings(workflow: Workflow, registry: Registry, name: str) -> list[str]:
    """What the editor warns about before a run: broken connection rules, missing credentials."""
    return warnings_by_node(workflow, registry, [name])[name]


def warnings_by_node(workflow: Workflow, registry: Registry, names: list[str] | None = None) -> dict[str, list[str]]:
    """`node_warnings` of each node named (None: every node), the rules checked in one pass."""
    found = problems_by_node(workflow, registry, names)
    nodes: dict[str, Node] = {}
    for node in reversed(workflow.nodes):
        nodes[node.name] = node  # the first of a repeated name wins, as Workflow.node finds it
    store = None
    for name, problems in found.items():
        node = nodes[name]
        node_type = registry.get(node.type)
        if node_type.credential_types and not node.is_disabled:
            from engine.credential_book import missing_credentials

            if store is None:
                store = credential_store()
            problems += missing_credentials(node, tuple(node_type.credential_types),
                                            node_type.needs_credential(node.parameters), store)
    return found



# ----- running workflows (RunBridge: engine hook events -> one batched Qt signal) --------------

log = logging.getLogger(__name__)

SLICE_MS = 4.0
"""The engine runs at most this long before the Qt loop gets a turn (paint, input, timers)."""

FLUSH_MS = 50
"""What a run changed reaches the panels in one batch at most this often: the one place events
are held, so a long run never floods the window."""


class FullCollectionsHeld:
    """Keeps Python's collections of the older generations from pausing the loop mid-run.

    A long run records every message each model call received, so the heap grows by hundreds
    of thousands of objects; a collection of generation 1 or 2 then walks them all and stalls
    the window for tens to hundreds of ms (the engine's own raised thresholds make such a
    collection rarer, not shorter, and the first one after its run ends walks everything the
    run left). While any run is going only the youngest generation is collected; when the last
    run ends the surviving objects are frozen (gc.freeze), so later collections do not scan
    them again. Reference counting still frees everything that is not part of a cycle.
    """

    def __init__(self) -> None:
        self._runs = 0
        self._saved: tuple[int, int, int] | None = None

    def __enter__(self) -> None:
        if self._runs == 0:
            self._saved = gc.get_threshold()
            gc.set_threshold(self._saved[0], 1_000_000_000, 1_000_000_000)
        self._runs += 1

    def __exit__(self, *_exc: object) -> None:
        self._runs -= 1
        if self._runs == 0 and self._saved is not None:
            gc.freeze()  # first: with the older thresholds back, the next allocation would walk them
            gc.set_threshold(*self._saved)


full_collections_held = FullCollectionsHeld()
"""Enter while a run fills the panels (RunBridge does); nests across runs of several windows."""


def new_session_id() -> str:
    return uuid.uuid4().hex


class RunStart(NamedTuple):
    """A run has begun: which execution, from which node, with which chat message (if any);
    `run` is its RunState (for a resumed execution, already holding what it did before)."""

    execution_id: str
    workflow_name: str
    start_node: str
    run: RunState
    message: str | None = None
    session_id: str | None = None
    mode: str = "manual"
    workflow: Workflow | None = None  # the workflow as it runs


class StoredRun(NamedTuple):
    """A stored execution opened to look at: its state and the run as it was shown."""

    state: ExecutionState
    run: RunState


class RunBridge(QObject):
    """Runs workflows on the asyncio loop inside Qt, folds their hook events into a RunState and
    hands what changed to the panels in one batched signal.

    One bridge (and one Engine) per window, so Simple Memory keeps a session's conversation
    between messages. The engine stores every execution; the bridge lists, opens, resumes,
    re-runs, replays and deletes them, and holds the debugger of a debug run.
    """

    run_started = Signal(object)  # RunStart
    run_changed = Signal(object)  # RunChanges of the current run (engine.run_state), every FLUSH_MS at most
    run_finished = Signal(object)  # RunOutcome, after the last run_changed of the run
    run_failed = Signal(str)  # a problem that kept the run from starting or broke it
    busy_changed = Signal(bool)

    def __init__(self, open_engine: Callable[[], Engine], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._engine: Engine | None = None
        self._open_engine: Callable[[], Engine] | None = open_engine  # called on first use
        self.replay_source: ReplaySource | None = None  # the recorded results of the last re-run or replay
        self.run: RunState | None = None  # the current or last run, as the panels show it
        self._debugger: Debugger | None = None
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self.flush)
        self._task: asyncio.Task[RunOutcome] | None = None
        self._signal: AbortSignal | None = None
        self._execution: Execution | None = None
        self._thread = threading.get_ident()
        self._loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def open(cls, registry: Registry | None = None, parent: QObject | None = None) -> "RunBridge":
        """A bridge on an engine that stores every execution in the user's store, opened when
        first needed (the editor's first frame does not wait for the executor and the store)."""
        return cls(lambda: runs.open_engine(registry), parent)

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            assert self._open_engine is not None
            self._engine, self._open_engine = self._open_engine(), None
        return self._engine

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
    def paused(self) -> bool:
        """The running execution waits at a pause point of the debugger."""
        return self.running and self._debugger is not None and self._debugger.is_paused

    @property
    def paused_at(self) -> PausePoint | None:
        return self._debugger.paused_at if self.paused and self._debugger is not None else None

    @property
    def debugging(self) -> bool:
        """The running execution runs under the debugger."""
        return self.running and self._debugger is not None

    def start_node(self, workflow: Workflow) -> Node:
        """The trigger a Run would start from (raises MiniN8nError when none can run)."""
        return self.engine.start_node(workflow)

    # ----- starting and stopping -----------------------------------------------------------------
    def send_chat(self, workflow: Workflow, message: str, session_id: str,
                  breakpoints: Breakpoints | None = None, stepping: bool = False) -> asyncio.Task[RunOutcome] | None:
        """Run `workflow` from its Chat Trigger with one chat message of `session_id`
        (under the debugger when `breakpoints` are given)."""
        return self._start(lambda hooks, signal: runs.start(
            self.engine, workflow, message=message, session_id=session_id, hooks=hooks, signal=signal,
            mode="debug" if breakpoints is not None else "manual"), breakpoints, stepping, message, session_id)

    def run_manual(self, workflow: Workflow, breakpoints: Breakpoints | None = None,
                   stepping: bool = False) -> asyncio.Task[RunOutcome] | None:
        """Run `workflow` from its first trigger (the toolbar's Run)."""
        return self._start(lambda hooks, signal: runs.start(
            self.engine, workflow, hooks=hooks, signal=signal,
            mode="debug" if breakpoints is not None else "manual"), breakpoints, stepping)

    def run_from_trigger(self, workflow: Workflow, trigger: str, input_json: str | None,
                         breakpoints: Breakpoints | None = None) -> asyncio.Task[RunOutcome] | None:
        """Run `workflow` from the trigger `trigger`, as `mini-n8n run --trigger/--input` does: its
        output item(s) given as JSON (`input_json`), else its pinned data or its own run. Raises
        StartError, before anything runs, for bad JSON or a trigger that cannot start."""
        items = read_input(input_json) if input_json is not None else None
        start = self.engine.start_node(workflow, trigger=trigger, injected=items is not None)
        blocked = unsupported_on_path(workflow, self.engine.registry, start.name, injected=items is not None)
        if blocked:
            raise StartError(unsupported_message(blocked))
        return self._start(lambda hooks, signal: runs.start(
            self.engine, workflow, trigger=start.name, items=items, hooks=hooks, signal=signal,
            mode="debug" if breakpoints is not None else "manual"), breakpoints, False)

    def resume(self, execution_id: str, breakpoints: Breakpoints | None = None,
               items: list[Item] | None = None) -> asyncio.Task[RunOutcome] | None:
        """Continue a stored paused or crashed execution (stopping at `breakpoints`); one waiting at
        a Wait node for a call goes on with `items` as the request's."""
        return self._start(lambda hooks, signal: runs.resume(self.engine, execution_id, items=items, hooks=hooks,
                                                             signal=signal),
                           breakpoints or Breakpoints(), False, resumed=True)

    def waiting_call(self, execution_id: str) -> str | None:
        """What a stored execution waits for at a Wait node ("a webhook call", "a form submission"),
        or None when it can go on by itself."""
        return runs.waiting_call(self.engine.store.load(execution_id))

    def rerun(self, execution_id: str, from_iteration: int,
              breakpoints: Breakpoints | None = None) -> asyncio.Task[RunOutcome] | None:
        """A new execution that reuses a stored one's results up to `from_iteration`, live after."""
        return self._start(lambda hooks, signal: self._rerun(execution_id, from_iteration, False, hooks, signal),
                           breakpoints, False)

    def replay(self, execution_id: str, breakpoints: Breakpoints | None = None) -> asyncio.Task[RunOutcome] | None:
        """Run a stored execution again on its recorded model replies; `replay_source.divergence`
        tells where the new run first differs."""
        return self._start(lambda hooks, signal: self._rerun(execution_id, None, True, hooks, signal), breakpoints, False)

    def rerun_recorded(self, recorded: ExecutionState, from_iteration: int | None, compare: bool,
                       breakpoints: Breakpoints | None = None) -> asyncio.Task[RunOutcome] | None:
        """Re-run (`from_iteration`) or replay (`compare`) an execution held elsewhere (a server's),
        here: a new local execution fed its recorded results."""
        def make(hooks: Hooks, signal: AbortSignal) -> Execution:
            execution, self.replay_source = runs.rerun_recorded(
                self.engine, recorded.model_copy(deep=True), from_iteration=from_iteration, compare=compare,
                hooks=hooks, signal=signal)
            return execution

        return self._start(make, breakpoints, False)

    def _rerun(self, execution_id: str, from_iteration: int | None, compare: bool, hooks: Hooks,
               signal: AbortSignal) -> Execution:
        execution, self.replay_source = runs.rerun(self.engine, execution_id, from_iteration=from_iteration,
                                                   compare=compare, hooks=hooks, signal=signal)
        return execution

    def continue_(self, edit: dict[str, Any] | None = None) -> None:
        """Go on from the pause point to the next breakpoint, with the user's edit of what is pending."""
        if self.paused and self._debugger is not None:
            self._debugger.continue_(edit)

    def step(self, edit: dict[str, Any] | None = None) -> None:
        """Go on to the next pause point of any kind; a debug run that is going stops at its next one."""
        if self._debugger is None or not self.running:
            return
        if self._debugger.is_paused:
            self._debugger.step(edit)
        else:
            self._debugger.stepping = True

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

    def _start(self, make: Callable[[Hooks, AbortSignal], Execution], breakpoints: Breakpoints | None,
               stepping: bool, message: str | None = None, session_id: str | None = None,
               resumed: bool = False) -> asyncio.Task[RunOutcome] | None:
        """Create the execution and show it at once (the chat shows the message as it is sent,
        Stop works from the first moment); its task then drives it. None when it cannot start."""
        if self.running:
            self.run_failed.emit("A run is already going; stop it first")
            return None
        debugger = Debugger(breakpoints, stepping=stepping) if breakpoints is not None else None
        self.busy_changed.emit(True)
        self._signal = AbortSignal()
        try:
            execution = make(Hooks(self._on_event), self._signal)
            execution.debugger = debugger
            state = execution.state
            if resumed:  # what it did before, as it was shown live
                run = RunState.of_stored(state, self.engine.store.events(state.id))
                message = run.message
            else:  # a re-run or replay of a chat execution answers the same message again
                message = message if message is not None else runs.chat_message_of(state)
                run = RunState(state.id, workflow_name=state.workflow.name, start_node=state.start_node or "",
                               message=message, mode=state.mode, started_at=state.started_at)
        except Exception as exc:
            self._end(self._failure(exc, message, None))
            return None
        self._debugger, self._execution, self.run = debugger, execution, run
        self._task = asyncio.ensure_future(self._drive(execution, message))
        self._loop = self._task.get_loop()
        self.run_started.emit(RunStart(state.id, state.workflow.name, state.start_node or "", run, message,
                                       session_id, state.mode, state.workflow))
        self.flush()
        return self._task

    async def _drive(self, execution: Execution, message: str | None) -> RunOutcome:
        execution.yield_interval_s = SLICE_MS / 1000.0
        try:
            # the window's turn between showing the run (done when it started) and the run's first
            # slice, which holds its nodes' first-time work (parameters validated, sub-nodes set up):
            # together they were the longest the window ever waited during a run
            await asyncio.sleep(0)
            with full_collections_held:
                state = await execution.run()
            outcome = RunOutcome.of(state, message)
        except asyncio.CancelledError:  # cancelled outside the engine's own handling
            state = execution.state
            if state.status == "running":
                state.status = "cancelled"
            outcome = RunOutcome("cancelled", TaskError(message="Execution was cancelled"), state, None, message)
        except Exception as exc:
            outcome = self._failure(exc, message, execution.state)
        if self.run is not None and self.run.execution_id == execution.state.id:
            self.run.finish(outcome)
        self._end(outcome)
        return outcome

    def _failure(self, exc: Exception, message: str | None, state: ExecutionState | None) -> RunOutcome:
        """A problem that kept the run from starting or broke it: said in the window, not only the console."""
        if isinstance(exc, MiniN8nError):
            text = str(exc)
            if isinstance(exc, StoreFailed) and state is not None and state.status == "crashed":
                text += ". The execution is kept where it stopped: Resume in Executions continues it once that is mended"
        else:
            log.exception("run failed", exc_info=exc)
            text = f"{type(exc).__name__}: {exc}"
        self.run_failed.emit(text)
        return RunOutcome("error", TaskError(message=text), state, None, message)

    def _end(self, outcome: RunOutcome) -> None:
        self.flush()
        self._signal = None
        self._debugger = None
        self.run_finished.emit(outcome)
        self.busy_changed.emit(False)

    # ----- events --------------------------------------------------------------------------------
    def _on_event(self, event: HookEvent) -> None:
        if threading.get_ident() != self._thread and self._loop is not None:
            self._loop.call_soon_threadsafe(self._on_event, event)  # Qt objects live on the loop's thread
            return
        run = self.run
        if run is None or event.execution_id != run.execution_id:  # a run left behind (detached, stopped)
            return
        run.apply(event)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def flush(self) -> None:
        """Hand what the run changed since the last flush to the panels, in one signal."""
        self._flush_timer.stop()
        if self.run is None:
            return
        changes: RunChanges = self.run.take_changes()
        if not changes.empty:
            self.run_changed.emit(changes)

    # ----- stored executions ---------------------------------------------------------------------
    def executions(self) -> list[ExecutionSummary]:
        """Every stored execution, newest first (those left running by a dead process: crashed)."""
        store = self.engine.store
        store.mark_crashed()
        return store.list()  # type: ignore[no-any-return]

    def open_execution(self, execution_id: str) -> StoredRun:
        """A stored execution and its run as it was shown (raises MiniN8nError when it is gone)."""
        store = self.engine.store
        state = store.load(execution_id)
        return StoredRun(state, RunState.of_stored(state, store.events(state.id)))

    def delete_execution(self, execution_id: str) -> None:
        self.engine.store.delete(execution_id)

    # ----- a server's executions (engine/remote.py: its REST API) ---------------------------------
    def servers(self) -> list[Server]:
        """The servers saved in the credential store (keys masked)."""
        return server_book().servers()

    def save_server(self, name: str, url: str, api_key: str) -> Server:
        return server_book().save(name, url, api_key)

    def forget_server(self, server_id: str) -> None:
        server_book().forget(server_id)

    async def server_executions(self, server_id: str) -> list[ExecutionSummary]:
        """The server's executions, newest first (raises MiniN8nError saying why not)."""
        return await server_book().client(server_id).executions()

    async def open_server_execution(self, server_id: str, execution_id: str) -> StoredRun:
        """One of the server's executions and its run as it was shown, to look at here."""
        state, events = await server_book().client(server_id).execution(execution_id)
        return StoredRun(state, RunState.of_stored(state, events))
