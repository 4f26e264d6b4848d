"""A connection between two ports, drawn as a bezier curve; selectable and deletable.

Hovering a main link shows n8n's "+" at its middle: clicking it inserts a node into the link.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPainter, QPainterPath, QPainterPathStroker, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QGraphicsPolygonItem, QWidget

from gui import theme
from engine.connection_types import MAIN

from .port_item import PortItem

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStyleOptionGraphicsItem


def link_path(start: QPointF, end: QPointF, conn_type: str) -> QPainterPath:
    """Main links leave rightwards and enter leftwards; AI links rise from sub-node to parent."""
    path = QPainterPath(start)
    if conn_type == MAIN:
        dx = max(60.0, abs(end.x() - start.x()) * 0.5)
        path.cubicTo(start + QPointF(dx, 0), end - QPointF(dx, 0), end)
    else:
        dy = max(40.0, abs(end.y() - start.y()) * 0.5)
        path.cubicTo(start - QPointF(0, dy), end + QPointF(0, dy), end)
    return path


INSERT_SIZE = 20.0
_ARROW = QPolygonF([QPointF(-8, -5), QPointF(0, 0), QPointF(-8, 5)])
_NO_PEN = QPen(Qt.PenStyle.NoPen)


class InsertHandle(QGraphicsItem):
    """The "+" in the middle of a hovered link: insert a node here."""

    def __init__(self, link: "ConnectionItem") -> None:
        super().__init__(link)
        self.link = link
        self.setZValue(1)
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("Insert a node into this connection")

    def boundingRect(self) -> QRectF:
        half = INSERT_SIZE / 2 + 2
        return QRectF(-half, -half, 2 * half, 2 * half)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        t = theme.current()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        half = INSERT_SIZE / 2
        painter.setPen(QPen(t.node_text, 1.3))
        painter.setBrush(t.node_fill)
        painter.drawRoundedRect(QRectF(-half, -half, INSERT_SIZE, INSERT_SIZE), 5, 5)
        painter.setPen(QPen(t.node_text, 1.7, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        painter.drawLine(QPointF(-5, 0), QPointF(5, 0))
        painter.drawLine(QPointF(0, -5), QPointF(0, 5))


class ConnectionItem(QGraphicsPathItem):
    """The drawing of one link of the document (`key` is the editor's `Link`).

    A QGraphicsPathItem, so Qt bounds and strokes it in C++ (no Python per frame); the arrow
    head is a child polygon. Selection is kept in `selected` and shown by colour.
    """

    def __init__(self, key, source: PortItem, target: PortItem, far: bool = False) -> None:
        super().__init__()
        self.key = key
        self.source = source
        self.target = target
        self.conn_type = source.conn_type
        self._shape: QPainterPath | None = None  # the hover and click area, made when first asked
        self.setAcceptHoverEvents(True)
        self.hovered = False
        self.selected = False  # kept here, not by Qt, so Qt's C++ paint never draws a selection box
        self.far = far  # drawn solid and one pixel wide when zoomed far out
        self.read_only = False  # a stored execution is shown: no "+" to insert a node
        self.insert_handle: InsertHandle | None = None  # made on the first hover
        self.arrow: QGraphicsPolygonItem | None = None
        if self.conn_type == MAIN:
            self.arrow = QGraphicsPolygonItem(_ARROW, self)
            self.arrow.setPen(_NO_PEN)
        self.setToolTip(f"{key.source} → {key.target}  (click to select, Delete to remove)")
        source.node_item.connections.add(self)
        target.node_item.connections.add(self)
        source.node_item.links_changed()
        target.node_item.links_changed()
        self.restyle()
        self.update_path()

    def detach(self) -> None:
        self.source.node_item.connections.discard(self)
        self.target.node_item.connections.discard(self)
        self.source.node_item.links_changed()
        self.target.node_item.links_changed()

    def set_selected(self, on: bool) -> None:
        if on != self.selected:
            self.selected = on
            self.restyle()

    def set_far(self, far: bool) -> None:
        if far != self.far:
            self.far = far
            self.restyle()

    def restyle(self) -> None:
        t = theme.current()
        if self.selected:
            colour, width = t.selection, 2.6
        elif self.hovered:
            colour, width = t.node_text, 2.2
        else:
            colour = t.link if self.conn_type == MAIN else t.port_colour(self.conn_type)
            width = 1.8
        pen = QPen(colour, width)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        if self.far:  # a fixed width on screen: links stay visible however far out
            # one pixel: Qt's raster engine draws cosmetic pens up to 1 px wide with its fast line
            # drawing, wider ones through its path stroker (1,500 links: 6 ms a frame against 10)
            pen.setWidthF(2.0 if self.selected else 1.0)
            pen.setCosmetic(True)
        elif self.conn_type != MAIN:
            pen.setDashPattern([4, 3])
        self.setPen(pen)
        if self.arrow is not None:
            self.arrow.setBrush(colour)
            self.arrow.setVisible(not self.far)

    def update_path(self) -> None:
        path = link_path(self.source.scenePos(), self.target.scenePos(), self.conn_type)
        self.setPath(path)
        self._shape = None
        if self.arrow is not None:
            self.arrow.setPos(self.target.scenePos() - QPointF(7, 0))
        if self.insert_handle is not None:
            self.insert_handle.setPos(self.path_point(0.5))

    def path_point(self, fraction: float) -> QPointF:
        """A point on the curve (0 at the source port, 1 at the target)."""
        return self.path().pointAtPercent(max(0.0, min(1.0, fraction)))

    def shape(self) -> QPainterPath:
        if self._shape is None:
            stroker = QPainterPathStroker()
            stroker.setWidth(12)
            self._shape = stroker.createStroke(self.path())
        return self._shape

    def hoverEnterEvent(self, event) -> None:  # noqa: N802
        self.hovered = True
        self.restyle()
        self.show_insert_handle(True)

    def hoverLeaveEvent(self, event) -> None:  # noqa: N802
        self.hovered = False
        self.restyle()
        self.show_insert_handle(False)

    def show_insert_handle(self, on: bool) -> None:
        """The "+" at the middle of a main link, while it is hovered (not far out, not read-only)."""
        on = on and self.conn_type == MAIN and not self.far and not self.read_only
        if on and self.insert_handle is None:
            self.insert_handle = InsertHandle(self)
            self.insert_handle.setPos(self.path_point(0.5))
        if self.insert_handle is not None:
            self.insert_handle.setVisible(on)


class DraftLink(QGraphicsItem):
    """The curve following the mouse while a connection is being dragged."""

    def __init__(self, port: PortItem) -> None:
        super().__init__()
        self.port = port
        self.end = port.scenePos()
        self._path = QPainterPath()
        self.setZValue(5)
        self.move_to(self.end)

    def move_to(self, point: QPointF) -> None:
        self.prepareGeometryChange()
        self.end = point
        if self.port.direction == "out":
            self._path = link_path(self.port.scenePos(), point, self.port.conn_type)
        else:
            self._path = link_path(point, self.port.scenePos(), self.port.conn_type)

    def boundingRect(self) -> QRectF:
        return self._path.boundingRect().adjusted(-4, -4, 4, 4)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(theme.current().port_colour(self.port.conn_type), 2.2, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.drawPath(self._path)
