"""The editor of code parameters (the Code Tool's Python or JavaScript): monospace with line
numbers, a handle to make it taller, and a larger dialog to edit in.

Like every field it commits once, when it loses focus (or when the dialog is accepted).
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QFocusEvent, QFontDatabase, QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import (
    QDialog, QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QToolButton, QVBoxLayout, QWidget,
)

from gui import theme

INDENT = "    "
MIN_LINES = 12


class LineNumbers(QWidget):
    """The gutter left of a CodeEditor: one number per line, the current line's in full colour."""

    def __init__(self, editor: "CodeEditor") -> None:
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        current = theme.current()
        painter = QPainter(self)
        painter.fillRect(event.rect(), current.canvas)
        painter.setFont(self.editor.font())
        block = self.editor.firstVisibleBlock()
        top = round(self.editor.blockBoundingGeometry(block).translated(self.editor.contentOffset()).top())
        height = self.editor.fontMetrics().height()
        here = self.editor.textCursor().blockNumber()
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible():
                painter.setPen(current.node_text if block.blockNumber() == here else current.muted_text)
                painter.drawText(0, top, self.width() - 6, height, Qt.AlignmentFlag.AlignRight, str(block.blockNumber() + 1))
            top += round(self.editor.blockBoundingRect(block).height())
            block = block.next()


class CodeEditor(QPlainTextEdit):
    """Monospace text with line numbers; Tab indents; `committed` when focus leaves."""

    committed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("codeEditor")
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.gutter = LineNumbers(self)
        self.blockCountChanged.connect(lambda _n: self._fit_gutter())
        self.updateRequest.connect(self._scroll_gutter)
        self.cursorPositionChanged.connect(self.gutter.update)
        self._fit_gutter()

    def gutter_width(self) -> int:
        digits = max(2, len(str(self.blockCount())))
        return 12 + self.fontMetrics().horizontalAdvance("9") * digits

    def line_numbers_shown(self) -> list[int]:
        """The numbers the gutter draws, first visible line on (what a user reads beside the code)."""
        block, out = self.firstVisibleBlock(), []
        bottom = self.viewport().height()
        while block.isValid() and self.blockBoundingGeometry(block).translated(self.contentOffset()).top() <= bottom:
            out.append(block.blockNumber() + 1)
            block = block.next()
        return out

    def _fit_gutter(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        inner = self.contentsRect()
        self.gutter.setGeometry(QRect(inner.left(), inner.top(), self.gutter_width(), inner.height()))

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Tab and not event.modifiers():
            self.insertPlainText(INDENT)
            return
        super().keyPressEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:  # noqa: N802
        super().focusOutEvent(event)
        self.committed.emit()


class HeightHandle(QFrame):
    """A grip under an editor: dragging it makes the editor taller or shorter."""

    def __init__(self, target: QWidget) -> None:
        super().__init__()
        self.setObjectName("heightHandle")
        self.target = target
        self.setFixedHeight(8)
        self.setCursor(Qt.CursorShape.SizeVerCursor)
        self.setToolTip("Drag to resize the editor")
        self._start: QPoint | None = None
        self._height = 0

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self._start = event.globalPosition().toPoint()
        self._height = self.target.height()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._start is not None:
            self.resize_to(self._height + event.globalPosition().toPoint().y() - self._start.y())

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self._start = None

    def resize_to(self, height: int) -> None:
        self.target.setFixedHeight(max(self.target.fontMetrics().lineSpacing() * 3 + 16, height))

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.setPen(theme.current().muted_text)
        middle = self.width() // 2
        for dx in (-8, 0, 8):
            painter.drawPoint(middle + dx, self.height() // 2)


class CodeDialog(QDialog):
    """The same code in a large window; accepted text goes back to the field."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None) -> None:
        from PySide6.QtWidgets import QDialogButtonBox

        super().__init__(parent)
        self.setObjectName("codeDialog")
        self.setWindowTitle(title)
        self.editor = CodeEditor()
        self.editor.setPlainText(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.editor, 1)
        layout.addWidget(buttons)
        self.resize(900, 640)


class CodeField(QWidget):
    """What the form shows for a code parameter: the editor, its resize handle and "open larger"."""

    committed = Signal()

    def __init__(self, title: str, language: str) -> None:
        super().__init__()
        self.title = title
        self.editor = CodeEditor()
        self.editor.setFixedHeight(self.editor.fontMetrics().lineSpacing() * MIN_LINES + 16)
        self.editor.committed.connect(self.committed.emit)
        self.setFocusProxy(self.editor)
        self.handle = HeightHandle(self.editor)
        self.expand = QToolButton()
        self.expand.setObjectName("openLarger")
        self.expand.setText("⤢ Open larger")
        self.expand.setToolTip(f"Edit the {title} code in a larger window")
        self.expand.setAutoRaise(True)
        self.expand.clicked.connect(self.open_larger)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        if language.lower() != title.lower():  # "Python" titled fields need no "python" under them
            language_label = QLabel(language)
            language_label.setObjectName("fieldHint")
            head.addWidget(language_label)
        head.addStretch(1)
        head.addWidget(self.expand)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(head)
        layout.addWidget(self.editor)
        layout.addWidget(self.handle)
        self.dialog: CodeDialog | None = None

    def text(self) -> str:
        return self.editor.toPlainText()

    def setPlainText(self, text: str) -> None:  # noqa: N802  (as the other text fields)
        self.editor.setPlainText(text)

    def open_larger(self) -> None:
        """Edit in a dialog; OK puts its text in the field and commits it as one edit."""
        self.dialog = CodeDialog(self.title, self.text(), self.window())
        self.dialog.finished.connect(self._dialog_done)
        self.dialog.open()

    def _dialog_done(self, result: int) -> None:
        dialog, self.dialog = self.dialog, None
        if dialog is not None and result == QDialog.DialogCode.Accepted:
            self.editor.setPlainText(dialog.editor.toPlainText())
            self.committed.emit()
