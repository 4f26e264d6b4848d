"""Add a server whose executions the Executions panel lists: a name, its URL and its API key.

The key is typed once, hidden, and kept in the credential file like a model's key (n8n's
`n8nApi` credential); nothing shows it back in full.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from PySide6.QtWidgets import QDialog, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from engine.errors import MiniN8nError

if TYPE_CHECKING:  # the store and the servers load with the first listing, after the first frame
    from engine.remote import Server

SaveServer = Callable[[str, str, str], "Server"]


class ServerDialog(QDialog):
    """Asks for the server; `save(name, url, key)` keeps it (its error is shown, the dialog stays)."""

    def __init__(self, save: SaveServer, parent: QWidget | None = None) -> None:
        from PySide6.QtWidgets import QDialogButtonBox

        super().__init__(parent)
        self.setWindowTitle("Add server")
        self._save = save
        self.server: Server | None = None
        self.name = QLineEdit()
        self.name.setPlaceholderText("Production")
        self.url = QLineEdit()
        self.url.setPlaceholderText("https://agents.example.com  (mini-n8n serve)")
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText("the server's MINI_N8N_API_KEY")
        self.problem = QLabel()
        self.problem.setObjectName("serverProblem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color:#a1160a")
        self.problem.hide()
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("URL", self.url)
        form.addRow("API key", self.key)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.resize(460, self.sizeHint().height())

    def accept(self) -> None:
        try:
            self.server = self._save(self.name.text(), self.url.text(), self.key.text())
        except MiniN8nError as exc:
            self.problem.setText(str(exc))
            self.problem.show()
            return
        self.key.clear()
        super().accept()
