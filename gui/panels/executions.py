"""The Executions panel: every stored execution, newest first, and what can be done with one.

Open shows it (statuses on the canvas, run log and steps in the output panel, read-only);
Copy to editor loads the workflow as it ran; Resume continues a paused or crashed one;
Re-run from iteration N and Replay start new executions from its recorded results.
The source above the list is this computer's store or a server (`mini-n8n serve`): a server's
executions open, copy, re-run and replay here the same way; they are resumed and deleted there.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engine.run_data import ENDED

from .columns_model import ColumnsTableModel, Index

if TYPE_CHECKING:  # the store and the servers load with the first listing, after the first frame
    from engine.remote import Server
    from engine.store.base import ExecutionSummary

COLUMNS = ["Status", "Started", "Took", "Mode", "Workflow", "Execution", "Error"]
COL_STATUS, COL_STARTED, COL_TOOK, COL_MODE, COL_WORKFLOW, COL_ID, COL_ERROR = range(len(COLUMNS))
STATUS_COLOURS = {"success": "#1e7b34", "error": "#a1160a", "crashed": "#a1160a", "cancelled": "#8a8a8a",
                  "paused": "#b06000", "running": "#1a6fb5"}
RESUMABLE = ("paused", "crashed")
LOCAL = ""  # the source id of this computer's store


def started_text(started_ms: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started_ms / 1000))


def took_text(summary: ExecutionSummary) -> str:
    ms = summary.duration_ms
    if ms is None:
        return ""
    return f"{ms:.0f} ms" if ms < 10_000 else f"{ms / 1000:.1f} s"


class ExecutionsModel(ColumnsTableModel):
    """The store's execution summaries as table rows."""

    COLUMNS = COLUMNS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[ExecutionSummary] = []

    def set_rows(self, rows: list[ExecutionSummary]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def row_total(self) -> int:
        return len(self.rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self.rows):
            return None
        row = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (row.status, started_text(row.started_at), took_text(row), row.mode, row.workflow_name,
                    row.id, (row.error or "").split("\n", 1)[0])[col]
        if role == Qt.ItemDataRole.ForegroundRole and col == COL_STATUS:
            return QBrush(QColor(STATUS_COLOURS.get(row.status, "#444")))
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.error if col == COL_ERROR and row.error else None
        if role == Qt.ItemDataRole.TextAlignmentRole and col == COL_TOOK:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class SourceBox(QComboBox):
    """The source picker; says when its list is about to open, so the saved servers are read then
    (not while the editor starts)."""

    about_to_open = Signal()

    def showPopup(self) -> None:
        self.about_to_open.emit()
        super().showPopup()


class ExecutionsPanel(QWidget):
    """Lists the stored executions it is given; its buttons ask the owner to act on the selected one."""

    refresh_requested = Signal()
    delete_requested = Signal(str)
    open_requested = Signal(str)
    copy_requested = Signal(str)
    resume_requested = Signal(str)
    rerun_requested = Signal(str)
    replay_requested = Signal(str)
    source_changed = Signal(str)  # LOCAL or a server's id
    sources_requested = Signal()  # the source list opens: the owner offers the saved servers
    add_server_requested = Signal()
    forget_server_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source_box = SourceBox()
        self.source_box.about_to_open.connect(self.sources_requested.emit)
        self.source_box.setObjectName("executionsSource")
        self.source_box.setToolTip("Whose executions are listed: this computer's, or a server's (mini-n8n serve)")
        self.source_box.addItem("This computer", LOCAL)
        self.source_box.currentIndexChanged.connect(lambda _i: self._source_picked())
        self.source_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.source_box.setMinimumContentsLength(24)
        self.add_server_button = QPushButton("Add server…")
        self.add_server_button.setToolTip("List the executions of a server (mini-n8n serve): its URL and API key")
        self.forget_server_button = QPushButton("Forget")
        self.forget_server_button.setToolTip("Remove this server and its API key from your credentials")
        self.add_server_button.clicked.connect(self.add_server_requested.emit)
        self.forget_server_button.clicked.connect(lambda: self.forget_server_requested.emit(self.source))
        self.model = ExecutionsModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        for col, width in ((COL_STATUS, 72), (COL_STARTED, 140), (COL_TOOK, 70), (COL_MODE, 60),
                           (COL_WORKFLOW, 170), (COL_ID, 110)):
            header.resizeSection(col, width)
        header.setSectionResizeMode(COL_ERROR, QHeaderView.ResizeMode.Stretch)
        self.table.doubleClicked.connect(lambda _index: self._ask(self.open_requested))
        self.table.selectionModel().selectionChanged.connect(lambda *_: self.update_buttons())

        self.refresh_button = QPushButton("Refresh")
        self.open_button = QPushButton("Open")
        self.open_button.setToolTip("Show its statuses on the canvas and its run log and steps, read-only")
        self.copy_button = QPushButton("Copy to editor")
        self.copy_button.setToolTip("Load the workflow as it ran into the editor, to change and run it again")
        self.resume_button = QPushButton("Resume")
        self.resume_button.setToolTip("Continue a paused or crashed execution from where it stopped")
        self.rerun_button = QPushButton("Re-run from iteration…")
        self.rerun_button.setToolTip("A new run that reuses the recorded model replies and tool results up to the "
                                     "iteration of the row selected in Intermediate steps, then goes on live")
        self.replay_button = QPushButton("Replay")
        self.replay_button.setToolTip("Run it again on its recorded model replies (tools live) and report the first "
                                      "place the new run differs")
        self.delete_button = QPushButton("Delete")
        self.refresh_button.clicked.connect(self.refresh_requested.emit)
        self.open_button.clicked.connect(lambda: self._ask(self.open_requested))
        self.copy_button.clicked.connect(lambda: self._ask(self.copy_requested))
        self.resume_button.clicked.connect(lambda: self._ask(self.resume_requested))
        self.rerun_button.clicked.connect(lambda: self._ask(self.rerun_requested))
        self.replay_button.clicked.connect(lambda: self._ask(self.replay_requested))
        self.delete_button.clicked.connect(self.delete_selected)
        self.report = QLabel()
        self.report.setObjectName("executionsReport")
        self.report.setWordWrap(True)
        self.report.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.report.hide()

        # two rows of buttons, so the panel fits beside the output panel on a laptop screen
        shown = QHBoxLayout()
        for button in (self.open_button, self.copy_button):
            shown.addWidget(button)
        shown.addStretch(1)
        shown.addWidget(self.delete_button)
        shown.addWidget(self.refresh_button)
        again = QHBoxLayout()
        for button in (self.resume_button, self.rerun_button, self.replay_button):
            again.addWidget(button)
        again.addStretch(1)
        source = QHBoxLayout()  # a row of its own, so a server's URL reads whole
        source.addWidget(self.source_box, 1)
        source.addWidget(self.add_server_button)
        source.addWidget(self.forget_server_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addLayout(source)
        layout.addLayout(shown)
        layout.addLayout(again)
        layout.addWidget(self.report)
        layout.addWidget(self.table, 1)
        self.rerun_iteration: int | None = None
        self.busy = False
        self.update_buttons()

    # ----- source --------------------------------------------------------------------------------
    @property
    def source(self) -> str:
        """LOCAL, or the id of the server whose executions are listed."""
        return str(self.source_box.currentData() or LOCAL)

    @property
    def remote(self) -> bool:
        return self.source != LOCAL

    def set_servers(self, servers: list[Server], current: str = LOCAL) -> None:
        """The sources offered: this computer and each saved server (its URL; its key masked in the tip)."""
        box = self.source_box
        box.blockSignals(True)
        box.clear()
        box.addItem("This computer", LOCAL)
        for server in servers:
            box.addItem(server.label, server.id)
            box.setItemData(box.count() - 1, f"{server.base_url}\nAPI key {server.masked_key}", Qt.ItemDataRole.ToolTipRole)
        index = box.findData(current)
        box.setCurrentIndex(index if index >= 0 else 0)
        box.blockSignals(False)
        self.update_buttons()

    def _source_picked(self) -> None:
        self.model.set_rows([])
        self.update_buttons()
        self.source_changed.emit(self.source)

    # ----- rows ----------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Ask for the list again."""
        self.refresh_requested.emit()

    def show_rows(self, rows: list[ExecutionSummary]) -> None:
        """Show these executions, keeping the selected one selected."""
        selected = self.selected()
        self.model.set_rows(rows)
        if selected is not None:
            self.select(selected.id)
        self.update_buttons()

    def select(self, execution_id: str) -> bool:
        for row, summary in enumerate(self.model.rows):
            if summary.id == execution_id:
                self.table.selectRow(row)
                return True
        return False

    def selected(self) -> ExecutionSummary | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or rows[0].row() >= len(self.model.rows):
            return None
        return self.model.rows[rows[0].row()]

    def delete_selected(self) -> None:
        summary = self.selected()
        if summary is not None and summary.status != "running":
            self.delete_requested.emit(summary.id)

    # ----- buttons -------------------------------------------------------------------------------
    def set_rerun_iteration(self, iteration: int | None) -> None:
        """The iteration "Re-run from" starts after (from the selected steps row)."""
        self.rerun_iteration = iteration
        self.rerun_button.setText(f"Re-run from iteration {iteration}" if iteration else "Re-run from iteration…")
        self.update_buttons()

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.update_buttons()

    def update_buttons(self) -> None:
        summary = self.selected()
        status = summary.status if summary is not None else None
        self.open_button.setEnabled(summary is not None)
        self.copy_button.setEnabled(summary is not None)
        local = not self.remote
        self.forget_server_button.setEnabled(not local)
        self.delete_button.setEnabled(local and summary is not None and status != "running")
        self.resume_button.setEnabled(local and status in RESUMABLE and not self.busy)
        self.rerun_button.setEnabled(status in ENDED and not self.busy)
        self.replay_button.setEnabled(status in ENDED and not self.busy)

    def show_report(self, text: str | None, problem: bool = False) -> None:
        """A line above the list: what is shown, or the result of a replay."""
        self.report.setVisible(bool(text))
        self.report.setText(text or "")
        self.report.setStyleSheet("color:#a1160a" if problem else "")

    def _ask(self, signal: Signal) -> None:
        summary = self.selected()
        if summary is not None:
            signal.emit(summary.id)  # type: ignore[attr-defined]
