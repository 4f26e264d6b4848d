"""The Node data tab: every run of the selected node (n8n's run index), input and output as JSON trees."""

from __future__ import annotations

import html
from typing import Any, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from engine.run_data import ExecutionState, TaskData

from .json_tree import JsonTree

RunData = Callable[[], ExecutionState | None]
PinnedItems = Callable[[str], "list[dict[str, Any]] | None"]  # a node's pinned items in the document


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


class RunSelector(QComboBox):
    """The shown node's runs, "Run i of n": runs are added as they come (a long run adds some at
    every flush) and the titles out of sight are brought up to date when the list opens."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runs: list[TaskData] = []

    def show_runs(self, runs: list[TaskData]) -> None:
        listed = self._runs
        if len(listed) > len(runs) or (listed and (runs[0] is not listed[0] or runs[len(listed) - 1] is not listed[-1])):
            self.clear()  # other runs: another node, execution or run
            listed = []
        for i in range(len(listed), len(runs)):
            self.addItem(run_title(i, len(runs), runs[i]))
        self._runs = runs

    def retitle(self, index: int) -> None:
        if 0 <= index < len(self._runs):
            self.setItemText(index, run_title(index, len(self._runs), self._runs[index]))

    def showPopup(self) -> None:  # noqa: N802
        for index in range(self.count()):
            self.retitle(index)
        super().showPopup()


class NodeDataView(QWidget):
    """Shows the runs of one node from the current execution's run data; pins the shown run's
    output as the node's data (n8n's pinData) or unpins it."""

    pin_requested = Signal(str, object)  # node name, items to pin (None: unpin)

    def __init__(self, run_data: RunData, parent: QWidget | None = None, pinned: PinnedItems | None = None) -> None:
        super().__init__(parent)
        self._run_data = run_data
        self._pinned = pinned or (lambda _name: None)
        self.node: str | None = None
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.run_selector = RunSelector()
        self.run_selector.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.run_selector.currentIndexChanged.connect(self._show_run)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.setStyleSheet("QLabel { color: #a1160a; background: #fde2e1; padding: 6px; border-radius: 3px; }")
        self.error.hide()
        self.input_tree = JsonTree()
        self.output_tree = JsonTree()

        self.pin_button = QPushButton()
        self.pin_button.clicked.connect(self._toggle_pin)

        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.run_selector)
        top.addWidget(self.pin_button)
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

    def set_pinned_lookup(self, pinned: PinnedItems) -> None:
        self._pinned = pinned
        self.refresh()

    def is_pinned(self) -> bool:
        return self.node is not None and self._pinned(self.node) is not None

    def _shown_output(self) -> list[dict[str, Any]] | None:
        runs = self.runs()
        index = self.run_selector.currentIndex()
        if not 0 <= index < len(runs):
            return None
        main = runs[index].data.get("main")
        return list(main[0]) if main else None

    def _toggle_pin(self) -> None:
        if self.node is None:
            return
        if self.is_pinned():
            self.pin_requested.emit(self.node, None)
        else:
            items = self._shown_output()
            if items is not None:
                self.pin_requested.emit(self.node, items)

    def _update_pin_button(self) -> None:
        pinned = self.is_pinned()
        self.pin_button.setText("Unpin" if pinned else "Pin this output")
        self.pin_button.setToolTip(
            "Run this node again when the workflow runs" if pinned
            else "Keep this run's output as the node's data: the node outputs it without running (n8n's pinned data)")
        self.pin_button.setEnabled(pinned or self._shown_output() is not None)
        self.pin_button.setVisible(self.node is not None)

    def refresh(self, run_index: int | None = None) -> None:
        runs = self.runs()
        if self.node is None:
            self.title.setText("<span style='color:#777'>Select a node on the canvas to see its data.</span>")
        elif not runs:
            self.title.setText(f"<b>{html.escape(self.node)}</b> <span style='color:#777'>has not run yet</span>")
        else:
            self.title.setText(f"<b>{html.escape(self.node)}</b> · {len(runs)} run{'s' if len(runs) != 1 else ''}")
        if self.is_pinned():
            self.title.setText(self.title.text() + " · <span style='color:#7c4dff'>pinned data</span>")
        keep = self.run_selector.currentIndex()
        at_last = keep == self.run_selector.count() - 1
        self.run_selector.blockSignals(True)
        self.run_selector.show_runs(runs)
        self.run_selector.setEnabled(bool(runs))
        if runs:
            if run_index is not None:
                chosen = min(max(run_index, 0), len(runs) - 1)
            elif at_last or keep < 0:
                chosen = len(runs) - 1
            else:
                chosen = min(keep, len(runs) - 1)
            self.run_selector.setCurrentIndex(chosen)
            self.run_selector.retitle(chosen)  # the title in sight says how many runs there are now
        self.run_selector.blockSignals(False)
        self._show_run(self.run_selector.currentIndex())

    def _show_run(self, index: int) -> None:
        self._update_pin_button()
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
