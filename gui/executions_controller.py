"""Stored executions in the editor: the Executions dock beside the output panel, opening one
read-only, copying its workflow to the editor, resuming, re-running and replaying it.

`ExecutionsController(runs, debug, window, bridge)`; the stored executions come from the bridge,
a resumed or re-run execution runs with the debugger's breakpoints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDockWidget, QInputDialog

from engine.run_state import RunChanges
from engine.errors import MiniN8nError
from engine.run_state import RunOutcome
from gui.bridge import RunBridge, RunStart
from gui.panels.executions import ExecutionsPanel

if TYPE_CHECKING:
    from gui.debug_controller import DebugController
    from gui.main_window import MainWindow
    from gui.run_controller import RunController


class ExecutionsController(QObject):
    """Owns the Executions dock and what its buttons and the read-only banner ask for."""

    def __init__(self, runs: RunController, debug: DebugController, window: MainWindow, bridge: RunBridge) -> None:
        super().__init__(runs)
        self.runs = runs
        self.debug = debug
        self.window = window
        self.bridge = bridge
        self.panel = ExecutionsPanel()
        self._rerun_from: tuple[str, int] | None = None
        self._replaying: str | None = None
        self._viewing: str | None = None  # the stored execution shown read-only
        self._install_dock()

        panel = self.panel
        panel.open_requested.connect(self.open_execution)
        panel.copy_requested.connect(self.copy_to_editor)
        panel.resume_requested.connect(self.resume)
        panel.rerun_requested.connect(self.rerun)
        panel.replay_requested.connect(self.replay)
        panel.delete_requested.connect(self.delete_execution)
        panel.refresh_requested.connect(self.refresh)
        runs.output.steps.row_selected.connect(
            lambda row: panel.set_rerun_iteration(row.iterations[0] if row is not None else None))
        runs.run_shown.connect(self._run_shown)
        bridge.run_started.connect(self._run_started)
        bridge.run_changed.connect(self._run_changed)
        bridge.busy_changed.connect(panel.set_busy)
        window.read_only_changed.connect(self._read_only_changed)
        window.act_copy_to_editor.triggered.connect(self._copy_viewed)
        self.refresh()

    def _install_dock(self) -> None:
        window = self.window
        self.dock = QDockWidget("Executions", window)
        self.dock.setObjectName("executionsDock")
        self.dock.setWidget(self.panel)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
        # beside the output, not behind it: an opened execution's steps show next to the list
        window.splitDockWidget(self.runs.output_dock, self.dock, Qt.Orientation.Horizontal)
        window.resizeDocks([self.runs.chat_dock, self.runs.output_dock, self.dock], [320, 700, 420],
                           Qt.Orientation.Horizontal)
        self.dock.visibilityChanged.connect(lambda shown: shown and self.refresh())
        self.debug.debug_menu.addSeparator()
        self.debug.debug_menu.addAction(self.dock.toggleViewAction())
        window.run_toolbar.addAction(self.dock.toggleViewAction())

    # ----- the list ------------------------------------------------------------------------------
    def refresh(self) -> None:
        """List the stored executions again."""
        self.panel.show_rows(self.bridge.executions())

    def delete_execution(self, execution_id: str) -> None:
        try:
            self.bridge.delete_execution(execution_id)
        except MiniN8nError as exc:
            self.runs.show_status(str(exc))
        self.refresh()

    # ----- looking at one ------------------------------------------------------------------------
    def open_execution(self, execution_id: str) -> bool:
        """Show a stored execution read-only: its workflow, statuses, run log, steps and chat."""
        if self.bridge.running:
            self.runs.show_status("A run is going: stop it before opening another execution")
            return False
        try:
            stored = self.bridge.open_execution(execution_id)
        except MiniN8nError as exc:
            self.runs.show_status(str(exc))
            self.refresh()
            return False
        state = stored.state
        self.window.enter_read_only(state.workflow, execution_id)
        self._viewing = execution_id
        self.runs.show_stored(stored)
        self.debug.draw_breakpoints()
        self.debug.show_stored_pause(state.pause if state.status == "paused" else None)
        self.dock.show()
        self.panel.show_report(f"Showing execution {execution_id} ({state.status}) of “{state.workflow.name}”, "
                               "read-only: Copy to editor to change and run it.")
        self.panel.select(execution_id)
        return True

    def copy_to_editor(self, execution_id: str) -> bool:
        """n8n's "debug in editor": the workflow as it ran becomes the editor's document."""
        if self.bridge.running:
            self.runs.show_status("A run is going: stop it first")
            return False
        try:
            stored = self.bridge.open_execution(execution_id)
        except MiniN8nError as exc:
            self.runs.show_status(str(exc))
            return False
        self.window.leave_read_only()
        if not self.window.confirm_discard():
            return False
        self.window.load_document(stored.state.workflow.model_copy(deep=True))
        self.runs.show_stored(stored, read_only=False)
        self.panel.show_report(f"Copied the workflow of execution {execution_id} to the editor")
        self.panel.select(execution_id)
        self.runs.show_status(f"Copied the workflow of execution {execution_id} to the editor")
        return True

    def _copy_viewed(self) -> None:
        if self._viewing is not None:
            self.copy_to_editor(self._viewing)

    def _read_only_changed(self, read_only: bool) -> None:
        if not read_only:
            self._viewing = None
            self.runs.leave_stored()

    # ----- running one again ---------------------------------------------------------------------
    def resume(self, execution_id: str) -> None:
        """Continue a paused or crashed execution, with this window's breakpoints."""
        if not self.bridge.running:
            self.bridge.resume(execution_id, self.debug.breakpoints)

    def rerun(self, execution_id: str, iteration: int | None = None) -> None:
        """A new run reusing the recorded results up to `iteration` (the selected steps row's)."""
        if self.bridge.running:
            return
        if iteration is None:
            viewed = self.runs.viewed
            iteration = self.panel.rerun_iteration if viewed is not None and viewed.id == execution_id else None
        if iteration is None:
            iteration, ok = QInputDialog.getInt(self.window, "Re-run from iteration",
                                                "Reuse the recorded results up to iteration:", 1, 0, 10_000)
            if not ok:
                return
        self._rerun_from = (execution_id, iteration)
        self.bridge.rerun(execution_id, iteration, self.debug.breakpoints_if_set())

    def replay(self, execution_id: str) -> None:
        """Run it again on its recorded model replies and report the first divergence."""
        if self.bridge.running:
            return
        self._replaying = execution_id
        self.bridge.replay(execution_id, self.debug.breakpoints_if_set())

    # ----- runs ----------------------------------------------------------------------------------
    def _run_started(self, _start: RunStart) -> None:
        self._viewing = None
        self.refresh()

    def _run_changed(self, changes: RunChanges) -> None:
        if changes.pause and self.bridge.paused:
            self.refresh()  # listed as paused: it can be left and resumed later

    def _run_shown(self, outcome: RunOutcome) -> None:
        self.refresh()
        state = outcome.state
        if self._replaying is not None:
            source = self.bridge.replay_source
            divergence = source.divergence if source is not None else None
            if divergence is not None:
                text, problem = divergence.describe(), True
            elif outcome.status == "success":
                text, problem = f"Replay of {self._replaying}: no divergence — same model inputs and tool results", False
            else:
                text, problem = f"Replay of {self._replaying} ended {outcome.status}", True
            self.panel.show_report(text, problem)
            self.runs.output.run_log.append_note(text, error=problem)
            self.runs.show_status(text)
            self._replaying = None
        elif self._rerun_from is not None:
            source_id, iteration = self._rerun_from
            source = self.bridge.replay_source
            used = f"reused {source.used_models} model replies and {source.used_tools} tool results" if source else ""
            self.panel.show_report(f"Re-run of {source_id} from iteration {iteration} ({state.id if state else ''}): "
                                   f"{outcome.status}; {used}")
            self._rerun_from = None
        if state is not None:
            self.panel.select(state.id)
