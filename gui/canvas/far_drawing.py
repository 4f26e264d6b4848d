"""Nodes drawn far out (below 35 % zoom), where item-by-item painting costs too much.

Shapes go in a few merged paths per chunk of nodes (an edit rebuilds only its chunk); icons
and names are drawn for the nodes in sight wherever they fit on screen, as n8n shows them at
every zoom level: icons from pixmaps cached per size, names at a readable minimum size,
elided to the room a node has.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen, QPixmap

from gui import theme

if TYPE_CHECKING:
    from .node_item import NodeItem

CHUNK = 64  # nodes per batch of merged paths
MIN_ICON_PX = 7.0  # smaller icons are not drawn
MIN_LABEL_PX = 34.0  # a name needs at least this much width on screen
MIN_FONT_PX = 8.0  # names never get smaller than this on screen
NAME_FONT_PX = 12.5  # the name's size at 100 % (9.5 pt)

Group = tuple[QPainterPath, QColor, QPen]


def label_rooms(items: list["NodeItem"], widest: float) -> list[tuple["NodeItem", float]]:
    """Each node with the width its name may take (scene units): at most `widest`, and no more
    than the gap to the next node whose name sits on the same line (sub-nodes stand close)."""
    lines: dict[int, list["NodeItem"]] = {}
    for item in items:
        lines.setdefault(round((item.pos().y() + item.height) / 40), []).append(item)
    out = []
    for line in lines.values():
        line.sort(key=lambda i: i.pos().x() + i.width / 2)
        centres = [i.pos().x() + i.width / 2 for i in line]
        for k, item in enumerate(line):
            room = max(widest, item.width)
            if k > 0:
                room = min(room, centres[k] - centres[k - 1] - 8)
            if k + 1 < len(line):
                room = min(room, centres[k + 1] - centres[k] - 8)
            out.append((item, max(room, item.width)))
    return out


class FarDrawing:
    """The batched far-out drawing of a scene's node items; `invalidate` after any change."""

    def __init__(self) -> None:
        self._items: list["NodeItem"] = []
        self._chunks: dict[int, list[Group]] = {}
        self._icons: dict[tuple[str, int], QPixmap] = {}

    def set_items(self, items: list["NodeItem"]) -> None:
        self._items = items
        for index, item in enumerate(items):
            item.far_chunk = index // CHUNK
        self._chunks.clear()

    def invalidate(self, item: "NodeItem | None" = None) -> None:
        """One node changed (its chunk is rebuilt), or with None all of them."""
        if item is None:
            self._chunks.clear()
        else:
            self._chunks.pop(item.far_chunk, None)

    def forget_icons(self) -> None:
        self._icons.clear()

    def _chunk(self, index: int) -> list[Group]:
        groups = self._chunks.get(index)
        if groups is None:
            paths: dict[tuple[int, int, float], QPainterPath] = {}
            styles: dict[tuple[int, int, float], tuple[QColor, QPen]] = {}
            for item in self._items[index * CHUNK:(index + 1) * CHUNK]:
                fill, pen = item.far_style()
                key = (fill.rgba(), pen.color().rgba(), pen.widthF())
                path = paths.get(key)
                if path is None:
                    path = paths[key] = QPainterPath()
                    styles[key] = (fill, pen)
                path.addPath(item.body_path().translated(item.pos()))
            groups = self._chunks[index] = [(path, *styles[key]) for key, path in paths.items()]
        return groups

    def paint(self, painter: QPainter, exposed: QRectF, zoom: float) -> None:
        """Shapes, then icons and names of the nodes in `exposed` (scene coordinates)."""
        for index in range((len(self._items) + CHUNK - 1) // CHUNK):
            for path, fill, pen in self._chunk(index):
                painter.setPen(pen)
                painter.setBrush(fill)
                painter.drawPath(path)
        icon_px = 40.0 * zoom
        label_px = 200.0 * zoom
        if icon_px < MIN_ICON_PX and label_px < MIN_LABEL_PX:
            return
        margin = 200.0
        seen = exposed.adjusted(-margin, -margin, margin, margin)
        visible = [i for i in self._items if seen.contains(i.pos())]
        if not visible:
            return
        transform = painter.worldTransform()
        t = theme.current()
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        if icon_px >= MIN_ICON_PX:
            for item in visible:
                self._paint_icon(painter, transform.map(item.pos()), item, icon_px, zoom)
        if label_px >= MIN_LABEL_PX:
            font = QFont(theme.ui_font(9.5, bold=True))
            font.setPixelSize(max(round(MIN_FONT_PX), round(NAME_FONT_PX * zoom)))
            painter.setFont(font)
            metrics = QFontMetricsF(font)
            painter.setPen(t.node_text)
            for item, room in label_rooms(visible, label_px / zoom):
                top_left = transform.map(item.pos())
                width = item.width * zoom
                room_px = room * zoom
                below = top_left.y() + item.height * zoom + 3
                text = metrics.elidedText(item.name, Qt.TextElideMode.ElideRight, room_px - 6)
                painter.drawText(QRectF(top_left.x() + width / 2 - room_px / 2, below, room_px, metrics.height() + 2),
                                 Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, text)
        painter.restore()

    def _paint_icon(self, painter: QPainter, top_left: QPointF, item: "NodeItem", size: float, zoom: float) -> None:
        if item.kind == "wide":
            x = top_left.x() + 22 * zoom
        else:
            x = top_left.x() + (item.width * zoom - size) / 2
        y = top_left.y() + (item.height * zoom - size) / 2
        if item.kind == "sub":
            size *= 0.85
            x = top_left.x() + (item.width * zoom - size) / 2
            y = top_left.y() + (item.height * zoom - size) / 2
        pixmap = self._icon(item.node_type.icon, max(1, round(size)))
        painter.drawPixmap(QRectF(x, y, size, size), pixmap, QRectF(pixmap.rect()))

    def _icon(self, name: str, px: int) -> QPixmap:
        key = (name, px)
        pixmap = self._icons.get(key)
        if pixmap is None:
            pixmap = QPixmap(px, px)
            pixmap.fill(Qt.GlobalColor.transparent)
            p = QPainter(pixmap)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            theme.icon_renderer(name).render(p, QRectF(0, 0, px, px))
            p.end()
            if len(self._icons) > 512:
                self._icons.clear()
            self._icons[key] = pixmap
        return pixmap
