"""The Chat panel: the session's conversation, the reply streaming in token by token, New session.

Each run's part of the conversation is its RunState's transcript (engine/run_state.py), shown as
it changes; a stored execution opened read-only shows its own conversation instead.
"""

from __future__ import annotations

import html
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QDesktopServices, QKeyEvent, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from engine.run_state import ChatTurn
from gui import theme
from gui.bridge import new_session_id

if TYPE_CHECKING:
    from PySide6.QtCore import QUrl


EMPTY_REPLY = "(empty reply — the model returned no text)"
ChatEntry = ChatTurn


class ChatInput(QPlainTextEdit):
    """Enter sends, Shift+Enter starts a new line."""

    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.submitted.emit()
            return
        super().keyPressEvent(event)


_BLOCK = re.compile(r"\s*<(p|ul|ol|pre|h[1-6]|table|div|blockquote)\b")  # a reply that starts a block of its own: no line break after the name

WHO = {"user": "You", "assistant": "Agent", "error": "Error"}


def bubble_colours(role: str, current: theme.Theme) -> tuple[QColor, QColor, QColor]:
    """(name colour, background, text colour) of a bubble, all from the theme so dark stays readable."""
    if role == "user":
        return current.user_name, current.user_fill, current.node_text
    if role == "assistant":
        return current.agent_name, current.agent_fill, current.node_text
    return current.error_text, current.error_fill, current.node_text


def open_link(url: QUrl) -> None:
    """A link in a reply opens in the system's browser; other schemes (javascript:, file:) do nothing."""
    from .chat_markdown import OPENABLE_SCHEMES

    if url.scheme().lower() in OPENABLE_SCHEMES:
        QDesktopServices.openUrl(url)


