"""Work that can wait until the window has shown its first frame (filling lists, warming caches)."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class _FirstPaint(QObject):
    def __init__(self, widget: QWidget, callbacks: list[Callable[[], None]]) -> None:
        super().__init__(widget)
        self.callbacks = callbacks

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            for callback in self.callbacks:
                QTimer.singleShot(0, callback)  # after this paint has reached the screen
            self.deleteLater()
        return False


def after_first_frame(widget: QWidget, *callbacks: Callable[[], None]) -> None:
    """Call `callbacks` once `widget` has painted for the first time."""
    widget.installEventFilter(_FirstPaint(widget, list(callbacks)))
