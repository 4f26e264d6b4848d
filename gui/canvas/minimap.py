"""An overview in the canvas corner: every node as a small block, the visible area as a frame.

It stays out of the way: folded to a small button, it opens while the view pans or zooms and
folds again shortly after (as n8n's does), or stays open when the user opens it with the button.
It paints from the item rectangles into a cached pixmap, so panning only repaints the frame;
click or drag in it to move the view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QWidget

from gui import theme

if TYPE_CHECKING:
    from .view import CanvasView

MAP_SIZE = QSize(180, 112)
BUTTON_SIZE = QSize(30, 30)
TOGGLE = 18  # the fold button in the open map's top-right corner
PEEK_MS = 1200  # how long the map stays open after the view stopped moving


class Minimap(QWidget):
    """A small overview of the scene, anchored to the canvas view's bottom-right corner."""

    def __init__(self, view: "CanvasView") -> None:
        super().__init__(view)
        self.view = view
        self.pinned = False  # opened with the button: stays open until folded
        self.peeking = False  # opened while the view moves
        self._world = QRectF()
        self._blocks: list[tuple[QRectF, bool]] | None = None
        self._picture: QPixmap | None = None
        self._fold = QTimer(self)
        self._fold.setSingleShot(True)
        self._fold.setInterval(PEEK_MS)
        self._fold.timeout.connect(self._end_peek)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFixedSize(BUTTON_SIZE)
        self.setToolTip("Show the overview map")

    # ----- open and folded ----------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        return self.pinned or self.peeking

    def set_pinned(self, on: bool) -> None:
        """The button: open the map for good, or fold it."""
        self.pinned = on
        self.peeking = False
        self._fold.stop()
        self._apply_size()

    def peek(self) -> None:
        """The view moved: open for a moment, so the user sees where they are."""
        if not self.pinned:
            if not self.peeking:
                self.peeking = True
                self._apply_size()
            self._fold.start()

    def _end_peek(self) -> None:
        self.peeking = False
        self._apply_size()

    def _apply_size(self) -> None:
        size = MAP_SIZE if self.is_open else BUTTON_SIZE
        if size != self.size():
            self.setFixedSize(size)
            self._picture = None
            self.view.place_minimap()
        self.setToolTip("Overview: click or drag to move the view; the corner button folds it" if self.is_open
                        else "Show the overview map")
        self.update()

    # ----- content --------------------------------------------------------------------------------
    def rebuild(self) -> None:
        """The nodes changed: take their rectangles again when next painted."""
        self._blocks = None
        self._picture = None
        if self.isVisible() and self.is_open:
            self.update()

    def _take_blocks(self) -> None:
        blocks = []
        world = QRectF()
        for item in self.view.canvas_scene.node_items():
            rect = item.sceneBoundingRect()
            blocks.append((rect, item.kind == "note"))
            world = world.united(rect)
        self._blocks = blocks
        self._world = world.adjusted(-200, -200, 200, 200) if not world.isNull() else QRectF(-500, -300, 1000, 600)

    def _transform(self) -> tuple[float, QPointF]:
        if self._blocks is None:
            self._take_blocks()
        world = self._world
        inner = QRectF(self.rect()).adjusted(6, 6, -6, -6)
        scale = min(inner.width() / max(1.0, world.width()), inner.height() / max(1.0, world.height()))
        offset = QPointF(inner.center().x() - world.center().x() * scale, inner.center().y() - world.center().y() * scale)
        return scale, offset

    def _blocks_picture(self) -> QPixmap:
        """The nodes drawn once per edit; panning repaints only the frame over this pixmap."""
        if self._picture is None:
            t = theme.current()
            scale, offset = self._transform()
            pixmap = QPixmap(self.size())
            pixmap.fill(Qt.GlobalColor.transparent)
            painter = QPainter(pixmap)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            back = QColor(t.node_fill)
            back.setAlpha(235)
            painter.setPen(QPen(t.node_border, 1))
            painter.setBrush(back)
            painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 8, 8)
            painter.setPen(Qt.PenStyle.NoPen)
            for rect, is_note in self._blocks or []:
                painter.setBrush(t.sticky_border(1).lighter(120) if is_note else t.muted_text)
                painter.drawRect(QRectF(rect.x() * scale + offset.x(), rect.y() * scale + offset.y(),
                                        max(2.0, rect.width() * scale), max(2.0, rect.height() * scale)))
            painter.end()
            self._picture = pixmap
        return self._picture

    def _toggle_rect(self) -> QRectF:
        return QRectF(self.width() - TOGGLE - 4, 4, TOGGLE, TOGGLE)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        t = theme.current()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if not self.is_open:
            self._paint_button(painter, t)
            return
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
        # the fold button: a minus in a small rounded square
        box = self._toggle_rect()
        painter.setPen(QPen(t.node_border, 1))
        painter.setBrush(t.node_fill)
        painter.drawRoundedRect(box, 4, 4)
        painter.setPen(QPen(t.node_text, 1.6))
        painter.drawLine(QPointF(box.left() + 5, box.center().y()), QPointF(box.right() - 5, box.center().y()))

    def _paint_button(self, painter: QPainter, t: theme.Theme) -> None:
        """Folded: a round button with a little map (a frame over three blocks)."""
        painter.setPen(QPen(t.node_border, 1))
        painter.setBrush(t.node_fill)
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 8, 8)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(t.muted_text)
        for x, y in ((8, 10), (15, 16), (20, 9)):
            painter.drawRect(QRectF(x, y, 4, 4))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(t.accent, 1.4))
        painter.drawRect(QRectF(6, 7, 14, 13))

    # ----- mouse --------------------------------------------------------------------------------
    def _centre_on(self, point: QPointF) -> None:
        scale, offset = self._transform()
        self.view.centerOn((point - offset) / scale)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() != Qt.MouseButton.LeftButton:
            return
        if not self.is_open:
            self.set_pinned(True)
        elif self._toggle_rect().adjusted(-3, -3, 3, 3).contains(event.position()):
            self.set_pinned(False)
        else:
            self.set_pinned(True)  # using the map: it stays
            self._centre_on(event.position())

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.buttons() & Qt.MouseButton.LeftButton and self.is_open:
            self._centre_on(event.position())
