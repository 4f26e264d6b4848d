"""An overview in the canvas corner: every node as a small block, the visible area as a frame.

It paints from the document positions into a cached pixmap, so panning the canvas only
repaints the frame; click or drag in it to move the view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QWidget

from gui import theme

if TYPE_CHECKING:
    from .view import CanvasView


class Minimap(QWidget):
    """A small overview of the scene, anchored to the canvas view's bottom-right corner."""

    def __init__(self, view: "CanvasView") -> None:
        super().__init__(view)
        self.view = view
        self.setFixedSize(180, 112)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("Overview: click or drag to move the view")
        self._world = QRectF()
        self._blocks: list[tuple[QRectF, bool]] = []
        self._picture: QPixmap | None = None

    def rebuild(self) -> None:
        """Take the node rectangles from the scene (after an edit or a load)."""
        blocks = []
        world = QRectF()
        for item in self.view.canvas_scene.node_items():
            rect = item.sceneBoundingRect()
            blocks.append((rect, getattr(item, "kind", "") == "note"))
            world = world.united(rect)
        self._blocks = blocks
        self._world = world.adjusted(-200, -200, 200, 200) if not world.isNull() else QRectF(-500, -300, 1000, 600)
        self._picture = None
        self.update()

    def _transform(self) -> tuple[float, QPointF]:
        world = self._world
        inner = QRectF(self.rect()).adjusted(6, 6, -6, -6)
        scale = min(inner.width() / max(1.0, world.width()), inner.height() / max(1.0, world.height()))
        offset = QPointF(inner.center().x() - world.center().x() * scale, inner.center().y() - world.center().y() * scale)
        return scale, offset

    def _blocks_picture(self) -> QPixmap:
        """The nodes drawn once per edit; panning repaints only the frame over this pixmap."""
        if self._picture is None:
            t = theme.current()
            pixmap = QPixmap(self.size())
            pixmap.fill(Qt.GlobalColor.transparent)
            painter = QPainter(pixmap)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            back = QColor(t.node_fill)
            back.setAlpha(235)
            painter.setPen(QPen(t.node_border, 1))
            painter.setBrush(back)
            painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 8, 8)
            scale, offset = self._transform()
            painter.setPen(Qt.PenStyle.NoPen)
            for rect, is_note in self._blocks:
                painter.setBrush(t.sticky_border(1).lighter(120) if is_note else t.muted_text)
                painter.drawRect(QRectF(rect.x() * scale + offset.x(), rect.y() * scale + offset.y(),
                                        max(2.0, rect.width() * scale), max(2.0, rect.height() * scale)))
            painter.end()
            self._picture = pixmap
        return self._picture

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        t = theme.current()
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._blocks_picture())
        scale, offset = self._transform()
        v = self.view.visible_scene_rect()
        frame = QRectF(v.x() * scale + offset.x(), v.y() * scale + offset.y(), v.width() * scale, v.height() * scale)
        frame = frame.intersected(QRectF(self.rect()).adjusted(1, 1, -1, -1))
        fill = QColor(t.accent)
        fill.setAlpha(30)
        painter.setBrush(fill)
        painter.setPen(QPen(t.accent, 1.5))
        painter.drawRect(frame)

    def _centre_on(self, point: QPointF) -> None:
        scale, offset = self._transform()
        self.view.centerOn((point - offset) / scale)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self._centre_on(event.position())

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._centre_on(event.position())
