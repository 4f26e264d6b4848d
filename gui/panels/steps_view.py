"""The Intermediate steps tab: the table, tool and status filters, copy row, CSV / JSON export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from PySide6.QtCore import QAbstractItemModel, QEvent, QItemSelectionModel, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QSizePolicy,
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engine.steps_table import rows_to_csv, rows_to_json, StepRow
from .steps_model import COL_INPUT, COL_ITEM, COL_ITERATION, COL_OBSERVATION, COL_TOOL, StepsFilter, StepsModel

ALL = "All"
STATUSES = ["ok", "error", "pending"]


class StepsTable(QTableView):
    """The steps table. Rows that arrive below the last one it shows update its scroll bars only:
    QTableView lays out and repaints its whole viewport at every change of its row count, which
    during a run is every batch of rows (6-9 ms of a frame on a 2-core machine) though what it
    shows has not changed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows_below = False  # rows were added below the shown ones since the last layout...
        self._other_change = False  # ...and nothing else changed the rows

    def setModel(self, model: QAbstractItemModel | None) -> None:  # noqa: N802
        super().setModel(model)
        if model is not None:
            model.rowsInserted.connect(self._rows_inserted)
            for changed in (model.rowsRemoved, model.rowsMoved, model.modelReset, model.layoutChanged,
                            model.columnsInserted, model.columnsRemoved):
                changed.connect(self._rows_changed)

    def _rows_inserted(self, parent: QModelIndex, first: int, _last: int) -> None:
        last_shown = self.rowAt(self.viewport().height() - 1)  # -1: the rows end above the viewport's bottom
        if not parent.isValid() and 0 <= last_shown < first:
            self._rows_below = True
        else:
            self._other_change = True

    def _rows_changed(self, *_args: object) -> None:
        self._other_change = True

    def doItemsLayout(self) -> None:  # noqa: N802
        below_only = self._rows_below and not self._other_change
        self._rows_below = self._other_change = False
        if below_only:
            self.updateGeometries()
        else:
            super().doItemsLayout()


