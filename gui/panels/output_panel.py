"""The output dock's tabs: Intermediate steps, Iteration detail, Run log, Node data; and, in the
tab bar's corner, the warnings the engine logged in this session until they are dismissed."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QMenu, QTabWidget, QToolButton, QWidget

from gui import theme

from .iteration_detail import IterationDetail
from .node_data import NodeDataView, RunData
from .run_log_view import RunLogView
from .steps_model import StepsModel
from .steps_view import StepsView
from .warnings_relay import warning_relay

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
        self.warnings = WarningsButton(self)
        self.warnings.show_log.connect(lambda: self.setCurrentIndex(TAB_LOG))
        self.setCornerWidget(self.warnings)
        relay = warning_relay()
        for text in relay.said:  # said before this panel existed (e.g. while the editor loaded)
            self.warnings.add(text)
        relay.warned.connect(self._warned)

    def _warned(self, text: str) -> None:
        self.run_log.append_warning(text)
        self.warnings.add(text)

    def clear_run(self) -> None:
        """Empty the per-run views before a new run starts."""
        self.steps_model.clear()
        self.detail.show_row(None)
        self.run_log.clear_log()


class WarningsButton(QToolButton):
    """"⚠ N warnings" in red, hidden while there are none; its menu lists them, shows the run log,
    or dismisses them."""

    show_log = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.texts: list[str] = []
        self.setAutoRaise(True)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setMenu(QMenu(self))
        self.menu().setToolTipsVisible(True)
        self._restyle()
        theme.manager().changed.connect(self._restyle)
        self.hide()

    def _restyle(self) -> None:
        self.setStyleSheet(f"QToolButton {{ color: {theme.current().error_text.name()}; font-weight: bold; }}")

    def add(self, text: str) -> None:
        self.texts.append(text)
        count = len(self.texts)
        self.setText(f"⚠ {count} warning{'s' if count != 1 else ''}")
        self.setToolTip("\n\n".join(self.texts))
        menu = self.menu()
        menu.clear()
        for said in self.texts:
            entry = menu.addAction(said if len(said) <= 100 else said[:99] + "…")
            entry.setToolTip(said)
        menu.addSeparator()
        menu.addAction("Show the run log", self.show_log.emit)
        menu.addAction("Dismiss these warnings", self.dismiss)
        self.show()

    def dismiss(self) -> None:
        self.texts.clear()
        self.menu().clear()
        self.hide()
