"""The Intermediate steps table model, and the proxy that filters it by tool and status.

A QAbstractTableModel over StepBook rows: rows arrive in blocks (one beginInsertRows per
batch of hook events), so 100,000 rows stay cheap to append and to scroll. Sorting happens in
the model with one Python sort (a permutation of the rows), not in the proxy's per-pair
comparisons, which would call back into Python millions of times on a big table.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QModelIndex,
    QSortFilterProxyModel,
    Qt,
    QTimer,
)
from PySide6.QtGui import QBrush, QColor, QFont

from gui.bridge import FINAL_ANSWER, NodeAfter, RunUpdated, StepBook, StepRow, compact

from .columns_model import ColumnsTableModel, Index

ROW_ROLE = int(Qt.ItemDataRole.UserRole) + 1
SORT_ROLE = int(Qt.ItemDataRole.UserRole) + 2
DISPLAY = int(Qt.ItemDataRole.DisplayRole)
TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
BACKGROUND = int(Qt.ItemDataRole.BackgroundRole)
FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
FONT = int(Qt.ItemDataRole.FontRole)
ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

COLUMNS = ["Iteration", "Item", "Tool", "Tool input", "Observation", "Status", "Tool ms", "Tokens in",
           "Tokens out", "Model ms"]
COL_ITERATION, COL_ITEM, COL_TOOL, COL_INPUT, COL_OBSERVATION, COL_STATUS, COL_TOOL_MS, COL_IN, COL_OUT, COL_MODEL_MS = range(10)

NUMERIC_COLUMNS = frozenset({COL_ITEM, COL_TOOL_MS, COL_IN, COL_OUT, COL_MODEL_MS})

ERROR_BACKGROUND = QBrush(QColor("#fde2e1"))
ERROR_FOREGROUND = QBrush(QColor("#a1160a"))
ANSWER_BACKGROUND = QBrush(QColor("#e6f4ea"))
PENDING_FOREGROUND = QBrush(QColor("#8a8a8a"))
ITALIC = QFont()
ITALIC.setItalic(True)



def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def _first_line(text: str, limit: int = 160) -> str:
    line = text.split("\n", 1)[0]
    if len(line) > limit:
        return line[: limit - 1] + "…"
    return line + (" …" if "\n" in text else "")


class StepsModel(ColumnsTableModel):
    """Rows of tool calls and final answers; `feed(events)` adds a batch of hook events."""

    COLUMNS = COLUMNS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.book = StepBook(self._before_insert, self._after_insert)
        self._order: list[int] | None = None  # view row -> book row while sorted
        self._view_of: list[int] | None = None  # book row -> view row while sorted
        self._sort_spec: tuple[int, Qt.SortOrder] = (-1, Qt.SortOrder.AscendingOrder)
        self._pending_shift: tuple[int, int] | None = None
        self._resort = QTimer(self)
        self._resort.setSingleShot(True)
        self._resort.setInterval(250)
        self._resort.timeout.connect(lambda: self.sort(*self._sort_spec))

    # ----- feeding -------------------------------------------------------------------------------
    def feed(self, events: list[Any]) -> None:
        for event in events:
            if isinstance(event, NodeAfter):
                self.book.feed(event)
            elif isinstance(event, RunUpdated):  # an observation edited while paused
                self.book.update(event.node, event.task)
        self._commit()

    def finish(self, status: str = "cancelled") -> None:
        self.book.finish(status)
        self._commit()

    def clear(self) -> None:
        self.beginResetModel()
        self.book.clear()
        if self._order is not None:
            self._order, self._view_of = [], []
        self.endResetModel()

    def append_rows(self, rows: list[StepRow]) -> None:
        """Add ready-made rows (used to load saved steps and by the benchmark)."""
        self.book.stage(rows)
        self._commit()

    def _before_insert(self, pos: int, count: int) -> None:
        if self._order is None:
            self.beginInsertRows(QModelIndex(), pos, pos + count - 1)
            return
        end = len(self._order)  # while sorted, new rows show at the bottom until the re-sort
        self._pending_shift = (pos, count)
        self.beginInsertRows(QModelIndex(), end, end + count - 1)

    def _after_insert(self) -> None:
        if self._pending_shift is not None and self._order is not None:
            pos, count = self._pending_shift
            self._pending_shift = None
            if pos < len(self.book.rows) - count:
                self._order = [i + count if i >= pos else i for i in self._order]
            self._order.extend(range(pos, pos + count))
            self._view_of = self._inverse(self._order)
            self._resort.start()
        self.endInsertRows()

    def _commit(self) -> None:
        self.book.commit()
        changed = self.book.changed
        if not changed:
            return
        last_col = len(COLUMNS) - 1
        if self._view_of is None:
            first, last = min(changed), max(changed)
            self.dataChanged.emit(self.index(first, 0), self.index(last, last_col))
        else:
            for book_row in sorted(changed):
                view_row = self._view_of[book_row]
                self.dataChanged.emit(self.index(view_row, 0), self.index(view_row, last_col))
            self._resort.start()
        changed.clear()

    # ----- sorting -------------------------------------------------------------------------------
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Order the rows by `column` (-1: the order they happened in), keeping selections."""
        self._resort.stop()
        self._sort_spec = (column, order)
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        book_rows = [(self._book_row(i.row()), i.column()) for i in persistent]
        rows = self.book.rows
        if column < 0 or column >= len(COLUMNS):
            self._order = self._view_of = None
        else:
            keys = [self._sort_key(row, column) for row in rows]
            self._order = sorted(range(len(rows)), key=keys.__getitem__,
                                 reverse=order == Qt.SortOrder.DescendingOrder)
            self._view_of = self._inverse(self._order)
        moved = [self.index(self._view_row(b), c) for b, c in book_rows]
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()

    @staticmethod
    def _inverse(order: list[int]) -> list[int]:
        inverse = [0] * len(order)
        for view_row, book_row in enumerate(order):
            inverse[book_row] = view_row
        return inverse

    def _book_row(self, view_row: int) -> int:
        return view_row if self._order is None else self._order[view_row]

    def _view_row(self, book_row: int) -> int:
        return book_row if self._view_of is None else self._view_of[book_row]

    # ----- access --------------------------------------------------------------------------------
    @property
    def rows(self) -> list[StepRow]:
        """Rows in the order they happened (not the sorted view order)."""
        return self.book.rows

    def row_at(self, row: int) -> StepRow:
        """The row shown at view row `row`."""
        return self.book.rows[self._book_row(row)]

    # ----- QAbstractTableModel -------------------------------------------------------------------
    def row_total(self) -> int:
        return len(self.book.rows)

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        # Called for every visible cell and role on each paint: keep it to a few list lookups.
        r = index.row()
        rows = self.book.rows
        if r < 0 or r >= len(rows):
            return None
        row = rows[r] if self._order is None else rows[self._order[r]]
        if role == DISPLAY:
            cells = row.cells or self._cells(row)
            return cells[index.column()]
        if role == BACKGROUND:
            if row.failed:
                return ERROR_BACKGROUND
            return ANSWER_BACKGROUND if row.kind == "answer" else None
        if role == ALIGNMENT:
            return RIGHT if index.column() in NUMERIC_COLUMNS else None
        if role == FOREGROUND:
            if row.failed and index.column() == COL_STATUS:
                return ERROR_FOREGROUND
            return PENDING_FOREGROUND if row.status == "pending" else None
        if role == FONT:
            return ITALIC if row.kind != "tool" and index.column() == COL_TOOL else None
        if role == TOOLTIP:
            col = index.column()
            edits = row.edits_text() + "\n\n" if row.edits else ""
            if col == COL_OBSERVATION:
                return edits + row.observation
            if col == COL_INPUT and row.tool_input is not None:
                return edits + (row.cells or self._cells(row))[col]
            return edits.strip() or None
        if role == SORT_ROLE:
            return self._sort_key(row, index.column())
        if role == ROW_ROLE:
            return row
        return None

    @staticmethod
    def _cells(row: StepRow) -> tuple[str, ...]:
        """The display text of every column of `row`, made once (the book clears it on change)."""
        cells = (
            row.iteration_text,
            str(row.item),
            ("    " * row.depth + "└ " if row.depth else "") + ("✎ " if row.edited("reply") else "") + row.tool,
            "" if row.tool_input is None else ("✎ " if row.edited("toolInput") else "") + compact(row.tool_input),
            ("✎ " if row.edited_from is not None else "") + _first_line(row.observation),
            row.status,
            _ms(row.tool_ms),
            "" if row.tokens_in is None else str(row.tokens_in),
            "" if row.tokens_out is None else str(row.tokens_out),
            _ms(row.model_ms),
        )
        row.cells = cells
        return cells

    @staticmethod
    def _sort_key(row: StepRow, col: int) -> Any:
        if col == COL_ITERATION:
            return row.index  # the order the agent went through its iterations
        if col == COL_ITEM:
            return row.item
        if col in (COL_TOOL_MS, COL_IN, COL_OUT, COL_MODEL_MS):
            value = {COL_TOOL_MS: row.tool_ms, COL_IN: row.tokens_in, COL_OUT: row.tokens_out, COL_MODEL_MS: row.model_ms}[col]
            return -1.0 if value is None else float(value)
        if col == COL_TOOL:
            return row.tool
        if col == COL_STATUS:
            return row.status
        if col == COL_OBSERVATION:
            return row.observation
        return compact(row.tool_input) if row.tool_input is not None else ""


