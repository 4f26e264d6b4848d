"""A node's input or output port: a dot for `main`, a diamond for the AI connection types.

Ports are QGraphicsPathItems so Qt paints and bounds them in C++ (thousands per canvas);
Python only handles the mouse and the highlight state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsSceneMouseEvent

from gui import theme

if TYPE_CHECKING:
    from .node_item import NodeItem

RADIUS = 6.0
HIT = 11.0


def port_path(conn_type: str, radius: float) -> QPainterPath:
    path = QPainterPath()
    if conn_type == "main":
        path.addEllipse(QPointF(0, 0), radius, radius)
    else:
        r = radius + 1
        path.addPolygon(QPolygonF([QPointF(0, -r), QPointF(r, 0), QPointF(0, r), QPointF(-r, 0), QPointF(0, -r)]))
    return path


_CROSS = Qt.CursorShape.CrossCursor
_HALO_PATH = QPainterPath()
_HALO_PATH.addEllipse(QPointF(0, 0), HIT + 2, HIT + 2)
_SHAPE = QPainterPath()
_SHAPE.addEllipse(QRectF(-HIT, -HIT, 2 * HIT, 2 * HIT))
_looks: dict[tuple[bool, str, str | None], tuple[QPainterPath, QBrush, QPen, QBrush | None]] = {}


def _look(t: "theme.Theme", conn_type: str, highlight: str | None) -> tuple[QPainterPath, QBrush, QPen, QBrush | None]:
    """Path, fill, outline and halo of a port, made once per theme, type and highlight (thousands
    of ports share them)."""
    key = (t.dark, conn_type, highlight)
    found = _looks.get(key)
    if found is None:
        colour = t.port_colour(conn_type)
        radius = RADIUS + {"compatible": 1.5, "hover": 2.5}.get(highlight or "", 0.0)
        halo = None
        if highlight is not None:
            tint = QColor(colour)
            tint.setAlpha(70 if highlight == "compatible" else 110)
            halo = QBrush(tint)
        pen = QPen(t.canvas if conn_type == "main" else colour.darker(115), 1.5)
        found = _looks[key] = (port_path(conn_type, radius), QBrush(colour), pen, halo)
    return found


class PortItem(QGraphicsPathItem):
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
        self._halo: QGraphicsPathItem | None = None  # made when first highlighted
        self.setAcceptHoverEvents(True)
        self.setZValue(2)
        self.restyle()

    @property
    def node_name(self) -> str:
        return self.node_item.name

    def restyle(self) -> None:
        """Take the colours of the current theme and the highlight state."""
        path, brush, pen, halo = _look(theme.current(), self.conn_type, self.highlight)
        self.setPath(path)
        self.setBrush(brush)
        self.setPen(pen)
        if halo is not None:
            if self._halo is None:
                self._halo = QGraphicsPathItem(self)
                self._halo.setFlag(QGraphicsPathItem.GraphicsItemFlag.ItemStacksBehindParent)
                self._halo.setPen(QPen(Qt.PenStyle.NoPen))
                self._halo.setPath(_HALO_PATH)
            self._halo.setBrush(halo)
            self._halo.show()
        elif self._halo is not None:
            self._halo.hide()

    def shape(self) -> QPainterPath:
        return _SHAPE

    def set_highlight(self, state: str | None) -> None:
        if state != self.highlight:
            self.highlight = state
            self.restyle()

    def hoverEnterEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        if not self.hasCursor():
            self.setCursor(_CROSS)  # set when first needed: thousands of ports are never hovered
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