class ChatPanel(QWidget):
    """Conversation of one session; `send_requested(text)` when the user sends a message."""

    send_requested = Signal(str)
    stop_requested = Signal()
    session_changed = Signal(str)

    @staticmethod
    def prepare() -> None:
        """Import the Markdown reader now (after the editor's first frame), not at a run's first reply."""
        from . import chat_markdown  # noqa: F401

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session_id = new_session_id()
        self.entries: list[ChatEntry] = []
        self.busy = False
        self._run_start: int | None = None  # where the current run's turns begin in `entries`
        self._session: tuple[list[ChatEntry], int | None] | None = None  # kept while a stored chat is shown
        self._shown: list[tuple[str, int]] = []  # each bubble in the view: its HTML, where it starts
        self._bubbles: dict[tuple[object, ...], str] = {}  # bubble HTML by what it shows

        self.session_label = QLabel()
        self.stored_label = QLabel()
        self.stored_label.setObjectName("chatStoredBanner")
        self.stored_label.hide()
        self.new_session_button = QPushButton("New session")
        self.new_session_button.setToolTip("Start a fresh conversation: Simple Memory starts empty")
        self.new_session_button.clicked.connect(self.new_session)
        self.view = QTextBrowser()
        self.view.setOpenLinks(False)
        self.view.anchorClicked.connect(open_link)
        self.input = ChatInput()
        self.input.setPlaceholderText("Type a message — Enter sends, Shift+Enter for a new line")
        self.input.setFixedHeight(64)
        self.input.submitted.connect(self.submit)
        self.send_button = QPushButton("Send")
        self.send_button.setDefault(True)
        self.send_button.clicked.connect(self.submit)
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop_requested.emit)
        self.stop_button.setEnabled(False)

        head = QHBoxLayout()
        title = QLabel("<b>Chat</b>")
        head.addWidget(title)
        head.addWidget(self.session_label, 1)
        head.addWidget(self.new_session_button)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        row = QHBoxLayout()
        row.addWidget(self.input, 1)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(head)
        layout.addWidget(self.stored_label)
        layout.addWidget(self.view, 1)
        layout.addLayout(row)
        self._show_session()
        self._apply_theme()
        theme.manager().changed.connect(self._apply_theme)

    def _apply_theme(self) -> None:
        current = theme.current()
        self.session_label.setStyleSheet(f"color: {current.muted_text.name()};")
        self.stored_label.setStyleSheet(f"color: {current.muted_text.name()}; font-style: italic;")
        self._render()

    # ----- sending -------------------------------------------------------------------------------
    def submit(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.busy or self._session is not None:
            return
        self.input.clear()
        self.send_requested.emit(text)

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self._update_controls()

    def _update_controls(self) -> None:
        viewing = self._session is not None
        self.send_button.setEnabled(not self.busy and not viewing)
        self.stop_button.setEnabled(self.busy)
        self.new_session_button.setEnabled(not self.busy and not viewing)
        self.input.setReadOnly(viewing)

    def new_session(self) -> None:
        """A fresh session id: the agent's Simple Memory starts empty, the view clears."""
        self.leave_stored()
        self.session_id = new_session_id()
        self.entries.clear()
        self._run_start = None
        self._show_session()
        self._render()
        self.session_changed.emit(self.session_id)

    # ----- the conversation ----------------------------------------------------------------------
    def show_run(self, turns: list[ChatTurn], new: bool = False) -> None:
        """Show a run's transcript as the end of the conversation (`new`: a run that just began)."""
        if new or self._run_start is None:
            self._run_start = len(self.entries)
        self.entries[self._run_start:] = [replace(turn) for turn in turns]  # as they are now: the run goes on
        self._render()

    def show_stored(self, turns: list[ChatTurn], label: str) -> None:
        """Show only a stored execution's conversation, read-only, until `leave_stored`."""
        if self._session is None:
            self._session = (self.entries, self._run_start)
        self.entries, self._run_start = [replace(turn) for turn in turns], None
        self.stored_label.setText(label)
        self.stored_label.show()
        self._update_controls()
        self._render()

    def leave_stored(self) -> None:
        """The session's conversation again."""
        if self._session is None:
            return
        self.entries, self._run_start = self._session
        self._session = None
        self.stored_label.hide()
        self._update_controls()
        self._render()

    def add_user(self, text: str) -> None:
        self.entries.append(ChatEntry("user", text))
        self._render()

    def begin_reply(self) -> None:
        self.entries.append(ChatEntry("assistant", "", streaming=True))
        self._render()

    def stream(self, text: str, restart: bool = False) -> None:
        """Add streamed tokens to the reply (restart: a new model call began, drop the old text)."""
        entry = self._streaming()
        if entry is None:
            return
        entry.text = text if restart else entry.text + text
        self._render()

    def end_reply(self, answer: str | None, error: str | None = None) -> None:
        entry = self._streaming()
        if entry is not None:
            entry.streaming = False
            if answer is not None:
                entry.text = answer
                entry.empty = not answer.strip()
            elif not entry.text:  # no answer to show (paused, stopped or failed)
                self.entries.remove(entry)
        if error:
            self.entries.append(ChatEntry("error", error))
        self._render()

    def show_error(self, text: str) -> None:
        self.entries.append(ChatEntry("error", text))
        self._render()

    def reply_text(self) -> str:
        """The text of the latest agent reply (streaming or done)."""
        for entry in reversed(self.entries):
            if entry.role == "assistant":
                return entry.text
        return ""

    def _streaming(self) -> ChatEntry | None:
        return next((e for e in reversed(self.entries) if e.streaming), None)

    def _show_session(self) -> None:
        self.session_label.setText(f"session {self.session_id[:8]}")
        self.session_label.setToolTip(self.session_id)

    def _render(self) -> None:
        """Show `entries`: bubbles already shown as they read now stay; only the ones from the first
        that differs on (the reply streaming in, as a rule) are put in again, so a flush during a
        long session costs what changed, not the whole conversation."""
        current = theme.current()
        if not self.entries:
            empty = "No chat messages in this execution." if self._session is not None else "No messages in this session yet."
            self.view.setHtml(f"<p style='color:{current.muted_text.name()}'>{empty}</p>")
            self._shown = []
            return
        bubbles = [self._bubble(entry, current) for entry in self.entries]
        shown = self._shown
        kept = 0
        while kept < min(len(bubbles), len(shown)) and shown[kept][0] == bubbles[kept]:
            kept += 1
        if kept == len(bubbles) == len(shown):
            return
        cursor = QTextCursor(self.view.document())
        if kept == 0:
            self.view.clear()
            cursor = QTextCursor(self.view.document())
        else:
            cursor.setPosition(shown[kept][1] if kept < len(shown) else self.view.document().characterCount() - 1)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
        del shown[kept:]
        cursor.beginEditBlock()
        for bubble in bubbles[kept:]:
            shown.append((bubble, cursor.position()))
            cursor.insertHtml(bubble)
        cursor.endEditBlock()
        bar = self.view.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _bubble(self, entry: ChatEntry, current: theme.Theme) -> str:
        """One entry's bubble as HTML (a reply's Markdown read once per text it had)."""
        key = (entry.role, entry.text, entry.empty, entry.streaming, current.dark)
        found = self._bubbles.get(key)
        if found is not None:
            return found
        muted = current.muted_text.name()
        name, background, text = bubble_colours(entry.role, current)
        if entry.role == "assistant":
            from .chat_markdown import markdown_html  # the text format types' enums are built at its import: not before the first frame

            body = markdown_html(entry.text, current.link_text, current.node_fill)
        else:
            body = html.escape(entry.text).replace("\n", "<br>")
        if entry.empty:
            body = f"<i style='color:{muted}'>{html.escape(EMPTY_REPLY)}</i>"
        if entry.streaming:
            cursor = f"<span style='color:{muted}'> ▍</span>"
            body = body[:-4] + cursor + "</p>" if body.endswith("</p>") else body + cursor  # on the last line
        bubble = (f"<table width='100%' cellspacing='0' cellpadding='6' style='margin-bottom:6px; "
                  f"background:{background.name()}'>"
                  f"<tr><td style='color:{text.name()}'><span style='color:{name.name()}; font-weight:bold'>{WHO[entry.role]}</span>"
                  f"{'' if _BLOCK.match(body) else '<br>'}{body}</td></tr></table>")
        if len(self._bubbles) > 4 * len(self.entries) + 16:  # texts no entry reads any more
            self._bubbles.clear()
        self._bubbles[key] = bubble
        return bubble
