"""An expandable JSON tree (QTreeView over QStandardItemModel): key, value, type."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QHeaderView, QTreeView, QWidget

MAX_CHILDREN = 2000
"""Longer lists show their first MAX_CHILDREN entries and a note, so one huge value stays quick."""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _summary(value: Any) -> str:
    if isinstance(value, dict):
        return f"{{{_count(len(value), 'key')}}}"
    if isinstance(value, list):
        return f"[{_count(len(value), 'item')}]"
    if isinstance(value, str):
        return value if "\n" not in value else value.replace("\n", "⏎ ")
    return json.dumps(value)


def _type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


OPEN_LEVELS = 3
"""Levels shown open, and made at once; a container deeper down gets its rows when it is opened,
so a run holding hundreds of messages shows in a few ms while a long run goes on."""

LATER = int(Qt.ItemDataRole.UserRole) + 1  # on a container whose rows are made when it opens: its key in `_later`


def _row(key: str, value: Any) -> list[QStandardItem]:
    key_item = QStandardItem(key)
    value_item = QStandardItem(_summary(value))
    if isinstance(value, str) and ("\n" in value or len(value) > 80):
        value_item.setToolTip(value)
    type_item = QStandardItem(_type(value))
    for item in (key_item, value_item, type_item):
        item.setEditable(False)
    return [key_item, value_item, type_item]


class JsonTree(QTreeView):
    """Shows one JSON value; the first three levels open."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._model = QStandardItemModel(self)
        self._model.setHorizontalHeaderLabels(["Key", "Value", "Type"])
        self.setModel(self._model)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.header().resizeSection(0, 180)
        self.header().setStretchLastSection(False)
        self.header().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.header().resizeSection(2, 70)
        self._later: dict[int, Any] = {}  # values of containers whose rows are not made yet
        self._later_made = 0
        self.expanded.connect(lambda index: self._fill(self._model.itemFromIndex(index)))

    def set_value(self, value: Any, root: str = "") -> None:
        self._model.removeRows(0, self._model.rowCount())
        self._later.clear()
        if value is None:
            return
        if isinstance(value, dict) and not root:
            for k, v in value.items():
                self._add(self._model, str(k), v, 0)
        else:
            self._add(self._model, root or "value", value, 0)
        self.expandToDepth(OPEN_LEVELS - 1)

    def _add(self, parent: QStandardItem | QStandardItemModel, key: str, value: Any, depth: int) -> None:
        row = _row(key, value)
        parent.appendRow(row)
        if not isinstance(value, (dict, list)) or not value:
            return
        if depth < OPEN_LEVELS:
            self._add_children(row[0], value, depth + 1)
        else:  # an empty row makes it openable; its own rows come when it opens
            self._later_made += 1
            self._later[self._later_made] = value
            row[0].setData(self._later_made, LATER)
            row[0].appendRow([QStandardItem(""), QStandardItem(""), QStandardItem("")])

    def _add_children(self, item: QStandardItem, value: Any, depth: int) -> None:
        if isinstance(value, dict):
            for k, v in list(value.items())[:MAX_CHILDREN]:
                self._add(item, str(k), v, depth)
        elif isinstance(value, list):
            for i, v in enumerate(value[:MAX_CHILDREN]):
                self._add(item, str(i), v, depth)
            if len(value) > MAX_CHILDREN:
                item.appendRow([QStandardItem("…"), QStandardItem(f"{len(value) - MAX_CHILDREN} more"), QStandardItem("")])

    def _fill(self, item: QStandardItem | None) -> None:
        """Make the rows of a container left for later, once (it is being opened or read)."""
        key = item.data(LATER) if item is not None else None
        if key is None or item is None:
            return
        item.setData(None, LATER)
        item.removeRows(0, item.rowCount())
        self._add_children(item, self._later.pop(key), OPEN_LEVELS)

    def value_at(self, *path: str) -> str | None:
        """The value text at a key path (for checks): value_at("main", "0", "0", "json", "output")."""
        parent = self._model.invisibleRootItem()
        item = None
        for key in path:
            self._fill(item)
            item = next((parent.child(r, 0) for r in range(parent.rowCount()) if parent.child(r, 0).text() == key), None)
            if item is None:
                return None
            parent = item
        if item is None:
            return None
        row_parent = item.parent() or self._model.invisibleRootItem()
        return row_parent.child(item.row(), 1).text()
