"""Form fields for node parameters, one kind per JSON-schema shape, each committing one edit.

A field never changes the document itself: it calls `commit(path, value)` or `unset(path)`,
which the inspector turns into one undoable command.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFocusEvent, QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDoubleSpinBox, QFrame, QHBoxLayout, QLabel, QLineEdit, QMenu, QPlainTextEdit, QPushButton,
    QSizePolicy, QSpinBox, QToolButton, QVBoxLayout, QWidget,
)

from gui import theme
from engine.display_options import is_displayed

from .code_editor import CodeField
from .schema import choices_of, code_language, default_of, item_schema, kind_of, resolve, unwrap_optional

Path = tuple[str | int, ...]
Commit = Callable[[Path, Any], None]
Unset = Callable[[Path], None]
PreviewOf = Callable[[str], "tuple[str, bool] | None"]  # an expression's value as shown, or its error
_MISSING = object()

STICKY_COLOURS = ["Yellow", "Orange", "Red", "Green", "Blue", "Purple", "Grey"]


def nice_title(key: str, title: str | None) -> str:
    """The schema's title, unless it is pydantic's guess from the key ("Toolcalls"): then the
    key's words ("Tool Calls")."""
    if title and title != key.replace("_", " ").title():
        return title
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key).replace("_", " ").split()
    return " ".join(w[:1].upper() + w[1:] for w in words) or key


def value_at(params: Any, path: Path) -> Any:
    """The value at a parameter path, or _MISSING."""
    current = params
    for step in path:
        if isinstance(current, dict) and isinstance(step, str) and step in current:
            current = current[step]
        elif isinstance(current, list) and isinstance(step, int) and 0 <= step < len(current):
            current = current[step]
        else:
            return _MISSING
    return current



def remove_button(title: str, removable: Callable[[], None]) -> QToolButton:
    """The small ✕ that takes an optional field or option out of the node's parameters."""
    remove = QToolButton()
    remove.setText("✕")
    remove.setObjectName("removeButton")
    remove.setToolTip(f"Remove {title}")
    remove.setAutoRaise(True)
    remove.clicked.connect(lambda: removable())
    return remove

class PlainTextField(QPlainTextEdit):
    """Multi-line text that reports `committed` when it loses focus (one edit, one undo step)."""

    committed = Signal()

    def __init__(self, mono: bool = False) -> None:
        super().__init__()
        self.setTabChangesFocus(True)
        if mono:
            self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setMinimumHeight(70)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        self.textChanged.connect(self._fit)

    def _fit(self) -> None:
        lines = max(3, min(14, self.document().blockCount() + 1))
        self.setFixedHeight(int(lines * self.fontMetrics().lineSpacing() + 16))

    def focusOutEvent(self, event: QFocusEvent) -> None:  # noqa: N802
        super().focusOutEvent(event)
        self.committed.emit()


