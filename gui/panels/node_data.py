"""The Node data tab: every run of the selected node (n8n's run index), input and output as JSON trees."""

from __future__ import annotations

import html
from typing import Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from gui.bridge import ExecutionState, TaskData

from .json_tree import JsonTree

RunData = Callable[[], ExecutionState | None]


def run_title(index: int, count: int, task: TaskData) -> str:
    text = f"Run {index + 1} of {count} · {task.execution_status} · {task.execution_time:.1f} ms"
    meta = task.metadata
    if "iteration" in meta:
        text += f" · {meta.get('node')} iteration {meta['iteration']}"
    if meta.get("toolName"):
        text += f" · call {meta.get('toolCallId', '')}"
    return text


def readable(connections: dict[str, Any]) -> dict[str, Any]:
    """n8n's {connection: [[{json}]]} as {connection: {"item 0": {...}}} (outputs named when several)."""
    def items(values: list[Any]) -> dict[str, Any]:
        return {f"item {i}": (v.get("json", v) if isinstance(v, dict) else v) for i, v in enumerate(values)}

    out: dict[str, Any] = {}
    for conn, outputs in connections.items():
        if len(outputs) == 1:
            out[conn] = items(outputs[0])
        else:
            out[conn] = {f"output {o}": items(values) for o, values in enumerate(outputs)}
    return out


class NodeDataView(QWidget):
    """Shows the runs of one node from the current execution's run data."""

    def __init__(self, run_data: RunData, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._run_data = run_data
        self.node: str | None = None
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.run_selector = QComboBox()
        self.run_selector.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.run_selector.currentIndexChanged.connect(self._show_run)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.setStyleSheet("QLabel { color: #a1160a; background: #fde2e1; padding: 6px; border-radius: 3px; }")
        self.error.hide()
        self.input_tree = JsonTree()
        self.output_tree = JsonTree()

        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.run_selector)
        split = QSplitter(Qt.Orientation.Horizontal)
        for label, tree in (("Input", self.input_tree), ("Output", self.output_tree)):
            box = QWidget()
            column = QVBoxLayout(box)
            column.setContentsMargins(0, 0, 0, 0)
            column.addWidget(QLabel(f"<b>{label}</b>"))
            column.addWidget(tree)
            split.addWidget(box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.error)
        layout.addWidget(split, 1)
        self.show_node(None)

    def runs(self) -> list[TaskData]:
        state = self._run_data()
        if state is None or self.node is None:
            return []
        return list(state.run_data.get(self.node, ()))

    def show_node(self, node: str | None, run_index: int | None = None) -> None:
        """Show `node`'s runs, the last one (or `run_index`) selected."""
        self.node = node
        self.refresh(run_index)

    def refresh(self, run_index: int | None = None) -> None:
        runs = self.runs()
        if self.node is None:
            self.title.setText("<span style='color:#777'>Select a node on the canvas to see its data.</span>")
        elif not runs:
            self.title.setText(f"<b>{html.escape(self.node)}</b> <span style='color:#777'>has not run yet</span>")
        else:
            self.title.setText(f"<b>{html.escape(self.node)}</b> · {len(runs)} run{'s' if len(runs) != 1 else ''}")
        keep = self.run_selector.currentIndex()
        at_last = keep == self.run_selector.count() - 1
        self.run_selector.blockSignals(True)
        self.run_selector.clear()
        for i, task in enumerate(runs):
            self.run_selector.addItem(run_title(i, len(runs), task))
        self.run_selector.setEnabled(bool(runs))
        if runs:
            if run_index is not None:
                chosen = min(max(run_index, 0), len(runs) - 1)
            elif at_last or keep < 0:
                chosen = len(runs) - 1
            else:
                chosen = min(keep, len(runs) - 1)
            self.run_selector.setCurrentIndex(chosen)
        self.run_selector.blockSignals(False)
        self._show_run(self.run_selector.currentIndex())

    def _show_run(self, index: int) -> None:
        runs = self.runs()
        if index < 0 or index >= len(runs):
            self.input_tree.set_value(None)
            self.output_tree.set_value(None)
            self.error.hide()
            return
        task = runs[index]
        data = task.to_json()
        self.input_tree.set_value(readable(data.get("input") or {}) or None)
        self.output_tree.set_value(readable(data.get("data") or {}) or None)
        if task.error is not None:
            text = f"<b>Error in {html.escape(task.error.node or self.node or '')}:</b> {html.escape(task.error.message)}"
            if task.error.description:
                text += f"<br>{html.escape(task.error.description)}"
            self.error.setText(text)
            self.error.show()
        else:
            self.error.hide()
