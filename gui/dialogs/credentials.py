"""The Credentials dialog: n8n's named credentials of a type, listed, created, edited, tested and
deleted in the user's credential store. A stored key is never shown back: the list and the form
show it masked, and a key field left empty keeps the stored key."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem, QMenu,
    QMessageBox, QPushButton, QVBoxLayout, QWidget,
)

from gui import theme
from engine.errors import MiniN8nError
from gui.bridge import credential_book, credential_form



class CredentialsDialog(QDialog):
    """Lists the store's credentials; the form on the right edits the selected one or a new one."""

    saved = Signal(str, str, str)  # id, name, type of a credential just saved
    checked = Signal(bool, str)  # a connection test's outcome and message

    def __init__(self, parent: QWidget | None = None, select_id: str | None = None, new_type: str | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("credentialsDialog")
        self.setWindowTitle("Credentials")
        self.book = credential_book()
        self.forms = {form.type: form for form in self.book.types()}
        self.current_id: str | None = None
        self.current_type: str | None = None
        self.editors: dict[str, QLineEdit] = {}
        self._check_task: asyncio.Task | None = None

        self.list = QListWidget()
        self.list.setObjectName("credentialList")
        self.list.currentItemChanged.connect(lambda item, _old: self._show(item))
        self.new_button = QPushButton("New credential")
        menu = QMenu(self.new_button)
        for form in self.forms.values():
            menu.addAction(form.title, lambda t=form.type: self.start_new(t))
        self.new_button.setMenu(menu)
        self.delete_button = QPushButton("Delete")
        self.delete_button.clicked.connect(self.delete_current)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addWidget(self.delete_button)
        left.addLayout(buttons)
        self.where = QLabel(f"Stored in {self.book.store.file_store.path}" if self.book.store.file_store else "")
        self.where.setObjectName("fieldHint")
        self.where.setWordWrap(True)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        left.addWidget(self.where)

        self.heading = QLabel()
        self.heading.setObjectName("groupTitle")
        self.form_box = QWidget()
        self.form = QFormLayout(self.form_box)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("credentialName")
        self.status = QLabel()
        self.status.setObjectName("credentialStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(self.test_connection)
        self.save_button = QPushButton("Save")
        self.save_button.setObjectName("saveCredential")
        self.save_button.clicked.connect(self.save_current)
        actions = QHBoxLayout()
        actions.addWidget(self.test_button)
        actions.addStretch(1)
        actions.addWidget(self.save_button)
        right = QVBoxLayout()
        right.addWidget(self.heading)
        right.addWidget(self.form_box)
        right.addWidget(self.status)
        right.addStretch(1)
        right.addLayout(actions)

        body = QHBoxLayout()
        body.addLayout(left, 2)
        body.addLayout(right, 3)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        outer = QVBoxLayout(self)
        outer.addLayout(body, 1)
        outer.addWidget(close)
        self.resize(860, 480)
        self.reload(select_id)
        if new_type is not None:
            self.start_new(new_type)

    # ----- the list ---------------------------------------------------------------------------
    def reload(self, select_id: str | None = None) -> None:
        """Read the store again; select `select_id` (else the first credential)."""
        self.list.blockSignals(True)
        self.list.clear()
        try:
            entries = self.book.entries()
        except MiniN8nError as exc:
            entries = []
            self._say(False, str(exc))
        for entry in entries:
            title = credential_form(entry.info.type).title
            secret = next(iter(entry.masked_secrets.values()), "")
            item = QListWidgetItem(f"{entry.info.name}\n{title}{'  ·  ' + secret if secret else ''}")
            item.setData(Qt.ItemDataRole.UserRole, entry)
            if not entry.editable:
                item.setToolTip("From the environment: change it where it is set")
            self.list.addItem(item)
        self.list.blockSignals(False)
        rows = [i for i in range(self.list.count())
                if self.list.item(i).data(Qt.ItemDataRole.UserRole).info.id == select_id]
        if rows or self.list.count():
            self.list.setCurrentRow(rows[0] if rows else 0)
            self._show(self.list.currentItem())
        else:
            self._show(None)

    def _show(self, item: QListWidgetItem | None) -> None:
        entry = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        if entry is None:
            self.current_id = self.current_type = None
            self._build_form(None)
            self.heading.setText("No credentials yet: add one with New credential")
            return
        self.current_id, self.current_type = entry.info.id, entry.info.type
        self._build_form(entry.info.type, entry.values, entry.masked_secrets, entry.editable)
        self.name_edit.setText(entry.info.name)
        self.heading.setText(credential_form(entry.info.type).title)
        self.delete_button.setEnabled(entry.editable)

    # ----- the form ---------------------------------------------------------------------------
    def _build_form(self, cred_type: str | None, values: dict[str, str] | None = None,
                    secrets: dict[str, str] | None = None, editable: bool = True) -> None:
        self.form_box.hide()  # shown again below: showing it shows the rows built meanwhile
        while self.form.rowCount():
            self.form.removeRow(0)  # deletes the row's widgets
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("credentialName")
        self.editors = {}
        self.status.clear()
        form = credential_form(cred_type) if cred_type else None
        self.save_button.setEnabled(form is not None)
        self.test_button.setEnabled(form is not None and bool(form.models_path))
        if form is None:
            return
        self.form.addRow("Name", self.name_edit)
        for field in form.fields:
            edit = QLineEdit((values or {}).get(field.name, ""))
            edit.setObjectName(f"credential_{field.name}")
            if field.secret:
                edit.setEchoMode(QLineEdit.EchoMode.Password)
                stored = (secrets or {}).get(field.name)
                edit.setPlaceholderText(f"stored: {stored} — leave empty to keep it" if stored else "")
            elif field.default:
                edit.setPlaceholderText(field.default)
            edit.setReadOnly(not editable)
            self.form.addRow(field.title, edit)
            self.editors[field.name] = edit
        self.name_edit.setReadOnly(not editable)
        self.save_button.setEnabled(editable)
        self.form_box.show()

    def start_new(self, cred_type: str) -> None:
        """An empty form for a new credential of this type (saved with Save)."""
        self.list.blockSignals(True)
        self.list.clearSelection()
        self.list.setCurrentRow(-1)
        self.list.blockSignals(False)
        self.current_id, self.current_type = None, cred_type
        self._build_form(cred_type)
        title = credential_form(cred_type).title
        taken = {self.list.item(i).data(Qt.ItemDataRole.UserRole).info.name for i in range(self.list.count())}
        name, n = f"{title} account", 1
        while name in taken:
            n += 1
            name = f"{title} account {n}"
        self.name_edit.setText(name)
        self.heading.setText(f"New {title} credential")
        self.delete_button.setEnabled(False)

    def values(self) -> dict[str, str]:
        return {name: edit.text() for name, edit in self.editors.items()}

    def save_current(self) -> None:
        if self.current_type is None:
            return
        try:
            info = self.book.save(self.current_type, self.name_edit.text(), self.values(), self.current_id)
        except MiniN8nError as exc:
            self._say(False, str(exc))
            return
        self.reload(info.id)
        self._say(True, f'Saved "{info.name}"')
        self.saved.emit(info.id, info.name, info.type)

    def delete_current(self) -> None:
        if self.current_id is None:
            return
        name = self.name_edit.text()
        answer = QMessageBox.question(self, "Delete credential",
                                      f'Delete the credential "{name}"? Nodes that use it will need another one.')
        if answer != QMessageBox.StandardButton.Yes:
            return
        try:
            self.book.delete(self.current_id)
        except MiniN8nError as exc:
            self._say(False, str(exc))
            return
        self.reload()

    # ----- the connection test ----------------------------------------------------------------
    def test_connection(self) -> None:
        """Ask the model server for its model list with the values in the form (a stored key when blank)."""
        if self.current_type is None:
            return
        self.test_button.setEnabled(False)
        self._say(None, "Testing the connection…")
        self._check_task = asyncio.ensure_future(self._check(self.current_type, self.values(), self.current_id))

    async def _check(self, cred_type: str, values: dict[str, str], cred_id: str | None) -> None:
        try:
            result = await self.book.check(cred_type, values, cred_id)
        finally:
            self.test_button.setEnabled(True)
        self._say(result.ok, result.message)
        self.checked.emit(result.ok, result.message)

    def _say(self, ok: bool | None, text: str) -> None:
        current = theme.current()
        colour = current.muted_text if ok is None else (current.agent_name if ok else current.error_text)
        mark = "" if ok is None else ("✓ " if ok else "⚠ ")
        self.status.setStyleSheet(f"color: {colour.name()};")
        self.status.setText(mark + text)

    def done(self, result: int) -> None:  # noqa: D102
        if self._check_task is not None and not self._check_task.done():
            self._check_task.cancel()
        super().done(result)
