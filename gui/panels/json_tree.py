"""An expandable JSON tree (QTreeView over QStandardItemModel): key, value, type."""

from __future__ import annotations

import json
from typing import Any

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


def _add(parent: QStandardItem | QStandardItemModel, key: str, value: Any) -> None:
    key_item = QStandardItem(key)
    value_item = QStandardItem(_summary(value))
    if isinstance(value, str) and ("\n" in value or len(value) > 80):
        value_item.setToolTip(value)
    type_item = QStandardItem(_type(value))
    for item in (key_item, value_item, type_item):
        item.setEditable(False)
    parent.appendRow([key_item, value_item, type_item])
    if isinstance(value, dict):
        for k, v in list(value.items())[:MAX_CHILDREN]:
            _add(key_item, str(k), v)
    elif isinstance(value, list):
        for i, v in enumerate(value[:MAX_CHILDREN]):
            _add(key_item, str(i), v)
        if len(value) > MAX_CHILDREN:
            key_item.appendRow([QStandardItem("…"), QStandardItem(f"{len(value) - MAX_CHILDREN} more"), QStandardItem("")])


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

    def set_value(self, value: Any, root: str = "") -> None:
        self._model.removeRows(0, self._model.rowCount())
        if value is None:
            return
        if isinstance(value, dict) and not root:
            for k, v in value.items():
                _add(self._model, str(k), v)
        else:
            _add(self._model, root or "value", value)
        self.expandToDepth(2)

    def value_at(self, *path: str) -> str | None:
        """The value text at a key path (for checks): value_at("main", "0", "0", "json", "output")."""
        parent = self._model.invisibleRootItem()
        item = None
        for key in path:
            item = next((parent.child(r, 0) for r in range(parent.rowCount()) if parent.child(r, 0).text() == key), None)
            if item is None:
                return None
            parent = item
        if item is None:
            return None
        row_parent = item.parent() or self._model.invisibleRootItem()
        return row_parent.child(item.row(), 1).text()
