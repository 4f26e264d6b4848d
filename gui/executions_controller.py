"""Stored executions in the editor: the Executions dock beside the output panel, opening one
read-only, copying its workflow to the editor, resuming, re-running and replaying it.

`ExecutionsController(runs, debug, window, bridge)`; the stored executions come from the bridge,
a resumed or re-run execution runs with the debugger's breakpoints. The panel's source may be a
server: its executions come through the bridge (engine/remote.py) without stopping the window,
open read-only, copy to the editor, and re-run or replay here as new local executions.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDockWidget

from engine.run_outcome import RunOutcome
from engine.run_state import RunChanges
from engine.errors import MiniN8nError
from engine.start import read_input
from gui.bridge import RunBridge, RunStart, StoredRun
from gui.first_frame import after_first_frame
from gui.panels.executions import LOCAL, ExecutionsPanel
from gui.panels.server_dialog import ServerDialog

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
        self._server_runs: dict[str, StoredRun] = {}  # the listed server's executions fetched so far
        self._fetching: asyncio.Task[Any] | None = None  # the server list or execution on its way
        self._install_dock()

        panel = self.panel
        panel.open_requested.connect(self.open_execution)
        panel.copy_requested.connect(self.copy_to_editor)
        panel.resume_requested.connect(self.resume)
        panel.rerun_requested.connect(self.rerun)
        panel.replay_requested.connect(self.replay)
        panel.delete_requested.connect(self.delete_execution)
        panel.refresh_requested.connect(self.refresh)
        panel.source_changed.connect(self._source_changed)
        panel.sources_requested.connect(lambda: self._show_servers(self.panel.source))
        panel.add_server_requested.connect(self.add_server)
        panel.forget_server_requested.connect(self.forget_server)
        runs.output.steps.row_selected.connect(
            lambda row: panel.set_rerun_iteration(row.iterations[0] if row is not None else None))
        runs.run_shown.connect(self._run_shown)
        bridge.run_started.connect(self._run_started)
        bridge.run_changed.connect(self._run_changed)
        bridge.busy_changed.connect(panel.set_busy)
        window.read_only_changed.connect(self._read_only_changed)
        window.act_copy_to_editor.triggered.connect(self._copy_viewed)
        self._painted = False  # the store is listed once the window has shown its first frame
        after_first_frame(window, self._first_frame_shown)

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
        self.dock.visibilityChanged.connect(self._visibility_changed)
        self.debug.debug_menu.addSeparator()
        self.debug.debug_menu.addAction(self.dock.toggleViewAction())
        window.run_toolbar.addAction(self.dock.toggleViewAction())

    # ----- the list ------------------------------------------------------------------------------
    def _first_frame_shown(self) -> None:
        self._painted = True
        if self.dock.isVisible():
            self.refresh()

    def _visibility_changed(self, shown: bool) -> None:
        """A dock shown again lists anew; the window's first show waits for its first frame."""
        if shown and self._painted:
            self.refresh()

    def refresh(self) -> None:
        """List the stored executions again (a server's: fetched in the background)."""
        if not self.panel.remote:
            self.panel.show_rows(self.bridge.executions())
            return
        server = self.panel.source
        self._server_runs.clear()
        self._fetch(self._list_server(server))

    def _fetch(self, work: Any) -> "asyncio.Task[Any]":
        """One request to the server at a time: a newer one replaces what was on its way."""
        if self._fetching is not None and not self._fetching.done():
            self._fetching.cancel()
        self._fetching = asyncio.ensure_future(work)
        return self._fetching

    async def _list_server(self, server: str) -> None:
        try:
            rows = await self.bridge.server_executions(server)
        except MiniN8nError as exc:
            if self.panel.source == server:
                self.panel.show_rows([])
                self.panel.show_report(str(exc), problem=True)
            return
        if self.panel.source == server:
            self.panel.show_rows(rows)
            self.panel.show_report(f"{len(rows)} execution{'s' if len(rows) != 1 else ''} on "
                                   f"{self.panel.source_box.currentText()}")

    # ----- sources -------------------------------------------------------------------------------
    def _show_servers(self, current: str = LOCAL) -> None:
        try:
            servers = self.bridge.servers()
        except MiniN8nError as exc:  # an unreadable credential file: said, the local store still lists
            self.panel.show_report(str(exc), problem=True)
            servers = []
        self.panel.set_servers(servers, current)

    def _source_changed(self, _source: str) -> None:
        self.panel.show_report(None)
        self.refresh()

    def add_server(self) -> bool:
        """Ask for a server (URL and API key) and list its executions."""
        dialog = ServerDialog(self.bridge.save_server, self.window)
        if dialog.exec() != ServerDialog.DialogCode.Accepted or dialog.server is None:
            return False
        self._show_servers(dialog.server.id)
        self.refresh()
        return True

    def forget_server(self, server: str) -> None:
        if server != LOCAL:
            self.bridge.forget_server(server)
            self._show_servers(LOCAL)
            self.refresh()

    async def _server_run(self, execution_id: str) -> StoredRun:
        stored = self._server_runs.get(execution_id)
        if stored is None:
            stored = await self.bridge.open_server_execution(self.panel.source, execution_id)
            self._server_runs[execution_id] = stored
        return stored

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
        if self.panel.remote:
            self._fetch(self._open_server_execution(execution_id))
            return True
        try:
            stored = self.bridge.open_execution(execution_id)
        except MiniN8nError as exc:
            self.runs.show_status(str(exc))
            self.refresh()
            return False
        self._show_read_only(stored, execution_id)
        return True

    async def _server_run_or_say(self, execution_id: str) -> StoredRun | None:
        """A server's execution, or None when it cannot be read (said in the panel and the status
        bar) or a run began while it was fetched."""
        try:
            stored = await self._server_run(execution_id)
        except MiniN8nError as exc:
            self.panel.show_report(str(exc), problem=True)
            self.runs.show_status(str(exc))
            return None
        return None if self.bridge.running else stored

    async def _open_server_execution(self, execution_id: str) -> None:
        stored = await self._server_run_or_say(execution_id)
        if stored is not None:
            self._show_read_only(stored, f"{execution_id} on {self.panel.source_box.currentText()}")

    def _show_read_only(self, stored: StoredRun, shown_as: str) -> None:
        state = stored.state
        execution_id = state.id
        self.window.enter_read_only(state.workflow, shown_as)
        self._viewing = execution_id
        self.runs.show_stored(stored)
        self.debug.draw_breakpoints()
        self.debug.show_stored_pause(state.pause if state.status == "paused" else None)
        self.dock.show()
        self.panel.show_report(f"Showing execution {shown_as} ({state.status}) of “{state.workflow.name}”, "
                               "read-only: Copy to editor to change and run it.")
        self.panel.select(execution_id)

    def copy_to_editor(self, execution_id: str) -> bool:
        """n8n's "debug in editor": the workflow as it ran becomes the editor's document."""
        if self.bridge.running:
            self.runs.show_status("A run is going: stop it first")
            return False
        if self.panel.remote:
            self._fetch(self._copy_server_execution(execution_id))
            return True
        try:
            stored = self.bridge.open_execution(execution_id)
        except MiniN8nError as exc:
            self.runs.show_status(str(exc))
            return False
        return self._copy(stored, execution_id)

    async def _copy_server_execution(self, execution_id: str) -> None:
        stored = await self._server_run_or_say(execution_id)
        if stored is not None:
            self._copy(stored, execution_id)

    def _copy(self, stored: StoredRun, execution_id: str) -> bool:
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
        """Continue a paused or crashed execution, with this window's breakpoints; one waiting at a
        Wait node for a webhook call or a form asks for the request's item first."""
        from PySide6.QtWidgets import QInputDialog

        if self.bridge.running:
            return
        try:
            call = self.bridge.waiting_call(execution_id)
        except MiniN8nError as exc:
            self.runs.show_status(str(exc))
            return
        items = None
        if call is not None:
            text, ok = QInputDialog.getMultiLineText(
                self.window, "Resume a waiting execution",
                f"Execution {execution_id} waits for {call}.\nThe request's item as JSON (an object or a list of objects):",
                '{\n  "body": {}\n}')
            if not ok:
                return
            try:
                items = read_input(text)
            except MiniN8nError as exc:
                self.runs.show_status(str(exc))
                return
        self.bridge.resume(execution_id, self.debug.breakpoints, items)

    def rerun(self, execution_id: str, iteration: int | None = None) -> None:
        """A new run reusing the recorded results up to `iteration` (the selected steps row's)."""
        from PySide6.QtWidgets import QInputDialog

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
        if self.panel.remote:
            self._fetch(self._rerun_server_execution(execution_id, iteration, False))
            return
        self.bridge.rerun(execution_id, iteration, self.debug.breakpoints_if_set())

    def replay(self, execution_id: str) -> None:
        """Run it again on its recorded model replies and report the first divergence."""
        if self.bridge.running:
            return
        self._replaying = execution_id
        if self.panel.remote:
            self._fetch(self._rerun_server_execution(execution_id, None, True))
            return
        self.bridge.replay(execution_id, self.debug.breakpoints_if_set())

    async def _rerun_server_execution(self, execution_id: str, iteration: int | None, compare: bool) -> None:
        """A server's execution run again here, on its recorded results: a new local execution."""
        try:
            stored = await self._server_run(execution_id)
        except MiniN8nError as exc:
            self._rerun_from = self._replaying = None
            self.panel.show_report(str(exc), problem=True)
            return
        if not self.bridge.running:
            self.panel.set_servers(self.bridge.servers(), LOCAL)  # the new execution is this computer's
            self.panel.show_rows(self.bridge.executions())
            self.bridge.rerun_recorded(stored.state, iteration, compare, self.debug.breakpoints_if_set())

    # ----- runs ----------------------------------------------------------------------------------
    def _run_started(self, _start: RunStart) -> None:
        self._viewing = None
        self._refresh_local()

    def _refresh_local(self) -> None:
        """A local run changed the local list (a server's list is refreshed when asked)."""
        if not self.panel.remote:
            self.refresh()

    def _run_changed(self, changes: RunChanges) -> None:
        if changes.pause and self.bridge.paused:
            self._refresh_local()  # listed as paused: it can be left and resumed later

    def _run_shown(self, outcome: RunOutcome) -> None:
        self._refresh_local()
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
