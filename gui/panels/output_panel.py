"""The output dock's tabs: Intermediate steps, Iteration detail, Run log, Node data."""

from __future__ import annotations

from PySide6.QtWidgets import QTabWidget, QWidget

from .iteration_detail import IterationDetail
from .node_data import NodeDataView, RunData
from .run_log_view import RunLogView
from .steps_model import StepsModel
from .steps_view import StepsView

TAB_STEPS, TAB_DETAIL, TAB_LOG, TAB_NODE = range(4)


class OutputPanel(QTabWidget):
    """Holds the four views; picking a step shows its iteration in the detail tab."""

    def __init__(self, run_data: RunData, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocumentMode(True)
        self.steps_model = StepsModel(self)
        self.steps = StepsView(self.steps_model)
        self.detail = IterationDetail()
        self.run_log = RunLogView()
        self.node_data = NodeDataView(run_data)
        self.addTab(self.steps, "Intermediate steps")
        self.addTab(self.detail, "Iteration detail")
        self.addTab(self.run_log, "Run log")
        self.addTab(self.node_data, "Node data")
        self.steps.row_selected.connect(self.detail.show_row)
        self.steps.table.doubleClicked.connect(lambda _index: self.setCurrentIndex(TAB_DETAIL))

    def clear_run(self) -> None:
        """Empty the per-run views before a new run starts."""
        self.steps_model.clear()
        self.detail.show_row(None)
        self.run_log.clear_log()
