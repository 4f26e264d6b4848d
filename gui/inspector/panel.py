"""The inspector panel: name, type and parameters of the selected node, validated in place.

The form is rebuilt from the document after every edit (keeping the focused field), so it
always shows what the document holds; the node type's `Params` model marks invalid values.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QApplication, QCheckBox, QComboBox, QFrame, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QScrollArea, QToolButton, QVBoxLayout, QWidget,
)

from gui import theme
from engine.expressions.preview import expression_preview
from engine.connection_types import MAIN
from engine.run_data import ExecutionState
from engine.workflow import Node
from gui.bridge import credential_store, credential_types_of, node_warnings

from .fields import FieldRow, FormBuilder, Path
from .settings_form import SettingsForm

if TYPE_CHECKING:
    from gui.main_window import MainWindow


NEW_CREDENTIAL = "new"  # the combo entry that opens the Credentials dialog on a new credential


class Inspector(QWidget):
    """Shows and edits one node; every change goes through the window as one undo step."""

    def __init__(self, window: "MainWindow") -> None:
        super().__init__()
        self.setObjectName("inspector")
        self.window = window
        self.node: Node | None = None
        self.builder: FormBuilder | None = None
        self.settings: SettingsForm | None = None  # the node's Settings section
        self._built_key: Any = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer.addWidget(self.scroll)
        self.name_edit: QLineEdit | None = None
        self.name_error: QLabel | None = None
        self.problems: QLabel | None = None
        self.credential_combos: dict[str, QComboBox] = {}
        self._show_empty()

    # ----- what is shown --------------------------------------------------------------------
    def _current_name(self) -> str | None:
        if self.node is None:
            return None
        for node in self.window.document.nodes:
            if node is self.node:
                return node.name
        return None

    def show_node(self, name: str | None) -> None:
        doc = self.window.document
        self.node = doc.node(name) if name and doc.has_node(name) else None
        self._built_key = None
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the form when the node's name, flags, parameters or settings changed."""
        name = self._current_name()
        if name is None:
            if self.node is not None or self._built_key != "empty":
                self.node = None
                self._show_empty()
            return
        node = self.node
        assert node is not None
        state = self._run_state()
        ran = None if state is None else (state.id, state.status, sum(len(r) for r in state.run_data.values()))
        key = (name, node.is_disabled, json.dumps(node.parameters, sort_keys=True, default=str),
               json.dumps(node.credentials, sort_keys=True, default=str),
               json.dumps(node.model_extra, sort_keys=True, default=str), ran)
        if key == self._built_key:
            return
        focused = self._focused_path()
        scroll = self.scroll.verticalScrollBar().value()
        self._build(node)
        self._built_key = key
        self.scroll.verticalScrollBar().setValue(scroll)
        if focused is not None and self.builder is not None:
            widget = self.builder.editors.get(focused)
            if widget is not None:
                widget.setFocus()

    def _run_state(self) -> ExecutionState | None:
        """The run the output panel shows (the last one, or one opened from Executions)."""
        runs = self.window.run_controller
        return None if runs is None else (runs.viewed or runs.bridge.state)

    def _preview(self, name: str, value: str) -> tuple[str, bool] | None:
        shown = expression_preview(self._run_state(), self.window.document, name, value, self.window.registry)
        return None if shown is None else (shown.text, shown.error)

    def _focused_path(self) -> Path | None:
        if self.builder is None:
            return None
        focus = self.focusWidget()
        for path, widget in self.builder.editors.items():
            if widget is focus or (focus is not None and widget.isAncestorOf(focus)):
                return path
        return None

    def _show_empty(self) -> None:
        self._built_key = "empty"
        self.builder = None
        self.name_edit = None
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(24, 40, 24, 24)
        title = QLabel("No node selected")
        title.setObjectName("emptyTitle")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        hint = QLabel("Select a node on the canvas to see and edit its parameters.\n\n"
                      "Add nodes from the palette: drag one onto the canvas, double-click it, "
                      "or start typing on the canvas to search.")
        hint.setObjectName("fieldHint")
        hint.setWordWrap(True)
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(title)
        layout.addWidget(hint)
        layout.addStretch(1)
        self._set_page(page)

    def _set_page(self, page: QWidget) -> None:
        old = self.scroll.takeWidget()
        self.scroll.setWidget(page)
        if old is not None:
            old.hide()
            old.deleteLater()

    # ----- building the form ----------------------------------------------------------------
    def _build(self, node: Node) -> None:
        node_type = self.window.registry.get(node.type)
        self.settings = None
        page = QWidget()
        page.setObjectName("inspectorPage")
        layout = QVBoxLayout(page)
        layout.setContentsMargins(14, 12, 14, 14)
        layout.setSpacing(6)

        head = QHBoxLayout()
        icon = QLabel()
        icon.setPixmap(theme.icon(node_type.icon, 32).pixmap(32, 32))
        head.addWidget(icon)
        self.name_edit = QLineEdit(node.name)
        self.name_edit.setObjectName("nameEdit")
        self.name_edit.setToolTip("The node's name (F2): connections follow a rename")
        self.name_edit.editingFinished.connect(self._rename)
        head.addWidget(self.name_edit, 1)
        layout.addLayout(head)
        self.name_error = QLabel()
        self.name_error.setObjectName("fieldError")
        self.name_error.setWordWrap(True)
        self.name_error.hide()
        layout.addWidget(self.name_error)
        kind = QLabel(f"{node_type.display_name}  ·  <span style='color:{theme.current().muted_text.name()}'>"
                      f"{node.type} v{node.typeVersion:g}</span>")
        kind.setObjectName("typeLine")
        kind.setWordWrap(True)
        kind.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(kind)
        if node_type.description:
            about = QLabel(node_type.description)
            about.setObjectName("fieldHint")
            about.setWordWrap(True)
            layout.addWidget(about)
        if node_type.runnable:
            disabled = QCheckBox("Deactivated (skipped when the workflow runs)")
            disabled.setChecked(node.is_disabled)
            disabled.toggled.connect(lambda on: self.window.set_disabled([node.name], on))
            layout.addWidget(disabled)
        self.problems = QLabel()
        self.problems.setObjectName("problemBox")
        self.problems.setWordWrap(True)
        self.problems.hide()
        layout.addWidget(self.problems)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setObjectName("separator")
        layout.addWidget(line)

        if not node_type.supported:
            self.builder = None
            warn = QLabel(f"<b>Unsupported node type</b><br>mini-n8n cannot run <code>{node.type}</code>. "
                          "The node is kept exactly as it is and saved back unchanged.")
            warn.setObjectName("warningBox")
            warn.setWordWrap(True)
            layout.addWidget(warn)
            raw = QPlainTextEdit(json.dumps(node.parameters, indent=2, ensure_ascii=False))
            raw.setReadOnly(True)
            raw.setObjectName("rawParameters")
            layout.addWidget(QLabel("Parameters (read only)"))
            layout.addWidget(raw, 1)
            self._set_page(page)
            return

        self._add_credentials(node, node_type, layout)
        schema = node_type.Params.model_json_schema()
        name = node.name
        self.builder = FormBuilder(
            schema, node.parameters,
            commit=lambda path, value: self.window.set_parameter(name, path, value),
            unset=lambda path: self.window.unset_parameter(name, path),
            note=not node_type.runnable,
            preview=lambda value: self._preview(name, value),
            version=float(node.typeVersion),
        )
        self.builder.build_properties(schema, (), layout)
        if not schema.get("properties"):
            none = QLabel("This node has no parameters.")
            none.setObjectName("fieldHint")
            layout.addWidget(none)
        if node_type.runnable and any(spec.type == MAIN for spec in node_type.outputs):
            settings_line = QFrame()
            settings_line.setFrameShape(QFrame.Shape.HLine)
            settings_line.setObjectName("separator")
            layout.addWidget(settings_line)
            self.settings = SettingsForm(node, self.window.set_settings)
            layout.addWidget(self.settings)
        layout.addStretch(1)
        self._set_page(page)
        self._validate(node, node_type)

    def _add_credentials(self, node: Node, node_type: Any, layout: QVBoxLayout) -> None:
        """A picker per credential type the node uses, listing the local credential store."""
        self.credential_combos = {}
        types = list(credential_types_of(node_type))
        for existing in (node.credentials or {}):
            if existing not in types:
                types.append(existing)
        for cred_type in types:
            row = FieldRow(f"Credential ({cred_type})",
                           "From your local credential store or the environment; the key is never stored in the workflow")
            combo = QComboBox()
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(6)
            combo.addItem("— none —", None)
            try:
                available = credential_store().list(cred_type)
            except Exception as exc:  # an unreadable credential file: shown in place
                available = []
                row.set_error(str(exc))
            current = (node.credentials or {}).get(cred_type)
            for info in available:
                combo.addItem(info.name, {"id": info.id, "name": info.name})
            if isinstance(current, dict):
                index = next((i for i in range(combo.count())
                              if isinstance(combo.itemData(i), dict) and combo.itemData(i).get("id") == current.get("id")), -1)
                if index < 0:
                    combo.addItem(f"{current.get('name', current.get('id'))} (not in the store)", current)
                    index = combo.count() - 1
                combo.setCurrentIndex(index)
            combo.addItem("+ Create new credential…", NEW_CREDENTIAL)
            combo.activated.connect(lambda i, c=combo, t=cred_type: self._credential_chosen(node.name, t, c.itemData(i)))
            edit = QToolButton()
            edit.setObjectName("editCredential")
            edit.setText("✎")
            edit.setToolTip("Open the Credentials dialog on this credential")
            edit.setAutoRaise(True)
            edit.clicked.connect(lambda _c=False, c=combo: self.window.open_credentials(
                select_id=(c.currentData() or {}).get("id") if isinstance(c.currentData(), dict) else None))
            line = QWidget()
            box = QHBoxLayout(line)
            box.setContentsMargins(0, 0, 0, 0)
            box.addWidget(combo, 1)
            box.addWidget(edit)
            row.set_editor(line)
            self.credential_combos[cred_type] = combo
            layout.addWidget(row)

    def _credential_chosen(self, name: str, cred_type: str, data: Any) -> None:
        """A credential picked in the combo, or the Credentials dialog to create one for the node."""
        if data != NEW_CREDENTIAL:
            self.window.set_credential(name, cred_type, data)
            return
        dialog = self.window.open_credentials(new_type=cred_type)
        dialog.saved.connect(lambda cid, cname, ctype: ctype == cred_type and self.window.set_credential(
            name, cred_type, {"id": cid, "name": cname}))
        self._built_key = None
        self.refresh()

    def _validate(self, node: Node, node_type: Any) -> None:
        """Mark every value the node type's Params model refuses, in place, with its reason."""
        if self.builder is None:
            return
        for row in self.builder.rows.values():
            row.set_error(None)
        unplaced = []
        try:
            node_type.Params.model_validate(node.parameters)
        except ValidationError as exc:
            for error in exc.errors():
                loc = tuple(error["loc"])
                row = None
                for cut in range(len(loc), 0, -1):
                    row = self.builder.rows.get(loc[:cut])
                    if row is not None:
                        break
                message = error["msg"]
                if row is not None:
                    row.set_error(message if not row.error.text() else f"{row.error.text()[2:]}; {message}")
                else:
                    unplaced.append(f"{'.'.join(map(str, loc))}: {message}")
        problems = unplaced + self._rule_problems(node)
        if self.problems is not None:
            self.problems.setVisible(bool(problems))
            self.problems.setText("\n".join(f"⚠ {p}" for p in problems))

    def _rule_problems(self, node: Node) -> list[str]:
        try:
            return node_warnings(self.window.document, self.window.registry, node.name)
        except KeyError:
            return []

    def errors(self) -> dict[Path, str]:
        """The field errors shown now, by parameter path (used by tests and the status bar)."""
        if self.builder is None:
            return {}
        return {path: row.error.text()[2:] for path, row in self.builder.rows.items() if row.error.text()}

    # ----- name -----------------------------------------------------------------------------
    def _rename(self) -> None:
        if self.name_edit is None or self.node is None:
            return
        old = self._current_name()
        new = self.name_edit.text()
        if old is None or new.strip() == old:
            if self.name_error is not None:
                self.name_error.hide()
            return
        if not self.window.rename_node(old, new):
            if self.name_error is not None:
                self.name_error.setText(f"⚠ {self.window.statusBar().currentMessage().removeprefix('Cannot rename: ')}")
                self.name_error.show()

    def commit_pending(self) -> None:
        """A field being typed in commits when it loses focus: take the focus away now."""
        focus = QApplication.focusWidget()
        if focus is not None and self.isAncestorOf(focus):
            focus.clearFocus()

    def start_rename(self) -> None:
        if self.name_edit is not None:
            self.name_edit.setFocus()
            self.name_edit.selectAll()

    def focus_first_field(self, name: str) -> None:
        if self._current_name() != name:
            self.show_node(name)
        self.window.inspector_dock.show()
        self.window.inspector_dock.raise_()
        if self.builder is not None and self.builder.editors:
            QTimer.singleShot(0, next(iter(self.builder.editors.values())).setFocus)
