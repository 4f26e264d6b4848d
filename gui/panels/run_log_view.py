"""The Run log tab: the CLI's run-log lines, live, each node name a link that selects the node.

A read-only QPlainTextEdit (its line layout keeps appends cheap on long logs); node names are
anchors found with `anchorAt` under the mouse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QMouseEvent, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from gui import theme
from engine.run_log import RunLogLine

if TYPE_CHECKING:
    from PySide6.QtGui import QTextCharFormat

MAX_LINES = 50_000
NODE_SCHEME = "node:"
COLOUR_PROPERTY = 0x100000 + 1  # QTextFormat.Property.UserProperty + 1
"""A coloured fragment names its theme colour here, so a theme switch recolours the lines shown.
(The text format types are imported at the first line: PySide builds their enums, 155 members,
at their first import, which would come before the editor's first frame.)"""


def text_colour(name: str, current: theme.Theme) -> QColor:
    """The theme colour a run-log fragment is drawn in: "error", "note" or "link"."""
    return {"error": current.error_text, "note": current.muted_text, "link": current.link_text}[name]


class RunLogView(QPlainTextEdit):
    """Appends RunLogLine batches; `node_clicked(name)` when a node name is clicked."""

    node_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setMaximumBlockCount(MAX_LINES)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setMouseTracking(True)
        self.lines: list[RunLogLine] = []
        self._formats: tuple[QTextCharFormat, QTextCharFormat, QTextCharFormat] | None = None  # (plain, error, note)
        theme.manager().changed.connect(self._recolour)

    def prepare(self) -> None:
        """Make the line formats now (after the editor's first frame), not at a run's first line."""
        self._line_formats()

    def _line_formats(self) -> tuple[QTextCharFormat, QTextCharFormat, QTextCharFormat]:
        """(plain, error, note): the formats of lines, made at the first line."""
        if self._formats is None:
            from PySide6.QtGui import QTextCharFormat

            note = self._coloured("note")
            note.setFontItalic(True)
            self._formats = (QTextCharFormat(), self._coloured("error"), note)
        return self._formats

    @staticmethod
    def _coloured(name: str, base: QTextCharFormat | None = None) -> QTextCharFormat:
        from PySide6.QtGui import QTextCharFormat

        fmt = QTextCharFormat(base) if base is not None else QTextCharFormat()
        fmt.setProperty(COLOUR_PROPERTY, name)
        fmt.setForeground(text_colour(name, theme.current()))
        return fmt

    def _recolour(self) -> None:
        """Give every coloured fragment, and the formats of lines to come, the current theme's colour."""
        if self._formats is None:
            return  # no line yet: the formats are made with the theme's colours at the first
        from PySide6.QtGui import QTextCharFormat

        for fmt in self._formats[1:]:
            fmt.setForeground(text_colour(fmt.stringProperty(COLOUR_PROPERTY), theme.current()))
        spans: list[tuple[int, int, str]] = []  # gathered first: recolouring may merge fragments
        block = self.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                name = fragment.charFormat().stringProperty(COLOUR_PROPERTY)
                if name:
                    spans.append((fragment.position(), fragment.position() + fragment.length(), name))
                it += 1
            block = block.next()
        cursor = QTextCursor(self.document())
        for start, end, name in spans:
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            recoloured = QTextCharFormat()
            recoloured.setForeground(text_colour(name, theme.current()))
            cursor.mergeCharFormat(recoloured)

    def clear_log(self) -> None:
        self.lines.clear()
        self.clear()

    def append_lines(self, lines: list[RunLogLine]) -> None:
        if not lines:
            return
        bar = self.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 4
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        for line in lines:
            if not self.document().isEmpty():
                cursor.insertBlock()
            self._insert_line(cursor, line)
        cursor.endEditBlock()
        self.lines.extend(lines)
        if follow:
            bar.setValue(bar.maximum())

    def append_warning(self, text: str) -> None:
        """A warning the engine or a node logged (e.g. a credential file others can read), in red."""
        self.append_note(f"Warning: {text}", error=True)

    def append_note(self, text: str, error: bool = False) -> None:
        """A line of our own (run started, finished, failed), in italics or red."""
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if not self.document().isEmpty():
            cursor.insertBlock()
        _plain, error_format, note_format = self._line_formats()
        cursor.insertText(text, error_format if error else note_format)
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())

    def _insert_line(self, cursor: QTextCursor, line: RunLogLine) -> None:
        text = line.text
        plain, error_format, _note = self._line_formats()
        base = error_format if line.status == "error" else plain
        start = text.find("] ") + 2 + 2 * line.depth
        if start < 2 or not text.startswith(line.node, start):
            cursor.insertText(text, base)
            return
        cursor.insertText(text[:start], base)
        link = self._coloured("error" if line.status == "error" else "link", base)
        link.setAnchor(True)
        link.setAnchorHref(NODE_SCHEME + quote(line.node, safe=""))
        link.setFontUnderline(True)
        cursor.insertText(line.node, link)
        cursor.insertText(text[start + len(line.node):], base)

    # ----- clicking a node name ------------------------------------------------------------------
    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        over_link = self.anchorAt(event.position().toPoint()).startswith(NODE_SCHEME)
        self.viewport().setCursor(Qt.CursorShape.PointingHandCursor if over_link else Qt.CursorShape.IBeamCursor)
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        href = self.anchorAt(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and href.startswith(NODE_SCHEME) and not self.textCursor().hasSelection():
            self.node_clicked.emit(unquote(href[len(NODE_SCHEME):]))
        super().mouseReleaseEvent(event)

    def link_names(self) -> list[str]:
        """The node names shown as links, in order (what a click would select)."""
        names: list[str] = []
        block = self.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fmt = it.fragment().charFormat()
                if fmt.isAnchor() and fmt.anchorHref().startswith(NODE_SCHEME):
                    names.append(unquote(fmt.anchorHref()[len(NODE_SCHEME):]))
                it += 1
            block = block.next()
        return names

    def link_position(self, index: int) -> tuple[int, int]:
        """Viewport point over the `index`-th node link (to click it)."""
        seen = 0
        block = self.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                fmt = fragment.charFormat()
                if fmt.isAnchor() and fmt.anchorHref().startswith(NODE_SCHEME):
                    if seen == index:
                        cursor = QTextCursor(self.document())
                        cursor.setPosition(fragment.position() + 1)
                        rect = self.cursorRect(cursor)
                        return rect.center().x(), rect.center().y()
                    seen += 1
                it += 1
            block = block.next()
        raise IndexError(index)
