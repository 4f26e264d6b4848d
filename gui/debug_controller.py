"""Debugging in the editor: breakpoints, Debug/Continue, Step, Stop, edit-and-continue.

`DebugController(runs, window, bridge)` adds the Debug menu and keys (F5, F10, Shift+F5, F9) and
the Pending tab of the output panel. Runs start under the debugger through the bridge with this
window's breakpoints; where a run is paused is the bridge's RunState.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QToolButton

from engine.debugger import Breakpoints
from engine.run_outcome import RunOutcome
from engine.run_state import RunChanges
from gui.bridge import RunBridge, RunStart
from gui.canvas.node_item import NodeItem
from gui.panels.pending import EditProblem, PendingView

if TYPE_CHECKING:
    from gui.main_window import MainWindow
    from gui.run_controller import RunController

AGENT_BREAKS = (
    ("before_model", "Before each model call"),
    ("after_model", "After each model reply"),
    ("before_tool", "Before each tool call"),
    ("after_tool_result", "After each tool result"),
    ("on_tool_error", "On a tool error"),
)


def describe(where: dict[str, Any]) -> str:
    """A pause point in a few words, for the status bar."""
    kind = str(where.get("kind"))
    text = {"node": "before", "before_model": "before the model call of", "after_model": "after the reply of",
            "before_tool": "before the tool call", "tool_result": "after the result of",
            "tool_error": "after the error of"}.get(kind, kind)
    text += f" “{where.get('node')}”"
    if where.get("iteration") is not None:
        text += f", iteration {where['iteration']}"
    return text


class DebugController(QObject):
    """Owns the window's breakpoints and debug actions, the Pending tab and the Executions dock."""

    def __init__(self, runs: RunController, window: MainWindow, bridge: RunBridge) -> None:
        super().__init__(runs)
        self.runs = runs
        self.window = window
        self.bridge = bridge
        self.breakpoints = Breakpoints.model_construct()  # the defaults, without building its validator before the first frame
        self.pending = PendingView()
        runs.output.addTab(self.pending, "Pending")
        self._install_actions()
        self._debug_next: tuple[Breakpoints, bool] | None = None  # the next run starts under the debugger

        bridge.run_changed.connect(self._run_changed)
        bridge.run_started.connect(self._run_started)
        bridge.run_finished.connect(self._run_finished)
        bridge.busy_changed.connect(self._update_actions)
        self.pending.continue_requested.connect(self.continue_)
        self.pending.step_requested.connect(self.step)
        self.pending.stop_requested.connect(self.stop)
        window.document_changed.connect(self.draw_breakpoints)
        window.read_only_changed.connect(self._read_only_changed)
        window.installEventFilter(self)
        self._update_actions()

    # ----- layout --------------------------------------------------------------------------------
    def _action(self, text: str, shortcut: str, tip: str, slot: Any) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.setToolTip(f"{tip} ({shortcut})")
        action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        self.window.addAction(action)
        return action

    def _install_actions(self) -> None:
        self.debug_action = self._action("Debug", "F5", "Run under the debugger: stop at breakpoints", self.debug)
        self.step_action = self._action("Step", "F10", "Go to the next pause point of any kind", self.step)
        self.stop_action = self._action("Stop debugging", "Shift+F5", "Stop the run", self.stop)
        self.breakpoint_action = self._action("Toggle Breakpoint", "F9", "Pause before the selected node runs",
                                              self.toggle_breakpoint)
        self.breakpoint_action.setProperty("nodeMenu", True)  # offered in the node's context menu
        self.agent_actions: dict[str, QAction] = {}
        for field, text in AGENT_BREAKS:
            action = QAction(text, self, checkable=True)
            action.toggled.connect(lambda on, f=field: self._set_agent_break(f, on))
            self.agent_actions[field] = action
        self.tools_action = QAction("Only These Tools…", self)
        self.tools_action.triggered.connect(self.ask_tools)
        self.from_iteration_action = QAction("From Iteration…", self)
        self.from_iteration_action.triggered.connect(self.ask_from_iteration)
        self.clear_action = QAction("Clear All Breakpoints", self)
        self.clear_action.triggered.connect(self.clear_breakpoints)

        menu = QMenu("&Debug", self.window)
        self.window.menuBar().addMenu(menu)
        self.debug_menu = menu
        menu.addActions([self.debug_action, self.step_action, self.stop_action])
        menu.addSeparator()
        menu.addAction(self.breakpoint_action)
        self.agent_menu = menu.addMenu("Break Inside Agents")
        self.agent_menu.addActions(list(self.agent_actions.values()))
        self.agent_menu.addSeparator()
        self.agent_menu.addActions([self.tools_action, self.from_iteration_action])
        menu.addAction(self.clear_action)
        toolbar = self.window.run_toolbar
        toolbar.addSeparator()
        toolbar.addActions([self.debug_action, self.step_action])
        breaks = QAction("Breakpoints", self)
        breaks.setMenu(self.agent_menu)
        breaks.setToolTip("Where a debug run stops inside every agent's loop")
        toolbar.addAction(breaks)
        button = toolbar.widgetForAction(breaks)
        if isinstance(button, QToolButton):
            button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self._update_agent_labels()

    # ----- breakpoints ---------------------------------------------------------------------------
    def toggle_breakpoint(self, names: list[str] | None = None) -> None:
        """F9: a breakpoint on the selected nodes (on when any of them has none)."""
        names = names if names is not None else self.window.scene.selected_names()
        document = self.runs.workflow
        names = [n for n in names if document.has_node(n) and self.window.registry.get(document.node(n).type).runnable]
        if not names:
            self.runs.show_status("Select a node to put a breakpoint on it (F9)")
            return
        on = not all(n in self.breakpoints.nodes for n in names)
        for name in names:
            if on and name not in self.breakpoints.nodes:
                self.breakpoints.nodes.append(name)
            elif not on and name in self.breakpoints.nodes:
                self.breakpoints.nodes.remove(name)
        self.draw_breakpoints()
        what = ", ".join(f"“{n}”" for n in names)
        self.runs.show_status(f"Breakpoint {'set on' if on else 'removed from'} {what}")

    def draw_breakpoints(self) -> None:
        """Show node breakpoints on the canvas; names no longer in the document are dropped."""
        document = self.runs.workflow
        self.breakpoints.nodes = [n for n in self.breakpoints.nodes if document.has_node(n)]
        canvas = self.window.canvas
        for node in document.nodes:
            item = canvas.node_item(node.name)
            if isinstance(item, NodeItem) and item.breakpoint != (node.name in self.breakpoints.nodes):
                item.set_breakpoint(node.name in self.breakpoints.nodes)

    def _set_agent_break(self, field: str, on: bool) -> None:
        setattr(self.breakpoints, field, on)

    def set_agent_break(self, field: str, on: bool) -> None:
        """Check or uncheck one of the agent-loop breakpoints (as the Debug menu does)."""
        self.agent_actions[field].setChecked(on)

    def ask_tools(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        text, ok = QInputDialog.getText(self.window, "Only these tools",
                                        "Tool names, separated by commas (empty: every tool):",
                                        text=", ".join(self.breakpoints.tools))
        if ok:
            self.breakpoints.tools = [t.strip() for t in text.split(",") if t.strip()]
            self._update_agent_labels()

    def ask_from_iteration(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        value, ok = QInputDialog.getInt(self.window, "From iteration", "Stop inside agents only from iteration:",
                                        self.breakpoints.from_iteration, 1, 10_000)
        if ok:
            self.breakpoints.from_iteration = value
            self._update_agent_labels()

    def clear_breakpoints(self) -> None:
        for action in self.agent_actions.values():
            action.setChecked(False)
        self.breakpoints.nodes = []
        self.breakpoints.tools = []
        self.breakpoints.from_iteration = 1
        self.draw_breakpoints()
        self._update_agent_labels()

    def _update_agent_labels(self) -> None:
        tools = ", ".join(self.breakpoints.tools)
        self.tools_action.setText(f"Only These Tools: {tools}…" if tools else "Only These Tools…")
        n = self.breakpoints.from_iteration
        self.from_iteration_action.setText(f"From Iteration {n}…" if n > 1 else "From Iteration…")

    # ----- running -------------------------------------------------------------------------------
    def debug(self) -> None:
        """F5: Continue when paused, else start a debug run."""
        if self.bridge.paused:
            self.continue_()
        elif not self.bridge.running:
            self._start(stepping=False)

    def step(self) -> None:
        """F10: to the next pause point of any kind (starts a debug run that stops at the first)."""
        if self.bridge.paused:
            self._release(step=True)
        elif not self.bridge.running:
            self._start(stepping=True)
        else:  # a debug run going: stop at its next pause point
            self.bridge.step()

    def continue_(self) -> None:
        if self.bridge.paused:
            self._release(step=False)

    def stop(self) -> None:
        """Shift+F5: stop the run, paused or not."""
        self.runs.stop()

    def pending_start(self) -> tuple[Breakpoints, bool] | None:
        """The breakpoints and stepping of the run about to start, when F5/F10 asked for one."""
        debug, self._debug_next = self._debug_next, None
        return debug

    def _start(self, stepping: bool) -> None:
        self.window.commit_pending_edits()
        self._debug_next = (self.breakpoints, stepping)
        self.runs.run_workflow()
        if not self.bridge.running and self._debug_next is not None:  # a chat workflow with nothing typed yet
            self.runs.show_status("Debugging: type a message in the Chat panel; it runs under the debugger", 0)

    def _release(self, step: bool) -> None:
        point = self.bridge.paused_at
        if point is None:
            return
        shown = self.pending.where or {}
        edit: dict[str, Any] | None = None
        if shown.get("key") == point.key:
            try:
                edit = self.pending.edit()
            except EditProblem as exc:
                self.runs.show_status(f"Not continued: {exc}")
                self._bring_pending()
                return
        (self.bridge.step if step else self.bridge.continue_)(edit)
        self._update_actions()

    def _run_changed(self, changes: RunChanges) -> None:
        if not changes.pause:
            return
        run = self.bridge.run
        where = run.pause if run is not None else None
        if where is not None and self.bridge.paused:
            self._show_pause(where)
        else:
            self.pending.show_point(None)
        self._update_actions()

    def _show_pause(self, where: dict[str, Any]) -> None:
        self.pending.show_point(where)
        self._bring_pending()
        canvas = self.window.canvas
        item = canvas.node_item(str(where.get("node")))
        if item is not None:
            canvas.ensureVisible(item)
        self.runs.show_status(f"Paused {describe(where)} — F5 continue, F10 step, Shift+F5 stop", 0)
        self.pending.focus_editor()

    def _bring_pending(self) -> None:
        self.runs.output_dock.show()
        self.runs.output_dock.raise_()
        self.runs.output.setCurrentWidget(self.pending)

    def _update_actions(self, busy: bool | None = None) -> None:
        """Enable what applies now; `busy` from the bridge's busy_changed (its task is still ending)."""
        running = self.bridge.running if busy is None else busy
        paused = running and self.bridge.paused
        self.debug_action.setText("Continue" if paused else "Debug")
        self.debug_action.setToolTip("Continue to the next breakpoint (F5)" if paused
                                     else "Run under the debugger: stop at breakpoints (F5)")
        self.debug_action.setEnabled(paused or not running)
        self.step_action.setEnabled(paused or not running or self.bridge.debugging)
        self.stop_action.setEnabled(running)

    def _run_started(self, start: RunStart) -> None:
        self.pending.show_point(start.run.pause, live=False)  # a resumed execution: where it stood
        self._update_actions()

    def _run_finished(self, _outcome: RunOutcome) -> None:
        self.pending.show_point(None)
        self._update_actions()

    def breakpoints_if_set(self) -> Breakpoints | None:
        """This window's breakpoints when any is set (a re-run or replay then runs under the debugger)."""
        bp = self.breakpoints
        any_set = bp.nodes or bp.before_model or bp.after_model or bp.before_tool or bp.after_tool_result or bp.on_tool_error
        return bp if any_set else None

    def show_stored_pause(self, where: dict[str, Any] | None) -> None:
        """A stored execution's pause point, read-only in the Pending tab (None: not paused)."""
        self.pending.show_point(where, live=False)
        if where is not None:
            self._bring_pending()
        elif self.runs.output.currentWidget() is self.pending:
            self.runs.output.setCurrentWidget(self.runs.output.steps)

    def _read_only_changed(self, read_only: bool) -> None:
        if not read_only:
            self.pending.show_point(None)
        self.draw_breakpoints()

    # ----- closing -------------------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.window and event.type() == QEvent.Type.Close:
            QTimer.singleShot(0, self, self._after_close)  # the window may still refuse to close
        return False

    def _after_close(self) -> None:
        """The window closed while paused: leave the execution stored as paused, to resume later."""
        if not self.window.isVisible() and self.bridge.detach():
            self.runs.show_status("The paused execution is stored: resume it from Executions")
