"""Wires running into the main window: bridge, chat and output panels, canvas statuses, Run/Stop.

`RunController(window)` is the single call the window makes; everything about running a
workflow from the editor lives behind it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QMenu

from gui.bridge import (
    ExecutionPaused,
    ExecutionResumed,
    ExecutionState,
    HookEvent,
    MiniN8nError,
    NodeAfter,
    NodeBefore,
    RunBridge,
    RunLog,
    RunLogLine,
    RunOutcome,
    RunStart,
    TokenEvent,
    Workflow,
    is_chat_trigger,
    pinned_items,
)
from gui.panels.chat_panel import ChatPanel
from gui.panels.output_panel import OutputPanel

STATUS_TIMEOUT_MS = 8000
TABLE_FLUSH_MS = 200
"""The steps table and run log take new rows at most this often during a run (each repaint of a
long table costs a few ms; canvas and chat follow every batch of the bridge)."""
EVENT_CHUNK = 600
LINE_CHUNK = 400
"""At most this many hook events / run-log lines per turn of the loop; the rest on the next turn."""


class RunController(QObject):
    """Owns the RunBridge of a window and keeps the panels, canvas and actions in step with runs.

    `run_shown(outcome)` follows the bridge's `run_finished` once every row of the run is in
    the panels (they take rows in chunks, so a fast run never freezes the window).
    """

    run_shown = Signal(object)  # RunOutcome

    def __init__(self, window: QMainWindow, bridge: RunBridge | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.bridge = bridge or RunBridge(getattr(window, "registry", None), self)
        self.viewed: ExecutionState | None = None  # a stored execution opened from the Executions panel
        self.output = OutputPanel(lambda: self.viewed or self.bridge.state)
        self.chat = ChatPanel()
        self.last_outcome: RunOutcome | None = None
        self._runs: dict[str, int] = {}
        self._stream_scope: Any = None
        self._paused_node: str | None = None
        self._table_events: list[Any] = []
        self._table_lines: list[Any] = []
        self._finishing: RunOutcome | None = None
        self._table_timer = QTimer(self)
        self._table_timer.setSingleShot(True)
        self._table_timer.timeout.connect(self._flush_tables)
        self._install_docks()
        self._install_actions()

        bridge_ = self.bridge
        bridge_.run_started.connect(self._run_started)
        bridge_.events.connect(self._events)
        bridge_.log_lines.connect(self._log_lines)
        bridge_.run_finished.connect(self._run_finished)
        bridge_.run_failed.connect(self._run_failed)
        bridge_.busy_changed.connect(self._busy_changed)
        self.chat.send_requested.connect(self.send_message)
        self.chat.stop_requested.connect(self.stop)
        self.output.run_log.node_clicked.connect(self.select_node)
        selected = getattr(window, "node_selected", None)
        if selected is not None:
            selected.connect(self.output.node_data.show_node)
        set_pin = getattr(window, "set_pin", None)
        if set_pin is not None:  # pin or unpin from the Node data tab
            self.output.node_data.set_pinned_lookup(lambda name: pinned_items(window.document, name))
            self.output.node_data.pin_requested.connect(set_pin)
        replaced = getattr(window, "document_changed", None)
        if replaced is not None:
            replaced.connect(self._document_replaced)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self._quitting)  # leave no run behind when the editor quits
        self._busy_changed(False)
        from gui.debug_controller import DebugController

        self.debug = DebugController(self)

    # ----- layout --------------------------------------------------------------------------------
    def _install_docks(self) -> None:
        window = self.window
        dock = getattr(window, "output_dock", None)
        if dock is None:
            dock = QDockWidget("Output", window)
            dock.setObjectName("outputDock")
            window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
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
        toolbar = getattr(window, "run_toolbar", None)
        if toolbar is not None:
            toolbar.addAction(self.run_action)
            toolbar.addAction(self.stop_action)
        menu = getattr(window, "run_menu", None)
        if menu is None:
            menu = next((m for m in window.menuBar().findChildren(QMenu) if m.title().replace("&", "") == "Run"), None)
        if menu is None:
            menu = window.menuBar().addMenu("&Run")
        menu.addAction(self.run_action)
        menu.addAction(self.stop_action)
        menu.addSeparator()
        menu.addAction(self.new_session_action)

    @property
    def settled(self) -> bool:
        """No run going and every row of the last one shown."""
        return not self.bridge.running and self._finishing is None and not self._table_events and not self._table_lines

    # ----- commands ------------------------------------------------------------------------------
    @property
    def workflow(self) -> Workflow:
        return self.window.document  # type: ignore[attr-defined]

    def send_message(self, text: str) -> None:
        """Send one chat message of the panel's session to the workflow's Chat Trigger."""
        if self.bridge.running:
            return
        self.chat.add_user(text)
        self.chat.begin_reply()
        self.bridge.send_chat(self.workflow, text, self.chat.session_id)

    def run_workflow(self) -> None:
        """Run from the toolbar: a Manual Trigger runs; a chat-only workflow sends the typed message."""
        if self.bridge.running:
            return
        try:
            start = self.bridge.engine.start_node(self.workflow)
        except MiniN8nError as exc:
            self._run_failed(str(exc))
            return
        if is_chat_trigger(start):
            if self.chat.input.toPlainText().strip():
                self.chat.submit()
            else:
                self.chat_dock.raise_()
                self.chat.input.setFocus()
                self.show_status("This workflow starts with a Chat Trigger: type a message in the Chat panel")
            return
        self.bridge.run_manual(self.workflow)

    def stop(self) -> None:
        if self.bridge.running:
            self.show_status("Stopping…")
            self.bridge.stop()

    def select_node(self, name: str) -> None:
        """Select `name` on the canvas and show its data (from a click in the run log)."""
        canvas = getattr(self.window, "canvas", None)
        scene = getattr(canvas, "canvas_scene", None) if canvas is not None else None
        if scene is not None and hasattr(scene, "select_names"):
            scene.select_names([name])
            item = canvas.node_item(name)
            if item is not None:
                canvas.ensureVisible(item)
        self.output.node_data.show_node(name)
        self.output.setCurrentWidget(self.output.node_data)

    def _quitting(self) -> None:
        """The editor quits: a paused execution stays stored as paused; a running one stops."""
        if not self.bridge.detach():
            self.bridge.stop()

    def show_stored(self, state: ExecutionState, events: list[HookEvent]) -> None:
        """Show a stored execution read-only: canvas statuses, run log and steps, node data."""
        self._drain()
        self._runs = {}
        self._stream_scope = None
        self.output.clear_run()
        self._reset_canvas()
        self.viewed = state
        self.output.run_log.append_note(
            f"Execution {state.id} of “{state.workflow.name}” ({state.mode}), stored — read-only")
        lines: list[RunLogLine] = []
        log = RunLog(on_line=lines.append)
        states: dict[str, tuple[str, int, str | None]] = {}
        for event in events:
            log(event)
            if isinstance(event, NodeAfter):
                count = self._runs.get(event.node, 0) + 1
                self._runs[event.node] = count
                error = event.task.error.message if event.task.error is not None else None
                states[event.node] = ("error" if event.task.execution_status == "error" else "success", count, error)
        self.output.steps_model.feed(events)
        self.output.run_log.append_lines(lines)
        pause = state.pause or {}
        if state.status == "paused" and pause.get("node"):
            node = str(pause["node"])
            states[node] = ("paused", self._runs.get(node, 0), None)
        for name, node_state in states.items():
            self._set_node_state(name, *node_state)
        if state.status in ("success", "error", "cancelled"):
            self.output.steps_model.finish("cancelled" if state.status == "cancelled" else "not run")
        took = f" in {state.stopped_at - state.started_at:.0f} ms" if state.stopped_at is not None else ""
        error = state.error.message if state.error is not None else None
        self.output.run_log.append_note(f"status: {state.status}{took}" + (f" — {error}" if error else ""),
                                        error=state.status not in ("success", "paused"))
        self.output.node_data.refresh()
        self.show_status(f"Showing execution {state.id} ({state.status}), read-only")

    def _document_replaced(self) -> None:
        """Another workflow is open: the last run's views and the chat session belong to the old one."""
        if self.bridge.running:
            return
        self.viewed = None
        self.output.clear_run()
        self.output.node_data.show_node(None)
        self.chat.new_session()

    # ----- bridge signals ------------------------------------------------------------------------
    def _run_started(self, start: RunStart) -> None:
        self.viewed = None
        self._drain()
        self._runs = {}
        self._stream_scope = None
        self.output.clear_run()
        self._reset_canvas()
        what = f"message to {start.start_node}" if start.message is not None else f"from {start.start_node}"
        self.output.run_log.append_note(f"Run {start.execution_id} of “{start.workflow_name}” {what}")
        self.output.node_data.refresh()
        self.show_status("Running…", 0)

    def _events(self, events: list[Any]) -> None:
        states: dict[str, tuple[str | None, int, str | None]] = {}
        tokens: list[str] = []
        restart = False
        for event in events:
            if isinstance(event, NodeBefore):
                states[event.node] = ("running", self._runs.get(event.node, 0), None)
            elif isinstance(event, NodeAfter):
                count = self._runs.get(event.node, 0) + 1
                self._runs[event.node] = count
                task = event.task
                error = task.error.message if task.error is not None else None
                states[event.node] = ("error" if task.execution_status == "error" else "success", count, error)
            elif isinstance(event, ExecutionPaused) and event.where.get("node"):
                self._paused_node = str(event.where["node"])
                states[self._paused_node] = ("paused", self._runs.get(self._paused_node, 0), None)
            elif isinstance(event, ExecutionResumed) and self._paused_node:
                states[self._paused_node] = ("running", self._runs.get(self._paused_node, 0), None)
                self._paused_node = None
            elif isinstance(event, TokenEvent) and self._is_top_level(event.parent):
                scope = (event.node, (event.parent or {}).get("iteration"), (event.parent or {}).get("itemIndex"))
                if scope != self._stream_scope:
                    self._stream_scope = scope
                    restart = True
                    tokens = []
                tokens.append(event.text)
        self._table_events.extend(events)
        self._queue_tables()
        for name, state in states.items():
            self._set_node_state(name, *state)
        if tokens or restart:
            self.chat.stream("".join(tokens), restart=restart)
        node = self.output.node_data.node
        if node is not None and node in states:
            self.output.node_data.refresh()

    def _log_lines(self, lines: list[Any]) -> None:
        self._table_lines.extend(lines)
        self._queue_tables()

    def _queue_tables(self) -> None:
        if not self._table_timer.isActive():
            self._table_timer.start(TABLE_FLUSH_MS)

    def _flush_tables(self, everything: bool = False) -> None:
        """Hand a chunk of the rows gathered so far to the steps table and the run log."""
        self._table_timer.stop()
        take = len(self._table_events) if everything else EVENT_CHUNK
        events, self._table_events = self._table_events[:take], self._table_events[take:]
        take = len(self._table_lines) if everything else LINE_CHUNK
        lines, self._table_lines = self._table_lines[:take], self._table_lines[take:]
        if events:
            self.output.steps_model.feed(events)
        if lines:
            self.output.run_log.append_lines(lines)
        if self._table_events or self._table_lines:
            self._table_timer.start(0)  # the rest on the next turn of the loop
        elif self._finishing is not None:
            outcome, self._finishing = self._finishing, None
            self._show_outcome(outcome)

    def _drain(self) -> None:
        """Put every gathered row in now (a new run starts before the last one was shown)."""
        self._flush_tables(everything=True)

    def _run_finished(self, outcome: RunOutcome) -> None:
        self.last_outcome = outcome
        self._finishing = outcome
        self._table_timer.start(0)

    def _show_outcome(self, outcome: RunOutcome) -> None:
        """The run's rows are all in: close open steps, settle the canvas, answer in the chat."""
        if outcome.status == "paused":  # left stored at its pause point (the window closed)
            self.output.run_log.append_note("status: paused — stored; resume it from Executions")
            if outcome.message is not None:
                self.chat.end_reply(None)
            self.run_shown.emit(outcome)
            return
        self.output.steps_model.finish("cancelled" if outcome.status == "cancelled" else "not run")
        for name in self._unfinished_nodes():
            message = "Execution was cancelled" if outcome.status == "cancelled" else "did not finish"
            self._set_node_state(name, "error", self._runs.get(name, 0), message)
        error = outcome.error.message if outcome.error is not None else None
        if outcome.message is not None:
            if outcome.status == "success":
                self.chat.end_reply(outcome.answer)
            elif outcome.status == "cancelled":
                self.chat.end_reply(None, "Stopped: the run was cancelled")
            else:
                where = f"[{outcome.error.node}] " if outcome.error is not None and outcome.error.node else ""
                self.chat.end_reply(None, f"{where}{error or 'the run failed'}")
        state = outcome.state
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

    # ----- helpers -------------------------------------------------------------------------------
    @staticmethod
    def _is_top_level(parent: dict[str, Any] | None) -> bool:
        return parent is None or parent.get("parent") is None

    def _node_items(self) -> list[Any]:
        canvas = getattr(self.window, "canvas", None)
        if canvas is None:
            return []
        return [canvas.node_item(n.name) for n in self.workflow.nodes]

    def _reset_canvas(self) -> None:
        for item in self._node_items():
            if item is not None and hasattr(item, "set_run_state"):
                item.set_run_state(None, 0, None)

    def _set_node_state(self, name: str, status: str | None, runs: int, error: str | None) -> None:
        canvas = getattr(self.window, "canvas", None)
        item = canvas.node_item(name) if canvas is not None else None
        if item is not None and hasattr(item, "set_run_state"):
            item.set_run_state(status, runs, error)

    def _unfinished_nodes(self) -> list[str]:
        """Nodes still shown running or paused when the run has ended (a Stop, a failure elsewhere)."""
        return [item.name for item in self._node_items()
                if item is not None and getattr(item, "status", None) in ("running", "paused")]

    def show_status(self, text: str, timeout: int = STATUS_TIMEOUT_MS) -> None:
        self.window.statusBar().showMessage(text, timeout)