class _WheelGuard(QObject):
    """Spin boxes and combo boxes in a scrolling form ignore the wheel unless focused."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Wheel and isinstance(obj, QWidget) and not obj.hasFocus():
            event.ignore()
            return True
        return False


_wheel_guard = _WheelGuard()


class FieldRow(QWidget):
    """Title, description, the editor and an inline error line for one parameter."""

    def __init__(self, title: str, description: str = "", removable: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.setObjectName("fieldRow")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 4)
        layout.setSpacing(3)
        head = QHBoxLayout()
        head.setSpacing(4)
        self.title = QLabel(title)
        self.title.setObjectName("fieldTitle")
        head.addWidget(self.title, 1)
        if removable is not None:
            head.addWidget(remove_button(title, removable))
        layout.addLayout(head)
        self.editor_box = QVBoxLayout()
        self.editor_box.setSpacing(4)
        layout.addLayout(self.editor_box)
        if description:
            hint = QLabel(description)
            hint.setObjectName("fieldHint")
            hint.setWordWrap(True)
            layout.addWidget(hint)
        self.error = QLabel()
        self.error.setObjectName("fieldError")
        self.error.setWordWrap(True)
        self.error.hide()
        layout.addWidget(self.error)
        self.editor: QWidget | None = None
        self.preview: QLabel | None = None

    def set_editor(self, widget: QWidget) -> None:
        self.editor = widget
        self.editor_box.addWidget(widget)

    def set_preview(self, text: str, error: bool) -> None:
        """Show what the field's expression gives for the last run's input (n8n's preview)."""
        self.preview = QLabel(text if error else f"Result: {text}")
        self.preview.setObjectName("fieldError" if error else "fieldHint")
        self.preview.setWordWrap(True)
        self.preview.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.preview.setToolTip("The expression's value for the first input item of the last run")
        self.editor_box.addWidget(self.preview)

    def set_error(self, text: str | None) -> None:
        """Mark the field invalid (red frame and the reason under it), or clear the mark."""
        if text:
            self.error.setText(f"⚠ {text}")
            self.error.show()
        else:
            self.error.hide()
            self.error.setText("")
        if self.editor is not None:
            self.editor.setProperty("invalid", bool(text))
            self.editor.style().unpolish(self.editor)
            self.editor.style().polish(self.editor)


class FormBuilder:
    """Builds the rows of a parameter schema; `rows[path]` finds a field for error marks."""

    def __init__(self, root: dict[str, Any], params: dict[str, Any], commit: Commit, unset: Unset,
                 note: bool = False, preview: PreviewOf | None = None, version: float = 1) -> None:
        self.preview = preview
        self.version = version
        self.root = root
        self.params = params
        self.commit = commit
        self.unset = unset
        self.note = note  # a sticky note's form: its colour is picked from the note colours
        self.rows: dict[Path, FieldRow] = {}
        self.editors: dict[Path, QWidget] = {}

    # ----- entry --------------------------------------------------------------------------
    def displayed(self, schema: dict[str, Any], path: Path) -> dict[str, Any]:
        """The properties of `schema` (at `path`) that n8n's displayOptions show for the values now."""
        properties = schema.get("properties", {})
        siblings = value_at(self.params, path)
        siblings = siblings if isinstance(siblings, dict) else {}
        defaults = {key: default_of(prop, self.root) for key, prop in properties.items()}
        root_defaults = {key: default_of(prop, self.root) for key, prop in self.root.get("properties", {}).items()}
        root = {**root_defaults, **self.params}
        return {key: prop for key, prop in properties.items()
                if is_displayed(prop.get("displayOptions") or resolve(prop, self.root).get("displayOptions"),
                                siblings, root, self.version, defaults)}

    def build_properties(self, schema: dict[str, Any], path: Path, into: QVBoxLayout) -> None:
        for key, prop in self.displayed(schema, path).items():
            if key == "options" and not path and kind_of(resolve(prop, self.root)) == "object":
                into.addWidget(self.options_collection(prop, (key,)))
            else:
                into.addWidget(self.field(key, prop, path + (key,)))

    def field(self, key: str, prop: dict[str, Any], path: Path, removable: Callable[[], None] | None = None) -> QWidget:
        inner, nullable = unwrap_optional(prop, self.root)
        title = nice_title(key, prop.get("title") or inner.get("title"))
        description = inner.get("description") or prop.get("description") or ""
        kind = kind_of(inner)
        current = value_at(self.params, path)
        value = default_of(prop, self.root) if current is _MISSING else current
        if kind == "object":
            return self.group(title, inner, path, removable)
        if kind == "list":
            return self.list_field(title, inner, path, value, removable)
        row = FieldRow(title, description, removable)
        if kind == "code":
            inner = {**inner, "title": title}
        row.set_editor(self.editor(kind, inner, path, value, nullable))
        if self.preview is not None and isinstance(value, str) and value.startswith("="):
            shown = self.preview(value)
            if shown is not None:
                row.set_preview(*shown)
        self.rows[path] = row
        return row

    # ----- scalar editors ------------------------------------------------------------------
    def editor(self, kind: str, schema: dict[str, Any], path: Path, value: Any, nullable: bool) -> QWidget:
        if self.note and path == ("color",):
            kind = "sticky-colour"
        make = getattr(self, f"_edit_{kind.replace('-', '_')}")
        widget = make(schema, path, value, nullable)
        widget.setObjectName("fieldEditor")
        self.editors[path] = widget
        return widget

    def _commit_if_changed(self, path: Path, value: Any) -> None:
        current = value_at(self.params, path)
        if current is _MISSING or current != value:
            self.commit(path, value)

    def _edit_text(self, schema: dict[str, Any], path: Path, value: Any, nullable: bool) -> QWidget:
        edit = QLineEdit("" if value is None else str(value))
        edit.setPlaceholderText("empty" if nullable else "")

        def done() -> None:
            text = edit.text()
            self._commit_if_changed(path, None if (nullable and text == "") else text)
        edit.editingFinished.connect(done)
        return edit

    def _edit_multiline(self, schema: dict[str, Any], path: Path, value: Any, nullable: bool) -> QWidget:
        edit = PlainTextField()
        edit.setPlainText("" if value is None else str(value))

        def done() -> None:
            text = edit.toPlainText()
            self._commit_if_changed(path, None if (nullable and text == "") else text)
        edit.committed.connect(done)
        return edit

    def _edit_code(self, schema: dict[str, Any], path: Path, value: Any, nullable: bool) -> QWidget:
        field = CodeField(str(schema.get("title") or path[-1]), code_language(schema) or "code")
        field.setPlainText("" if value is None else str(value))

        def done() -> None:
            text = field.text()
            self._commit_if_changed(path, None if (nullable and text == "") else text)
        field.committed.connect(done)
        return field

    def _edit_choice(self, schema: dict[str, Any], path: Path, value: Any, nullable: bool) -> QWidget:
        combo = QComboBox()
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(6)
        combo.installEventFilter(_wheel_guard)
        combo.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        choices = choices_of(schema)
        if nullable:  # unset: the node type's default for the node's version (its description says which)
            combo.addItem("— default —", None)
        for choice in choices:
            combo.addItem(str(choice), choice)
        if value not in choices and not (nullable and value is None):
            combo.addItem(f"{value} (not a valid choice)", value)
        combo.setCurrentIndex(combo.findData(value) if combo.findData(value) >= 0 else combo.count() - 1)

        def chosen(i: int) -> None:
            if combo.itemData(i) is None and nullable:
                if value_at(self.params, path) is not _MISSING:
                    self.unset(path)
            else:
                self._commit_if_changed(path, combo.itemData(i))
        combo.activated.connect(chosen)
        return combo

    def _edit_sticky_colour(self, schema: dict[str, Any], path: Path, value: Any, nullable: bool) -> QWidget:
        combo = QComboBox()
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(6)
        combo.installEventFilter(_wheel_guard)
        t = theme.current()
        for number, name in enumerate(STICKY_COLOURS, start=1):
            combo.addItem(name, number)
            combo.setItemData(number - 1, t.sticky_border(number), Qt.ItemDataRole.DecorationRole)
        index = combo.findData(value)
        combo.setCurrentIndex(index if index >= 0 else 0)
        combo.activated.connect(lambda i: self._commit_if_changed(path, combo.itemData(i)))
        return combo

    def _spin_range(self, schema: dict[str, Any], integer: bool) -> tuple[float, float]:
        low = schema.get("minimum", schema.get("exclusiveMinimum", -1e9))
        high = schema.get("maximum", schema.get("exclusiveMaximum", 1e9))
        if integer:
            return max(int(low), -2_000_000_000), min(int(high), 2_000_000_000)
        return float(low), float(high)

    def _edit_integer(self, schema: dict[str, Any], path: Path, value: Any, nullable: bool) -> QWidget:
        spin = QSpinBox()
        spin.installEventFilter(_wheel_guard)
        spin.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        spin.setRange(*self._spin_range(schema, True))
        spin.setKeyboardTracking(False)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            spin.setValue(int(value))
        lo, hi = spin.minimum(), spin.maximum()
        spin.setToolTip(f"From {lo} to {hi}")
        spin.valueChanged.connect(lambda v: self._commit_if_changed(path, int(v)))
        return spin

    def _edit_number(self, schema: dict[str, Any], path: Path, value: Any, nullable: bool) -> QWidget:
        spin = QDoubleSpinBox()
        spin.installEventFilter(_wheel_guard)
        spin.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        spin.setDecimals(2)
        spin.setRange(*self._spin_range(schema, False))
        spin.setKeyboardTracking(False)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            spin.setValue(float(value))
        spin.setToolTip(f"From {spin.minimum():g} to {spin.maximum():g}")

        def changed(v: float) -> None:
            self._commit_if_changed(path, int(v) if float(v).is_integer() else v)
        spin.valueChanged.connect(changed)
        return spin

    def _edit_boolean(self, schema: dict[str, Any], path: Path, value: Any, nullable: bool) -> QWidget:
        box = QCheckBox("On")
        box.setChecked(bool(value))
        box.toggled.connect(lambda on: self._commit_if_changed(path, bool(on)))
        return box

    def _edit_json(self, schema: dict[str, Any], path: Path, value: Any, nullable: bool) -> QWidget:
        edit = PlainTextField(mono=True)
        allows_text = any(v.get("type") == "string" for v in schema.get("anyOf", [])) or schema.get("type") == "string"
        if isinstance(value, str) and allows_text:
            edit.setPlainText(value)
        else:
            edit.setPlainText("" if value is None else json.dumps(value, indent=2, ensure_ascii=False))

        def done() -> None:
            text = edit.toPlainText().strip()
            if text == "":
                new: Any = None if nullable else ("" if allows_text else {})
            else:
                try:
                    new = json.loads(text)
                except json.JSONDecodeError as exc:
                    if allows_text:
                        new = edit.toPlainText()
                    else:
                        row = self.rows.get(path)
                        if row is not None:
                            row.set_error(f"Not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}; "
                                          "not applied")
                        return
            self._commit_if_changed(path, new)
        edit.committed.connect(done)
        return edit

    # ----- nested shapes -------------------------------------------------------------------
    def group(self, title: str, schema: dict[str, Any], path: Path, removable: Callable[[], None] | None) -> QWidget:
        frame = QFrame()
        frame.setObjectName("fieldGroup")
        layout = QVBoxLayout(frame)
        layout.setContentsMargins(10, 6, 10, 8)
        head = QHBoxLayout()
        label = QLabel(title)
        label.setObjectName("groupTitle")
        head.addWidget(label, 1)
        if removable is not None:
            head.addWidget(remove_button(title, removable))
        layout.addLayout(head)
        self.build_properties(schema, path, layout)
        row = FieldRow("")
        row.title.hide()
        self.rows[path] = row
        layout.addWidget(row)
        return frame

    def options_collection(self, prop: dict[str, Any], path: Path) -> QWidget:
        """n8n's `options`: only the options that are set are shown; `Add option` offers the rest."""
        schema = resolve(prop, self.root)
        frame = QFrame()
        frame.setObjectName("optionsGroup")
        layout = QVBoxLayout(frame)
        layout.setContentsMargins(0, 8, 0, 4)
        title = QLabel(schema.get("title") or prop.get("title") or "Options")
        title.setObjectName("groupTitle")
        layout.addWidget(title)
        current = value_at(self.params, path)
        current = current if isinstance(current, dict) else {}
        properties = self.displayed(schema, path)
        unset_keys = []
        for key, sub in properties.items():
            if key in current:
                layout.addWidget(self.field(key, sub, path + (key,), removable=lambda k=key: self.unset(path + (k,))))
            else:
                unset_keys.append(key)
        if not current:
            empty = QLabel("No properties")
            empty.setObjectName("fieldHint")
            layout.addWidget(empty)
        add = QPushButton("Add option")
        add.setObjectName("addOption")
        menu = QMenu(add)
        for key in unset_keys:
            sub = properties[key]
            inner, _ = unwrap_optional(sub, self.root)
            action = menu.addAction(nice_title(key, sub.get("title") or inner.get("title")))
            action.triggered.connect(lambda _c=False, k=key, s=sub: self.commit(path + (k,), default_of(s, self.root)))
        add.setMenu(menu)
        add.setEnabled(bool(unset_keys))
        layout.addWidget(add)
        self.editors[path + ("+",)] = add
        row = FieldRow("")
        row.title.hide()
        self.rows[path] = row
        layout.addWidget(row)
        return frame

    def list_field(self, title: str, schema: dict[str, Any], path: Path, value: Any,
                   removable: Callable[[], None] | None) -> QWidget:
        frame = QFrame()
        frame.setObjectName("listGroup")
        layout = QVBoxLayout(frame)
        layout.setContentsMargins(0, 8, 0, 4)
        label = QLabel(title)
        label.setObjectName("groupTitle")
        layout.addWidget(label)
        items = value if isinstance(value, list) else []
        element = item_schema(schema, self.root)
        singular = (element.get("title") or "item")
        singular = {"ScriptedReply": "Reply", "ScriptedToolCall": "Tool Call", "Assignment": "Field"}.get(singular, singular)
        for index, _item in enumerate(items):
            layout.addWidget(self.group(f"{singular} {index + 1}", element, path + (index,),
                                        removable=lambda i=index: self.unset(path + (i,))))
        add = QPushButton(f"Add {singular.lower()}")
        add.setObjectName("addItem")
        add.clicked.connect(lambda: self.commit(path + (len(items),), default_of(element, self.root)))
        self.editors[path + ("+",)] = add
        layout.addWidget(add)
        row = FieldRow("")
        row.title.hide()
        self.rows[path] = row
        layout.addWidget(row)
        return frame