class StepsFilter(QSortFilterProxyModel):
    """Shows the rows of one tool and/or one status; sorts on raw values, not display text."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._tool: str | None = None
        self._status: str | None = None

    def set_tool(self, tool: str | None) -> None:
        self._change_filter(lambda: setattr(self, "_tool", tool or None))

    def set_status(self, status: str | None) -> None:
        self._change_filter(lambda: setattr(self, "_status", status or None))

    def _change_filter(self, change: Any) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.9
            self.beginFilterChange()
            change()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            change()
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:  # noqa: N802
        if self._tool is None and self._status is None:
            return True
        model = self.sourceModel()
        assert isinstance(model, StepsModel)
        row = model.row_at(source_row)
        if self._tool is not None and row.tool != self._tool:
            return False
        if self._status is not None:
            if self._status == "error":
                return row.failed
            return row.status == self._status
        return True

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sorting is the source model's (one Python sort); the proxy only filters."""
        model = self.sourceModel()
        if model is not None:
            model.sort(column, order)

    def row_at(self, proxy_row: int) -> StepRow:
        source = self.mapToSource(self.index(proxy_row, 0))
        model = self.sourceModel()
        assert isinstance(model, StepsModel)
        return model.row_at(source.row())

    def visible_rows(self) -> list[StepRow]:
        return [self.row_at(r) for r in range(self.rowCount())]


__all__ = ["StepsModel", "StepsFilter", "COLUMNS", "ROW_ROLE", "FINAL_ANSWER"]
