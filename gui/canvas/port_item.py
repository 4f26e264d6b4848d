"""A node's input or output port: a dot for `main`, a diamond for the AI connection types."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsSceneMouseEvent, QStyleOptionGraphicsItem, QWidget

from gui import theme

if TYPE_CHECKING:
    from .node_item import NodeItem

RADIUS = 6.0
HIT = 11.0


class PortItem(QGraphicsItem):
    """One port of a node; dragging from it draws a new connection (handled by the scene)."""

    def __init__(self, node_item: "NodeItem", direction: str, conn_type: str, index: int, label: str,
                 required: bool, side: str) -> None:
        super().__init__(node_item)
        self.node_item = node_item
        self.direction = direction  # "in" or "out"
        self.conn_type = conn_type
        self.index = index
        self.label = label
        self.required = required
        self.side = side  # "left", "right", "top", "bottom"
        self.highlight: str | None = None  # None, "compatible", "hover"
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setZValue(2)

    @property
    def node_name(self) -> str:
        return self.node_item.name

    def boundingRect(self) -> QRectF:
        return QRectF(-HIT, -HIT, 2 * HIT, 2 * HIT)

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addEllipse(self.boundingRect())
        return path

    def set_highlight(self, state: str | None) -> None:
        if state != self.highlight:
            self.highlight = state
            self.update()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        t = theme.current()
        colour = t.port_colour(self.conn_type)
        radius = RADIUS
        if self.highlight == "compatible":
            halo = QColor(colour)
            halo.setAlpha(70)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(halo)
            painter.drawEllipse(QPointF(0, 0), HIT, HIT)
            radius = RADIUS + 1.5
        elif self.highlight == "hover":
            radius = RADIUS + 2
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(t.canvas if self.conn_type == "main" else colour.darker(115), 1.5))
        painter.setBrush(QBrush(colour))
        if self.conn_type == "main":
            painter.drawEllipse(QPointF(0, 0), radius, radius)
        else:
            r = radius + 1
            painter.drawPolygon(QPolygonF([QPointF(0, -r), QPointF(r, 0), QPointF(0, r), QPointF(-r, 0)]))

    def hoverEnterEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        if self.highlight is None:
            self.set_highlight("hover")
        super().hoverEnterEvent(event)

    def hoverLeaveEvent(self, event) -> None:  # noqa: N802
        if self.highlight == "hover":
            self.set_highlight(None)
        super().hoverLeaveEvent(event)

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton and self.scene() is not None:
            self.scene().begin_link(self, event.scenePos())  # type: ignore[attr-defined]
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        self.scene().drag_link(event.scenePos())  # type: ignore[attr-defined]

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        self.scene().end_link(event.scenePos())  # type: ignore[attr-defined]
