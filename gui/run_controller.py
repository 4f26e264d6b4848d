"""Wires running into the main window: chat and output panels, canvas statuses, Run/Stop.

`RunController(window, bridge)` is the single call the window makes. What the panels and the
canvas show of a run is the bridge's RunState (engine/run_state.py), rendered as it changes;
nothing here decides a node's state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget

from engine.run_data import ExecutionState
from engine.errors import MiniN8nError
from engine.pin_data import pinned_items
from engine.run_outcome import RunOutcome
from engine.run_state import RunChanges, RunState
from engine.workflow import Workflow
from gui.bridge import RunBridge, RunStart, StoredRun
from gui.canvas.node_item import NodeItem
from gui.first_frame import after_first_frame
from gui.panels.chat_panel import ChatPanel
from gui.panels.output_panel import OutputPanel

if TYPE_CHECKING:
    from gui.main_window import MainWindow

STATUS_TIMEOUT_MS = 8000
OUTPUT_MIN_WIDTH = 560
"""The output panel may be narrower than its steps toolbar asks for, so Chat, Output and
Executions fit side by side on a 1440-pixel screen."""
CANVAS_STATUS = {"idle": None, "pinned": "success"}
"""The run states a node item draws differently from its own name (a pinned run shows as done;
the pin itself is drawn from the document)."""


class RunController(QObject):
    """Keeps the panels, canvas and actions of a window in step with the bridge's runs.

    `run_shown(outcome)` follows the bridge's `run_finished` once the run's end is on screen.
    """

    run_shown = Signal(object)  # RunOutcome

    def __init__(self, window: MainWindow, bridge: RunBridge) -> None:
        super().__init__(window)
        self.window = window
        self.bridge = bridge
        bridge.setParent(self)
        self.viewed: ExecutionState | None = None  # a stored execution opened from the Executions panel
        self.shown: RunState | None = None  # the run the canvas and panels show
        self.output = OutputPanel(lambda: self.viewed or self.bridge.state)
        self.chat = ChatPanel()
        self.last_outcome: RunOutcome | None = None
        self._install_docks()
        self._install_actions()
        # the text format types (Run log, chat replies) before the first run: PySide builds their
        # enums at their first import, which would otherwise stall the run's first line and reply
        after_first_frame(window, self.output.run_log.prepare, self.chat.prepare)

        bridge.run_started.connect(self._run_started)
        bridge.run_changed.connect(self._run_changed)
        bridge.run_finished.connect(self._run_finished)
        bridge.run_failed.connect(self._run_failed)
        bridge.busy_changed.connect(self._busy_changed)
        self.chat.send_requested.connect(self.send_message)
        self.chat.stop_requested.connect(self.stop)
        self.output.run_log.node_clicked.connect(self.select_node)
        window.node_selected.connect(self.output.node_data.show_node)
        self.output.node_data.set_pinned_lookup(lambda name: pinned_items(window.document, name))
        self.output.node_data.pin_requested.connect(window.set_pin)  # pin or unpin from the Node data tab
        window.document_replaced.connect(self._document_replaced)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self._quitting)  # leave no run behind when the editor quits
        self._busy_changed(False)
        from gui.debug_controller import DebugController
        from gui.executions_controller import ExecutionsController

        self.debug = DebugController(self, window, bridge)
        self.executions = ExecutionsController(self, self.debug, window, bridge)

    # ----- layout --------------------------------------------------------------------------------
    def _install_docks(self) -> None:
        window = self.window
        dock = window.output_dock
        self.output.setMinimumWidth(OUTPUT_MIN_WIDTH)
        dock.setWidget(self.output)
        self.output_dock = dock
        self.chat_dock = QDockWidget("Chat", window)
        self.chat_dock.setObjectName("chatDock")
        self.chat_dock.setWidget(self.chat)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.chat_dock)
        window.splitDockWidget(self.chat_dock, dock, Qt.Orientation.Horizontal)
        window.resizeDocks([self.chat_dock, dock], [360, 1000], Qt.Orientation.Horizontal)
        window.resizeDocks([dock], [300], Qt.Orientation.Vertical)

    def _install_actions(self) -> None:
        window = self.window
        self.run_action = QAction("Run", self)
        self.run_action.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
        self.run_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.run_action.setToolTip("Run the workflow from its trigger (Ctrl+Enter)")
        self.run_action.triggered.connect(self.run_workflow)
        self.stop_action = QAction("Stop", self)
        self.stop_action.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        self.stop_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.stop_action.setToolTip("Stop the running workflow (Esc)")
        self.stop_action.triggered.connect(self.stop)
        self.new_session_action = QAction("New chat session", self)
        self.new_session_action.triggered.connect(self.chat.new_session)
        for action in (self.run_action, self.stop_action):
            window.addAction(action)
        window.run_toolbar.addAction(self.run_action)
        window.run_toolbar.addAction(self.stop_action)
        menu = window.run_menu
        menu.addAction(self.run_action)
        menu.addAction(self.stop_action)
        menu.addSeparator()
        menu.addAction(self.new_session_action)

    @property
    def settled(self) -> bool:
        """No run going and every change of the last one shown."""
        return not self.bridge.running

    # ----- commands ------------------------------------------------------------------------------
    @property
    def workflow(self) -> Workflow:
        return self.window.document

    def send_message(self, text: str) -> None:
        """Send one chat message of the panel's session to the workflow's Chat Trigger."""
        if self.bridge.running:
            return
        self.window.leave_read_only()
        debug = self.debug.pending_start()
        if debug is not None:
            self.bridge.send_chat(self.workflow, text, self.chat.session_id, *debug)
        else:
            self.bridge.send_chat(self.workflow, text, self.chat.session_id)

    def run_workflow(self) -> None:
        """Run from the toolbar: a Manual Trigger runs; a chat-only workflow sends the typed message."""
        if self.bridge.running:
            return
        self.window.leave_read_only()
        try:
            start = self.bridge.start_node(self.workflow)
        except MiniN8nError as exc:
            self.debug.pending_start()
            self._run_failed(str(exc))
            return
        if self.window.registry.get(start.type).is_chat_trigger:
            if self.chat.input.toPlainText().strip():
                self.chat.submit()
            else:
                self.chat_dock.raise_()
                self.chat.input.setFocus()
                self.show_status("This workflow starts with a Chat Trigger: type a message in the Chat panel")
            return
        debug = self.debug.pending_start()
        if debug is not None:
            self.bridge.run_manual(self.workflow, *debug)
        else:
            self.bridge.run_manual(self.workflow)

    def stop(self) -> None:
        if self.bridge.running:
            self.show_status("Stopping…")
            self.bridge.stop()

    def select_node(self, name: str) -> None:
        """Select `name` on the canvas and show its data (from a click in the run log)."""
        canvas = self.window.canvas
        self.window.scene.select_names([name])
        item = canvas.node_item(name)
        if item is not None:
            canvas.ensureVisible(item)
        self.output.node_data.show_node(name)
        self.output.setCurrentWidget(self.output.node_data)

    def _quitting(self) -> None:
        """The editor quits: a paused execution stays stored as paused; a running one stops."""
        if not self.bridge.detach():
            self.bridge.stop()

    def show_stored(self, stored: StoredRun, read_only: bool = True) -> None:
        """Show a stored execution: statuses, run log, steps, node data and (read-only) its chat."""
        state, run = stored.state, stored.run
        self.viewed = state
        how = "stored — read-only" if read_only else "stored, its workflow copied to the editor"
        self._show(run, f"Execution {state.id} of “{state.workflow.name}” ({state.mode}), {how}")
        if read_only:
            self.chat.show_stored(run.chat, f"Execution {state.id} — read-only")
        took = f" in {state.stopped_at - state.started_at:.0f} ms" if state.stopped_at is not None else ""
        error = state.error.message if state.error is not None else None
        self.output.run_log.append_note(f"status: {state.status}{took}" + (f" — {error}" if error else ""),
                                        error=state.status not in ("success", "paused"))
        self.output.node_data.refresh()
        self.show_status(f"Showing execution {state.id} ({state.status}), read-only")

    def leave_stored(self) -> None:
        """Back from a stored execution to the document: its views and chat session return."""
        if self.viewed is None:
            return
        self.viewed = None
        self.chat.leave_stored()
        self.shown = None
        self.output.clear_run()
        self._reset_canvas()
        self.output.node_data.refresh()

    def _document_replaced(self) -> None:
        """Another workflow is open: the last run's views and the chat session belong to the old one."""
        if self.bridge.running or self.window.read_only:
            return
        if self.viewed is not None:
            return
        self.shown = None
        self.output.clear_run()
        self.output.node_data.show_node(None)
        self.chat.new_session()

    # ----- rendering a run -----------------------------------------------------------------------
    def _show(self, run: RunState, note: str) -> None:
        """Show `run` from scratch under a first run-log line `note`: canvas statuses, steps, run log."""
        self.shown = run
        self.output.clear_run()
        self.output.run_log.append_note(note)
        self._reset_canvas()
        run.take_changes()  # everything is drawn from the run itself below
        for name, node in run.nodes.items():
            self._set_node_state(name, node.status, node.runs, node.error)
        self.output.steps_model.show_rows(run.steps.rows)
        self.output.run_log.append_lines(run.lines)

    def _render(self, changes: RunChanges) -> None:
        """Apply what the shown run changed since the last batch."""
        for name, node in changes.nodes.items():
            self._set_node_state(name, node.status, node.runs, node.error)
        if changes.steps:
            self.output.steps_model.apply(changes.steps)
        if changes.lines:
            self.output.run_log.append_lines(changes.lines)
        if changes.chat and self.shown is not None and self.shown.message is not None:
            self.chat.show_run(self.shown.chat)
        node = self.output.node_data.node
        if node is not None and node in changes.nodes:
            self.output.node_data.refresh()

    # ----- bridge signals ------------------------------------------------------------------------
    def _run_started(self, start: RunStart) -> None:
        ran = start.workflow
        if ran is not None and {n.name for n in ran.nodes} != {n.name for n in self.window.edited_document.nodes}:
            self.window.enter_read_only(ran, start.execution_id)  # a stored execution of another workflow goes on
        else:
            self.window.leave_read_only()
        self.viewed = None
        self.chat.leave_stored()
        what = f"message to {start.start_node}" if start.message is not None else f"from {start.start_node}"
        self._show(start.run, f"Run {start.execution_id} of “{start.workflow_name}” {what}")
        if start.run.message is not None:
            self.chat.show_run(start.run.chat, new=True)
        self.output.node_data.refresh()
        self.show_status("Running…", 0)

    def _run_changed(self, changes: RunChanges) -> None:
        if self.shown is self.bridge.run:
            self._render(changes)

    def _run_finished(self, outcome: RunOutcome) -> None:
        """The run's last changes are in: say how it ended."""
        self.last_outcome = outcome
        state = outcome.state
        if outcome.status == "paused":  # left stored at its pause point (the window closed)
            self.output.run_log.append_note("status: paused — stored; resume it from Executions")
            self.run_shown.emit(outcome)
            return
        error = outcome.error.message if outcome.error is not None else None
        took = ""
        if state is not None and state.stopped_at is not None:
            took = f" in {state.stopped_at - state.started_at:.0f} ms"
        if outcome.status == "success":
            self.output.run_log.append_note(f"status: success{took}")
            self.show_status(f"Run succeeded{took}")
        else:
            text = f"status: {outcome.status}{took}" + (f" — {error}" if error else "")
            self.output.run_log.append_note(text, error=True)
            self.show_status(f"Run {outcome.status}{took}" + (f": {error}" if error else ""))
        started = self.shown is not None and state is not None and self.shown.execution_id == state.id
        if not started and outcome.message is not None and error:
            self.chat.show_error(error)  # the run broke before it started: no transcript says so
        self.output.node_data.refresh()
        self.run_shown.emit(outcome)

    def _run_failed(self, message: str) -> None:
        self.output.run_log.append_note(f"error: {message}", error=True)
        if not self.bridge.running:
            self.chat.show_error(message)
        self.show_status(f"Error: {message}")

    def _busy_changed(self, busy: bool) -> None:
        self.run_action.setEnabled(not busy)
        self.stop_action.setEnabled(busy)
        self.chat.set_busy(busy)

    # ----- canvas --------------------------------------------------------------------------------
    def _reset_canvas(self) -> None:
        canvas = self.window.canvas
        for node in self.window.document.nodes:
            item = canvas.node_item(node.name)
            if isinstance(item, NodeItem):
                item.set_run_state(None, 0, None)

    def _set_node_state(self, name: str, status: str, runs: int, error: str | None) -> None:
        item = self.window.canvas.node_item(name)
        if isinstance(item, NodeItem):
            item.set_run_state(CANVAS_STATUS.get(status, status), runs, error)

    def show_status(self, text: str, timeout: int = STATUS_TIMEOUT_MS) -> None:
        self.window.statusBar().showMessage(text, timeout)
