"""The inspector's Settings section: n8n's per-node settings (Always Output Data, Execute Once,
Retry On Fail with its tries and wait, On Error), each change one undoable edit of the node."""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QSpinBox, QVBoxLayout, QWidget

from engine import node_settings
from engine.workflow import Node

from .fields import FieldRow

ON_ERROR = (  # n8n's choices, as its Settings tab words them
    (node_settings.STOP, "Stop Workflow"),
    (node_settings.CONTINUE_REGULAR, "Continue"),
    (node_settings.CONTINUE_ERROR_OUTPUT, "Continue (using error output)"),
)

SetSettings = Callable[[str, dict[str, Any]], None]  # (node, {key: value, None removes it})


def shown_on_error(node: Node) -> str:
    """The On Error choice a node's settings amount to (the legacy Continue On Fail reads as Continue)."""
    mode = node_settings.on_error(node)
    if mode in dict(ON_ERROR):
        return mode  # type: ignore[return-value]
    if node_settings.continues_on_error(node):
        return node_settings.CONTINUE_REGULAR
    return node_settings.STOP


class SettingsForm(QWidget):
    """The settings of one node; `set_settings(node, {key: value})` makes each change."""

    def __init__(self, node: Node, set_settings: SetSettings) -> None:
        super().__init__()
        self.setObjectName("settingsForm")
        self.node = node
        self._set = set_settings
        extra = node.model_extra or {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        title = QLabel("Settings")
        title.setObjectName("sectionTitle")
        layout.addWidget(title)

        self.always = self._check("Always Output Data", "alwaysOutputData", extra,
                                  "With no items to output, output one empty item so the nodes after it run")
        self.once = self._check("Execute Once", "executeOnce", extra, "Run only on the first input item")
        self.retry = self._check("Retry On Fail", "retryOnFail", extra, "Run the node again when it fails")
        for check in (self.always, self.once, self.retry):
            layout.addWidget(check)

        tries, wait = node_settings.retries(node) if extra.get("retryOnFail") is True else (3, 1000)
        self.tries = QSpinBox()
        self.tries.setRange(2, 5)
        self.tries.setValue(tries)
        self.tries.valueChanged.connect(lambda value: self._set(node.name, {"maxTries": value}))
        self.wait = QSpinBox()
        self.wait.setRange(0, 5000)
        self.wait.setSingleStep(100)
        self.wait.setSuffix(" ms")
        self.wait.setValue(wait)
        self.wait.valueChanged.connect(lambda value: self._set(node.name, {"waitBetweenTries": value}))
        self.tries_row = FieldRow("Max. Tries", "How often the node runs before it fails for good (2 to 5)")
        self.tries_row.set_editor(self.tries)
        self.wait_row = FieldRow("Wait Between Tries (ms)", "How long to wait before the next try (up to 5000 ms)")
        self.wait_row.set_editor(self.wait)
        for row in (self.tries_row, self.wait_row):
            row.setVisible(self.retry.isChecked())
            layout.addWidget(row)

        self.on_error = QComboBox()
        self.on_error.setObjectName("onError")
        for value, label in ON_ERROR:
            self.on_error.addItem(label, value)
        self.on_error.setCurrentIndex(self.on_error.findData(shown_on_error(node)))
        self.on_error.activated.connect(lambda index: self._on_error_chosen(str(self.on_error.itemData(index))))
        row = FieldRow("On Error", "What happens when the node fails: stop the run, go on with its input items, "
                                   "or go on through an extra Error output")
        row.set_editor(self.on_error)
        layout.addWidget(row)

    def _check(self, text: str, key: str, extra: dict[str, Any], tip: str) -> QCheckBox:
        check = QCheckBox(text)
        check.setObjectName(key)
        check.setToolTip(tip)
        check.setChecked(extra.get(key) is True)
        check.toggled.connect(lambda on: self._set(self.node.name, {key: True if on else None}))
        return check

    def _on_error_chosen(self, value: str) -> None:
        if value == shown_on_error(self.node) and node_settings.on_error(self.node) is not None:
            return
        values: dict[str, Any] = {"onError": None if value == node_settings.STOP else value}
        if (self.node.model_extra or {}).get("continueOnFail") is not None:
            values["continueOnFail"] = None  # the legacy switch goes: On Error says it all
        self._set(self.node.name, values)
