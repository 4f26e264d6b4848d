"""The Intermediate steps table model, and the proxy that filters it by tool and status.

A QAbstractTableModel over a run's step rows: rows arrive as the StepBook's diffs, in blocks
(one beginInsertRows per batch of hook events), so 100,000 rows stay cheap to append and to scroll. Sorting and
filtering happen in the model, each with one Python pass over the rows (the rows shown, in
order, as a list of book rows), not in a QSortFilterProxyModel's per-row and per-pair
callbacks, which call into Python hundreds of thousands of times on a big table. The proxy
the view uses is an identity proxy that hands both to the model.
"""

from __future__ import annotations

from bisect import bisect_left
from operator import attrgetter, itemgetter, neg
from typing import Any

from PySide6.QtCore import (
    QIdentityProxyModel,
    QModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QFont

from gui import theme
from engine.run_log import compact
from engine.steps_table import FINAL_ANSWER, StepRow, StepsDiff

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
SECOND = itemgetter(1)



class RowBrushes:
    """The table's row colours in one theme: a coloured row sets its text colour too, so the
    system palette's text (white in dark mode) never lands on a background it was not chosen for."""

    def __init__(self, current: theme.Theme) -> None:
        self.error_background = QBrush(current.error_fill)
        self.error_status = QBrush(current.error_text)
        self.answer_background = QBrush(current.answer_fill)
        self.text = QBrush(current.node_text)
        self.pending = QBrush(current.muted_text)


_BRUSHES: dict[bool, RowBrushes] = {}


def row_brushes() -> RowBrushes:
    """The brushes of the current theme (made once per theme: `data` runs for every painted cell)."""
    current = theme.current()
    brushes = _BRUSHES.get(current.dark)
    if brushes is None:
        brushes = _BRUSHES[current.dark] = RowBrushes(current)
    return brushes

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
    """Rows of tool calls and final answers, kept in step with a run's StepBook by `apply(diff)`.

    Qt's row signals speak of the rows shown (filtered, sorted); `book_rows_added`,
    `book_rows_changed` and `book_cleared` speak of every row, in the order they happened.
    While sorted, rows that arrive or change take their sorted place by a binary search in the
    shown rows' sort keys (a large batch is merged in at once), so a batch costs about what it
    holds, not a sort of the whole table.
    """

    COLUMNS = COLUMNS
    book_rows_added = Signal(int, int)  # first and last book row
    book_rows_changed = Signal(list)  # book rows
    book_cleared = Signal()

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[StepRow] = []  # the run's rows in the order they happened (the StepBook's)
        self._cells: dict[StepRow, tuple[str, ...]] = {}  # display texts, made when first shown
        self._order: list[int] | None = None  # view row -> book row while sorted or filtered
        self._view_of: list[int] | None = None  # book row -> view row (-1: filtered out), filtered and unsorted
        self._keys: list[Any] = []  # while sorted: book row -> its sort key when it was placed
        self._entries: list[tuple[Any, int]] = []  # while sorted: the shown rows' (key, ±book row), ascending
        self._sort_spec: tuple[int, Qt.SortOrder] = (-1, Qt.SortOrder.AscendingOrder)
        self._tool: str | None = None
        self._status: str | None = None
        self._resort_due = False  # sorted, but rows went in above others: placed again at once

    # ----- taking rows ---------------------------------------------------------------------------
    def apply(self, diff: StepsDiff) -> None:
        """Take what the run's StepBook changed: rows put in, rows that read differently now."""
        for pos, rows in diff.inserts:
            self._insert(pos, rows)
        if self._resort_due:
            self.sort(*self._sort_spec)
        if diff.changed:
            for row in diff.changed:
                self._cells.pop(row, None)
            self._rows_changed(sorted(row.index for row in diff.changed))

    def show_rows(self, rows: list[StepRow]) -> None:
        """Show these rows instead (a stored execution opened, a resumed one)."""
        self.clear()
        if rows:
            self._insert(0, list(rows))
            if self._resort_due:
                self.sort(*self._sort_spec)

    def clear(self) -> None:
        self.beginResetModel()
        self._rows = []
        self._cells.clear()
        self._resort_due = False
        self._install(self._arranged())
        self.endResetModel()
        self.book_cleared.emit()

    def append_rows(self, rows: list[StepRow]) -> None:
        """Add ready-made rows at the end (saved steps, the benchmark)."""
        start = len(self._rows)
        for offset, row in enumerate(rows):
            row.index = start + offset
        self.apply(StepsDiff([(start, list(rows))], []))

    def _insert(self, pos: int, new_rows: list[StepRow]) -> None:
        count = len(new_rows)
        rows = self._rows
        if self._order is None:
            self.beginInsertRows(QModelIndex(), pos, pos + count - 1)
            rows[pos:pos] = new_rows
            self.endInsertRows()
            self.book_rows_added.emit(pos, pos + count - 1)
            return
        rows[pos:pos] = new_rows
        new = range(pos, pos + count)
        shown = [i for i in new if self._accepts(rows[i])] if self.filtered else list(new)
        moved_down = pos < len(rows) - count  # a nested agent's row went in above others
        if self.sorted and not moved_down and not self._resort_due:
            column = self._sort_spec[0]
            self._keys += [self._sort_key(row, column) for row in new_rows]
            self._place(shown)
        else:
            if moved_down:
                self._order = [i + count if i >= pos else i for i in self._order]
            if shown:  # new rows go in at the bottom (and, while sorted, take their place at once)
                end = len(self._order)
                self.beginInsertRows(QModelIndex(), end, end + len(shown) - 1)
                self._order.extend(shown)
                self.endInsertRows()
            if self.sorted:
                self._resort_due = True
            else:
                self._view_of = self._inverse(self._order, len(rows))
        self.book_rows_added.emit(pos, pos + count - 1)

    def _rows_changed(self, book_rows: list[int]) -> None:
        last_col = len(COLUMNS) - 1
        if self._order is None:
            self.dataChanged.emit(self.index(book_rows[0], 0), self.index(book_rows[-1], last_col))
        else:
            if self.sorted:
                self._replace(book_rows)
            elif self.filtered:
                self._refilter(book_rows)
            for book_row in book_rows:
                view_row = self._view_row(book_row)
                if view_row >= 0:
                    self.dataChanged.emit(self.index(view_row, 0), self.index(view_row, last_col))
        self.book_rows_changed.emit(book_rows)

    def _refilter(self, book_rows: list[int]) -> None:
        """Rows whose status changed leave or join the filtered view (joining ones at the bottom)."""
        assert self._order is not None and self._view_of is not None
        rows, view_of = self._rows, self._view_of
        leaving = sorted((view_of[b] for b in book_rows if view_of[b] >= 0 and not self._accepts(rows[b])), reverse=True)
        joining = [b for b in book_rows if view_of[b] < 0 and self._accepts(rows[b])]
        if not leaving and not joining:
            return
        for view_row in leaving:
            self.beginRemoveRows(QModelIndex(), view_row, view_row)
            del self._order[view_row]
            self.endRemoveRows()
        if joining:
            end = len(self._order)
            self.beginInsertRows(QModelIndex(), end, end + len(joining) - 1)
            self._order.extend(joining)
            self.endInsertRows()
        self._view_of = self._inverse(self._order, len(rows))

    # ----- keeping sorted rows in place ----------------------------------------------------------
    PLACED_ONE_BY_ONE = 64
    """Up to this many new rows go in one by one at their sorted places; more are merged in at
    once (added at the bottom, then one layout change), which beats that many row signals."""

    @property
    def _descending(self) -> bool:
        return self._sort_spec[1] == Qt.SortOrder.DescendingOrder

    def _entry(self, book_row: int) -> tuple[Any, int]:
        """Where a row sorts among `_entries`: its key, then (ascending or descending alike) the
        order the rows happened in, as a stable sort of the happened-order puts equal keys."""
        return (self._keys[book_row], -book_row if self._descending else book_row)

    def _entry_view_row(self, position: int) -> int:
        return len(self._entries) - 1 - position if self._descending else position

    def _place(self, book_rows: list[int]) -> None:
        """Put new shown rows at their sorted places."""
        if not book_rows:
            return
        entries, order = self._entries, self._order
        assert order is not None
        if len(book_rows) <= self.PLACED_ONE_BY_ONE:
            for entry in sorted(self._entry(b) for b in book_rows):
                position = bisect_left(entries, entry)
                view_row = len(entries) - position if self._descending else position
                self.beginInsertRows(QModelIndex(), view_row, view_row)
                entries.insert(position, entry)
                order.insert(view_row, abs(entry[1]))
                self.endInsertRows()
            return
        end = len(order)
        self.beginInsertRows(QModelIndex(), end, end + len(book_rows) - 1)
        order.extend(book_rows)
        self.endInsertRows()
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        held = [(order[i.row()], i.column()) for i in persistent]
        entries += [self._entry(b) for b in book_rows]
        entries.sort()  # two sorted runs: merged in one pass
        self._order = self._order_of(entries)
        self.changePersistentIndexList(persistent, [self.index(self._view_row(b), c) for b, c in held])
        self.layoutChanged.emit()

    def _replace(self, book_rows: list[int]) -> None:
        """Rows that changed while sorted: each moves to its new sorted place, and (filtered)
        leaves or joins the view by what it reads now."""
        rows, entries, order, keys = self._rows, self._entries, self._order, self._keys
        assert order is not None
        column = self._sort_spec[0]
        for book_row in book_rows:
            view_row = self._view_row(book_row)
            keys[book_row] = self._sort_key(rows[book_row], column)
            wanted = not self.filtered or self._accepts(rows[book_row])
            if view_row >= 0:
                position = self._entry_view_row(view_row)  # the same mapping both ways
                if not wanted:
                    self.beginRemoveRows(QModelIndex(), view_row, view_row)
                    del entries[position]
                    del order[view_row]
                    self.endRemoveRows()
                    continue
                entry = self._entry(book_row)
                if entry == entries[position]:
                    continue
                del entries[position]
                position = bisect_left(entries, entry)
                entries.insert(position, entry)
                new_row = self._entry_view_row(position)
                if new_row != view_row:
                    self.beginMoveRows(QModelIndex(), view_row, view_row, QModelIndex(),
                                       new_row if new_row < view_row else new_row + 1)
                    del order[view_row]
                    order.insert(new_row, book_row)
                    self.endMoveRows()
            elif wanted:
                self._place([book_row])

    def _order_of(self, entries: list[tuple[Any, int]]) -> list[int]:
        """View row -> book row, from the sorted entries."""
        if self._descending:
            return list(map(neg, map(SECOND, reversed(entries))))
        return list(map(SECOND, entries))

    # ----- filtering -----------------------------------------------------------------------------
    @property
    def filtered(self) -> bool:
        return self._tool is not None or self._status is not None

    @property
    def sorted(self) -> bool:
        return 0 <= self._sort_spec[0] < len(COLUMNS)

    def set_filter(self, tool: str | None, status: str | None) -> None:
        """Show only the rows of `tool` and/or `status` ("error": every failed row); None: all."""
        if (tool or None, status or None) == (self._tool, self._status):
            return
        self._tool, self._status = tool or None, status or None
        self.beginResetModel()
        self._install(self._arranged())
        self.endResetModel()

    @property
    def tool_filter(self) -> str | None:
        return self._tool

    @property
    def status_filter(self) -> str | None:
        return self._status

    def _accepts(self, row: StepRow) -> bool:
        if self._tool is not None and row.tool != self._tool:
            return False
        if self._status is not None:
            return row.failed if self._status == "error" else row.status == self._status
        return True

    def _arranged(self) -> tuple[list[int] | None, list[Any], list[tuple[Any, int]]]:
        """The shown book rows in view order (None: all, as they happened), with the sort keys
        and entries while sorted: one pass to filter, one sort."""
        rows = self._rows
        if not self.filtered and not self.sorted:
            return None, [], []
        if self.filtered:
            tool, status = self._tool, self._status
            if status == "error":
                shown = [i for i, r in enumerate(rows) if r.failed and (tool is None or r.tool == tool)]
            else:
                shown = [i for i, r in enumerate(rows) if (status is None or r.status == status) and (tool is None or r.tool == tool)]
        else:
            shown = list(range(len(rows)))
        if not self.sorted:
            return shown, [], []
        keys = self._sort_keys(rows, self._sort_spec[0])
        shown.sort(key=keys.__getitem__, reverse=self._descending)  # stable: equal keys as they happened
        if self._descending:
            ascending = shown[::-1]
            entries = list(zip(map(keys.__getitem__, ascending), map(neg, ascending)))
        else:
            entries = list(zip(map(keys.__getitem__, shown), shown))
        return shown, keys, entries

    def _install(self, arranged: tuple[list[int] | None, list[Any], list[tuple[Any, int]]]) -> None:
        self._order, self._keys, self._entries = arranged
        sorted_or_all = self._order is None or self.sorted
        self._view_of = None if sorted_or_all else self._inverse(self._order, len(self._rows))  # type: ignore[arg-type]

    # ----- sorting -------------------------------------------------------------------------------
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Order the rows by `column` (-1: the order they happened in), keeping selections. In the
        order asked already, nothing is done: rows keep their sorted places as they arrive and
        change (QTableView.sortByColumn asks twice, through the header's indicator and itself)."""
        if (column, order) == self._sort_spec and not self._resort_due:
            return
        self._resort_due = False
        self._sort_spec = (column, order)
        arranged = self._arranged()
        if (len(arranged[0]) if arranged[0] is not None else len(self._rows)) != self.rowCount():
            self.beginResetModel()  # not expected: the shown rows are kept up to date as they change
            self._install(arranged)
            self.endResetModel()
            return
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        book_rows = [(self._book_row(i.row()), i.column()) for i in persistent]
        self._install(arranged)
        moved = [self.index(self._view_row(b), c) for b, c in book_rows]
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()

    @staticmethod
    def _inverse(order: list[int], size: int) -> list[int]:
        inverse = [-1] * size
        for view_row, book_row in enumerate(order):
            inverse[book_row] = view_row
        return inverse

    def _book_row(self, view_row: int) -> int:
        return view_row if self._order is None else self._order[view_row]

    def _view_row(self, book_row: int) -> int:
        """The view row showing `book_row`; -1 when it is filtered out."""
        if self._order is None:
            return book_row
        if self.sorted:
            entry, entries = self._entry(book_row), self._entries
            position = bisect_left(entries, entry)
            found = position < len(entries) and entries[position] == entry
            return self._entry_view_row(position) if found else -1
        assert self._view_of is not None
        return self._view_of[book_row]

    # ----- access --------------------------------------------------------------------------------
    @property
    def rows(self) -> list[StepRow]:
        """Rows in the order they happened (not the sorted view order)."""
        return self._rows

    def row_at(self, row: int) -> StepRow:
        """The row shown at view row `row`."""
        return self._rows[self._book_row(row)]

    # ----- QAbstractTableModel -------------------------------------------------------------------
    def row_total(self) -> int:
        return len(self._rows) if self._order is None else len(self._order)

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        # Called for every visible cell and role on each paint: keep it to a few list lookups.
        r = index.row()
        rows = self._rows
        if r < 0 or r >= len(rows):
            return None
        order = self._order
        if order is not None:
            if r >= len(order):
                return None
            r = order[r]
        row = rows[r]
        if role == DISPLAY:
            cells = self._cells.get(row) or self._make_cells(row)
            return cells[index.column()]
        if role == BACKGROUND:
            if row.failed:
                return row_brushes().error_background
            return row_brushes().answer_background if row.kind == "answer" else None
        if role == ALIGNMENT:
            return RIGHT if index.column() in NUMERIC_COLUMNS else None
        if role == FOREGROUND:
            brushes = row_brushes()
            if row.failed:
                return brushes.error_status if index.column() == COL_STATUS else brushes.text
            if row.status == "pending":
                return brushes.pending
            return brushes.text if row.kind == "answer" else None
        if role == FONT:
            return ITALIC if row.kind != "tool" and index.column() == COL_TOOL else None
        if role == TOOLTIP:
            col = index.column()
            edits = row.edits_text() + "\n\n" if row.edits else ""
            if col == COL_OBSERVATION:
                return edits + row.observation
            if col == COL_INPUT and row.tool_input is not None:
                return edits + (self._cells.get(row) or self._make_cells(row))[col]
            return edits.strip() or None
        if role == SORT_ROLE:
            return self._sort_key(row, index.column())
        if role == ROW_ROLE:
            return row
        return None

    def _make_cells(self, row: StepRow) -> tuple[str, ...]:
        """The display text of every column of `row`, made once (dropped when the row changes)."""
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
        self._cells[row] = cells
        return cells

    @classmethod
    def _sort_keys(cls, rows: list[StepRow], col: int) -> list[Any]:
        """The sort key of every row for `col`, made in one pass."""
        if col == COL_ITERATION:
            return list(range(len(rows)))  # the order the agent went through its iterations
        if col == COL_ITEM:
            return [r.item for r in rows]
        if col in (COL_TOOL_MS, COL_IN, COL_OUT, COL_MODEL_MS):
            name = {COL_TOOL_MS: "tool_ms", COL_IN: "tokens_in", COL_OUT: "tokens_out", COL_MODEL_MS: "model_ms"}[col]
            values = map(attrgetter(name), rows)
            return [-1.0 if v is None else float(v) for v in values]
        if col == COL_TOOL:
            return [r.tool for r in rows]
        if col == COL_STATUS:
            return [r.status for r in rows]
        if col == COL_OBSERVATION:
            return [r.observation for r in rows]
        return [cls._sort_key(r, col) for r in rows]

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


class StepsFilter(QIdentityProxyModel):
    """What the table shows: the model's rows, filtered by one tool and/or one status and sorted
    on raw values, both done by the model (see the module's docstring)."""

    def _model(self) -> StepsModel:
        model = self.sourceModel()
        assert isinstance(model, StepsModel)
        return model

    def set_tool(self, tool: str | None) -> None:
        model = self._model()
        model.set_filter(tool, model.status_filter)

    def set_status(self, status: str | None) -> None:
        model = self._model()
        model.set_filter(model.tool_filter, status)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        model = self.sourceModel()
        if model is not None:
            model.sort(column, order)

    def row_at(self, proxy_row: int) -> StepRow:
        return self._model().row_at(proxy_row)

    def visible_rows(self) -> list[StepRow]:
        model = self._model()
        return [model.row_at(r) for r in range(model.rowCount())]


__all__ = ["StepsModel", "StepsFilter", "COLUMNS", "ROW_ROLE", "FINAL_ANSWER"]