class StepsView(QWidget):
    """Table of every tool call and final answer of the run; emits `row_selected` for the detail tab."""

    row_selected = Signal(object)  # StepRow | None

    def __init__(self, model: StepsModel | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model or StepsModel(self)
        self.proxy = StepsFilter(self)
        self.proxy.setSourceModel(self.model)

        self.tool_filter = QComboBox()
        self.tool_filter.addItem(ALL)
        self.tool_filter.setMinimumContentsLength(12)
        self.tool_filter.currentTextChanged.connect(lambda text: self.proxy.set_tool(None if text == ALL else text))
        self.status_filter = QComboBox()
        self.status_filter.addItems([ALL, *STATUSES])
        self.status_filter.currentTextChanged.connect(lambda text: self.proxy.set_status(None if text == ALL else text))
        self.summary = QLabel()
        self.summary.setObjectName("stepsSummary")
        # its text changes with every batch of rows: its width must not re-lay out the window each time
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        copy_button = QPushButton("Copy row")
        copy_button.clicked.connect(self.copy_selected)
        export_button = QPushButton("Export…")
        export_menu = QMenu(export_button)
        export_menu.addAction("CSV…", lambda: self._export_dialog("csv"))
        export_menu.addAction("JSON…", lambda: self._export_dialog("json"))
        export_button.setMenu(export_menu)

        bar = QHBoxLayout()
        bar.addWidget(QLabel("Tool"))
        bar.addWidget(self.tool_filter)
        bar.addWidget(QLabel("Status"))
        bar.addWidget(self.status_filter)
        bar.addSpacing(12)
        bar.addWidget(self.summary, 1)
        bar.addWidget(copy_button)
        bar.addWidget(export_button)

        self.table = StepsTable()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        for col, width in ((COL_ITERATION, 70), (COL_ITEM, 40), (COL_TOOL, 130), (COL_INPUT, 200), (COL_OBSERVATION, 260),
                           (5, 60), (6, 64), (7, 70), (8, 76), (9, 72)):
            header.resizeSection(col, width)
        header.setSectionResizeMode(COL_OBSERVATION, QHeaderView.ResizeMode.Stretch)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        copy_action = QAction("Copy row as JSON (Ctrl+C)", self.table)
        copy_action.triggered.connect(self.copy_selected)
        self.table.addAction(copy_action)
        self.table.installEventFilter(self)  # Ctrl+C copies the row as JSON, not one cell's text

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.table)

        self._tools: set[str] = set()
        self._iterations: set[tuple[Any, ...]] = set()
        self._calls = 0
        self._failed: set[int] = set()
        self._several_items = False  # the Item column shows only once a row has an item other than 0
        self.table.setColumnHidden(COL_ITEM, True)
        # the summary and the tool list count every row, shown or filtered out
        self.model.book_rows_added.connect(self._rows_inserted)
        self.model.book_cleared.connect(self._refresh_tools)
        self.model.book_rows_changed.connect(self._count_failed)
        self._update_summary()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.table and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) \
                and event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selected()
            return True
        return super().eventFilter(watched, event)

    # ----- selection -----------------------------------------------------------------------------
    def selected_row(self) -> StepRow | None:
        index = self.table.selectionModel().currentIndex()
        if not index.isValid():
            return None
        return self.proxy.row_at(index.row())

    def select_row(self, proxy_row: int) -> None:
        index = self.proxy.index(proxy_row, 0)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.scrollTo(index)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.row_selected.emit(self.proxy.row_at(current.row()) if current.isValid() else None)

    # ----- copy and export -----------------------------------------------------------------------
    def copy_selected(self) -> str | None:
        row = self.selected_row()
        if row is None:
            return None
        text = json.dumps(row.to_json(), ensure_ascii=False, indent=2)
        QGuiApplication.clipboard().setText(text)
        return text

    def export(self, path: str | Path, fmt: str | None = None) -> Path:
        """Write the visible rows (filtered and sorted as shown) as CSV or JSON."""
        path = Path(path)
        fmt = fmt or ("csv" if path.suffix.lower() == ".csv" else "json")
        rows = self.proxy.visible_rows()
        path.write_text(rows_to_csv(rows) if fmt == "csv" else rows_to_json(rows), encoding="utf-8")
        return path

    def _export_dialog(self, fmt: str) -> None:
        from PySide6.QtWidgets import QFileDialog

        name, _ = QFileDialog.getSaveFileName(self, f"Export steps as {fmt.upper()}", f"steps.{fmt}",
                                              f"{fmt.upper()} files (*.{fmt})")
        if name:
            self.export(name, fmt)

    # ----- keeping the filters in step with the rows ---------------------------------------------
    def _rows_inserted(self, first: int, last: int) -> None:
        rows = self.model.rows[first:last + 1]
        new = {row.tool for row in rows} - self._tools
        if new:
            self._tools |= new
            self._sync_tool_filter()
        self._iterations.update((r.agent, r.iterations, r.item) for r in rows)
        if not self._several_items and any(r.item for r in rows):
            self._several_items = True
            self.table.setColumnHidden(COL_ITEM, False)
        self._calls += sum(1 for r in rows if r.kind == "tool")
        self._count_failed(range(first, last + 1))

    def _count_failed(self, book_rows: Iterable[int]) -> None:
        rows = self.model.rows
        for row in (rows[i] for i in book_rows):
            if row.failed:
                self._failed.add(id(row))
            else:
                self._failed.discard(id(row))
        self._update_summary()

    def _refresh_tools(self) -> None:
        rows = self.model.rows
        self._tools = {row.tool for row in rows}
        self._iterations = set()
        self._calls = 0
        self._failed = set()
        self._several_items = False
        self.table.setColumnHidden(COL_ITEM, True)
        self._sync_tool_filter()
        if rows:
            self._rows_inserted(0, len(rows) - 1)
        else:
            self._update_summary()

    def _sync_tool_filter(self) -> None:
        current = self.tool_filter.currentText()
        self.tool_filter.blockSignals(True)
        self.tool_filter.clear()
        self.tool_filter.addItems([ALL, *sorted(self._tools)])
        self.tool_filter.setCurrentText(current if current in self._tools else ALL)
        self.tool_filter.blockSignals(False)

    def _update_summary(self) -> None:
        if not self.model.rows:
            self.summary.setText("No steps yet: send a chat message or run the workflow")
            return
        failed = len(self._failed)
        text = f"{_count(len(self._iterations), 'iteration')} · {_count(self._calls, 'tool call')}"
        self.summary.setText(text + (f" · {failed} failed" if failed else ""))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
