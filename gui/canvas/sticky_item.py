"""A sticky note: a coloured, resizable card showing its markdown text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QGraphicsItem, QGraphicsRectItem, QGraphicsSceneMouseEvent, QWidget,
)

from gui import theme
from engine.node_type import NodeType
from engine.workflow import Node

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStyleOptionGraphicsItem

GRIP = 14.0
MIN_SIZE = QSizeF(80, 40)


def sticky_values(node: Node, defaults: dict[str, Any]) -> tuple[str, float, float, int]:
    """Content, width, height and colour of a note; what it does not set comes from `defaults`."""
    p: dict[str, Any] = {**defaults, **node.parameters}

    def number(key: str, default: float) -> float:
        value = p.get(key, default)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default
    colour = p.get("color", 1)
    return (
        str(p.get("content", "")),
        max(MIN_SIZE.width(), number("width", 240)),
        max(MIN_SIZE.height(), number("height", 160)),
        int(colour) if isinstance(colour, (int, float)) and not isinstance(colour, bool) else 1,
    )


class StickyItem(QGraphicsRectItem):
    """The drawing of a sticky-note node; the bottom-right grip resizes it."""

    def __init__(self, node: Node, node_type: NodeType) -> None:
        super().__init__()
        self.node = node
        self.node_type = node_type
        self.name = node.name
        self.connections: set = set()
        self.ports: list = []
        self.kind = "note"
        self.defaults = node_type.Params().model_dump() if node_type.supported else {}
        from PySide6.QtGui import QTextDocument  # here: PySide builds a type's enums at its first import (an empty document has no note)

        self.doc = QTextDocument()
        self.doc.setDocumentMargin(12)
        self._resizing: QSizeF | None = None
        self._press: QPointF | None = None
        self._key: tuple[str, float, float, int] | None = None
        self.read_only = False
        self.setFlags(
            QGraphicsItem.GraphicsItemFlag.ItemIsMovable
            | QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
        )
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setPen(QPen(Qt.PenStyle.NoPen))
        self.setAcceptHoverEvents(True)
        self.base_z = -1  # notes lie under nodes and links
        self.setZValue(self.base_z)
        self.refresh(node, force=True)

    def refresh(self, node: Node, force: bool = False) -> None:
        self.node = node
        self.name = node.name
        content, width, height, colour = sticky_values(node, self.defaults)
        key = (content, width, height, colour)
        if force or key != self._key:
            self.prepareGeometryChange()
            self._key = key
            self.content, self.width, self.height, self.colour = key
            self._fit_rect()
            self.doc.setDefaultFont(theme.ui_font(9.5))
            self.doc.setMarkdown(content)
            self.doc.setTextWidth(width)
            self.setToolTip(f"{self.name} (sticky note) — double-click to edit, drag the corner to resize")
            self.update()
        pos = QPointF(float(node.position[0]), float(node.position[1]))
        if pos != self.pos():
            self.setPos(pos)

    def set_run_state(self, status: str | None, runs: int, error: str | None) -> None:
        """Notes never run; accepted so run panels can treat every item alike."""

    def set_breakpoint(self, on: bool) -> None:
        """Notes never run; a breakpoint has no meaning on them."""

    def set_problem(self, problem: str | None) -> None:
        """Notes have no connection rules."""

    def set_read_only(self, on: bool) -> None:
        """Shown from a stored execution: not moved, not resized."""
        self.read_only = on
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsMovable, not on)

    def size(self) -> QSizeF:
        return self._resizing if self._resizing is not None else QSizeF(self.width, self.height)

    def _fit_rect(self) -> None:
        s = self.size()
        self.setRect(QRectF(-2, -2, s.width() + 4, s.height() + 6))

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        t = theme.current()
        s = self.size()
        rect = QRectF(0, 0, s.width(), s.height())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        border = t.selection if self.isSelected() else t.sticky_border(self.colour)
        painter.setPen(QPen(border, 2.0 if self.isSelected() else 1.2))
        painter.setBrush(t.sticky_fill(self.colour))
        painter.drawRoundedRect(rect, 8, 8)
        painter.save()
        painter.setClipRect(rect.adjusted(2, 2, -2, -2))
        context = QAbstractTextDocumentLayout.PaintContext()
        palette = QPalette()
        palette.setColor(QPalette.ColorRole.Text, t.node_text)
        context.palette = palette
        self.doc.documentLayout().draw(painter, context)
        painter.restore()
        painter.setPen(QPen(t.sticky_border(self.colour).darker(120), 1.2))
        corner = rect.bottomRight()
        for d in (4.0, 8.0, 12.0):
            painter.drawLine(corner + QPointF(-d, -3), corner + QPointF(-3, -d))

    def _on_grip(self, pos: QPointF) -> bool:
        if self.read_only:
            return False
        s = self.size()
        return pos.x() > s.width() - GRIP and pos.y() > s.height() - GRIP

    def hoverMoveEvent(self, event) -> None:  # noqa: N802
        shape = Qt.CursorShape.SizeFDiagCursor if self._on_grip(event.pos()) else Qt.CursorShape.ArrowCursor
        self.setCursor(shape)

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton and self._on_grip(event.pos()):
            self._resizing = QSizeF(self.width, self.height)
            self._press = event.pos()
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if self._resizing is not None and self._press is not None:
            delta = event.pos() - self._press
            self.prepareGeometryChange()
            self._resizing = QSizeF(max(MIN_SIZE.width(), self.width + delta.x()),
                                    max(MIN_SIZE.height(), self.height + delta.y()))
            self._fit_rect()
            self.doc.setTextWidth(self._resizing.width())
            self.update()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if self._resizing is not None:
            size = self._resizing
            self.prepareGeometryChange()
            self._resizing = None
            self._fit_rect()
            self.doc.setTextWidth(self.width)
            scene = self.scene()
            if scene is not None and (size.width(), size.height()) != (self.width, self.height):
                scene.note_resized.emit(self.name, round(size.width()), round(size.height()))  # type: ignore[attr-defined]
            return
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event) -> None:  # noqa: N802
        scene = self.scene()
        if scene is not None:
            scene.node_activated.emit(self.name)  # type: ignore[attr-defined]
        event.accept()
