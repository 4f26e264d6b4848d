"""The canvas view: dotted grid, wheel zoom around the cursor, panning, drops from the palette.

Background drag and the middle button pan; Shift+drag draws a selection rectangle.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush, QColor, QPixmap, QDragEnterEvent, QDragMoveEvent, QDropEvent, QKeyEvent, QMouseEvent, QPainter, QPen, QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QFrame, QGraphicsView
from shiboken6 import isValid

from gui import theme

from .minimap import Minimap
from .node_item import NodeItem
from .scene import GRID, WorkflowScene
from .sticky_item import StickyItem

NODE_MIME = "application/x-mini-n8n-node-type"
MIN_ZOOM, MAX_ZOOM = 0.1, 3.0
FAR_ZOOM = 0.35


class CanvasView(QGraphicsView):
    """Shows a WorkflowScene; `node_item(name)` finds the item drawing a node."""

    type_dropped = Signal(str, QPointF)  # node type id, scene position
    nudged = Signal(int, int)  # arrow keys on selected nodes: move by (dx, dy)
    search_typed = Signal(str)  # a printable key typed on the canvas: start a palette search

    def __init__(self, scene: WorkflowScene) -> None:
        super().__init__(scene)
        self.canvas_scene = scene
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing, True)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setDragMode(QGraphicsView.DragMode.NoDrag)
        self.setRubberBandSelectionMode(Qt.ItemSelectionMode.IntersectsItemShape)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setAcceptDrops(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._pan_from: QPointF | None = None
        self._tiles: dict[tuple[float, float, int], QPixmap] = {}
        self.minimap = Minimap(self)
        self.minimap_wanted = True
        self._content_timer = QTimer(self)  # edits in a burst update the overview once, after the frame
        self._content_timer.setSingleShot(True)
        self._content_timer.timeout.connect(self._content_settled)
        self.horizontalScrollBar().valueChanged.connect(self.update_minimap)
        self.verticalScrollBar().valueChanged.connect(self.update_minimap)
        theme.manager().changed.connect(self.on_theme_changed)

    # ----- read-only (a stored execution is shown) ----------------------------------------------
    def set_read_only(self, on: bool) -> None:
        """Show the document without letting it be changed here: no moves, links, "+" handles,
        palette drops or arrow-key nudges (the window refuses its own edit actions)."""
        self.canvas_scene.set_read_only(on)
        self.setAcceptDrops(not on)

    @property
    def read_only(self) -> bool:
        return self.canvas_scene.read_only

    # ----- lookups (used by the run panels too) -----------------------------------------------
    def node_item(self, name: str) -> NodeItem | StickyItem | None:
        return self.canvas_scene.node_item(name)

    def zoom(self) -> float:
        return self.transform().m11()

    def visible_scene_rect(self) -> QRectF:
        return self.mapToScene(self.viewport().rect()).boundingRect()

    # ----- looks --------------------------------------------------------------------------------
    def on_theme_changed(self) -> None:
        self.canvas_scene.far_drawing.invalidate()
        self.canvas_scene.far_drawing.forget_icons()
        self.resetCachedContent()
        self.canvas_scene.restyle()
        self.canvas_scene.update()
        self.minimap.rebuild()

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:  # noqa: N802
        """The dotted grid: one tile per zoom band, filled as a brush (no per-dot Python work)."""
        t = theme.current()
        painter.fillRect(rect, t.canvas)
        zoom = max(self.zoom(), 0.01)
        spacing = GRID
        while spacing * zoom < 12:
            spacing *= 2
        painter.save()
        painter.setBrushOrigin(0, 0)
        painter.fillRect(rect, QBrush(self._grid_tile(spacing, zoom, t.grid)))
        painter.restore()

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:  # noqa: N802
        """Far out, all nodes in a few batched paths (their items are transparent then); on an
        empty canvas, how to start."""
        if not self.canvas_scene.node_items():
            self._paint_empty_hint(painter)
            return
        if self.canvas_scene.far:
            self.canvas_scene.far_drawing.paint(painter, rect, self.zoom())

    def _paint_empty_hint(self, painter: QPainter) -> None:
        t = theme.current()
        painter.save()
        painter.resetTransform()
        box = QRectF(0, 0, 380, 120)
        box.moveCenter(QPointF(self.viewport().rect().center()))
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(t.node_border, 1.5, Qt.PenStyle.DashLine))
        painter.setBrush(t.node_fill)
        painter.drawRoundedRect(box, 14, 14)
        painter.setPen(t.node_text)
        painter.setFont(theme.ui_font(12, bold=True))
        painter.drawText(box.adjusted(0, 18, 0, -60), Qt.AlignmentFlag.AlignCenter, "Add a first step")
        painter.setPen(t.muted_text)
        painter.setFont(theme.ui_font(9.5))
        painter.drawText(box.adjusted(20, 52, -20, -10), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                         "Drag a node from the palette, double-click it, or just start typing here to search. "
                         "Ctrl+V pastes an n8n workflow.")
        painter.restore()

    def _grid_tile(self, spacing: float, zoom: float, colour: QColor) -> QPixmap:
        """A tile `spacing` scene units wide with one dot at its corners, about 1.6 px on screen."""
        key = (spacing, round(zoom, 2), colour.rgba())
        if key not in self._tiles:
            density = min(4.0, max(1.0, zoom * 1.5))  # device pixels per scene unit in the tile
            size = max(1, round(spacing * density))
            tile = QPixmap(size, size)
            tile.fill(Qt.GlobalColor.transparent)
            p = QPainter(tile)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(colour)
            radius = 0.85 * density / zoom
            for cx in (0, size):
                for cy in (0, size):
                    p.drawEllipse(QPointF(cx, cy), radius, radius)
            p.end()
            tile.setDevicePixelRatio(density)
            if len(self._tiles) > 64:
                self._tiles.clear()
            self._tiles[key] = tile
        return self._tiles[key]

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.place_minimap()
        self.update_minimap()

    def place_minimap(self) -> None:
        """The overview sits in the bottom-right corner, open or folded."""
        self.minimap.move(self.width() - self.minimap.width() - 12, self.height() - self.minimap.height() - 12)

    def content_changed(self) -> None:
        """The nodes changed: the overview follows once the edit's frame is drawn."""
        self._content_timer.start(0)

    def _content_settled(self) -> None:
        self.minimap.rebuild()
        self.update_minimap()

    def set_minimap_wanted(self, on: bool) -> None:
        self.minimap_wanted = on
        self.update_minimap()

    def update_minimap(self) -> None:
        """The overview is offered while part of the workflow is out of sight (and the user wants it)."""
        if not isValid(self) or not isValid(self.minimap):
            return  # scroll bars report while the view is being destroyed
        content = self.canvas_scene.items_rect()
        hidden = not content.isNull() and not self.visible_scene_rect().contains(content)
        self.minimap.setVisible(self.minimap_wanted and hidden)
        if self.minimap.isVisible():
            self.minimap.update()

    def _moved_by_user(self) -> None:
        """Panning or zooming opens the overview for a moment."""
        if self.minimap.isVisible():
            self.minimap.peek()

    # ----- zoom and pan -------------------------------------------------------------------------
    def set_zoom(self, factor: float, anchor: QPointF | None = None) -> None:
        """Scale by `factor` (within the zoom limits), keeping the scene point under `anchor` still."""
        target = max(MIN_ZOOM, min(MAX_ZOOM, self.zoom() * factor))
        if anchor is None:
            anchor = QPointF(self.viewport().rect().center())
        fixed = self.mapToScene(anchor.toPoint())
        old_anchor = self.transformationAnchor()
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.scale(target / self.zoom(), target / self.zoom())
        self.setTransformationAnchor(old_anchor)
        moved = self.mapFromScene(fixed)
        self.pan_by(anchor.x() - moved.x(), anchor.y() - moved.y())
        self._apply_detail()
        self.update_minimap()

    def resetTransform(self) -> None:  # noqa: N802
        """100 %, drawn as at 100 % (fitting an empty canvas comes here): the far-out drawing,
        set by the zoom before, would otherwise stay on for the nodes added next."""
        super().resetTransform()
        self._apply_detail()

    def _apply_detail(self) -> None:
        """Far out, links lose antialiasing and dashes: they cannot be told apart, and cost most."""
        far = self.zoom() < FAR_ZOOM
        self.setRenderHint(QPainter.RenderHint.Antialiasing, not far)
        self.canvas_scene.set_far(far)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        delta = event.angleDelta().y()
        if delta == 0:
            return
        self.set_zoom(math.pow(1.0015, delta), event.position())
        self._moved_by_user()
        event.accept()

    def zoom_in(self) -> None:
        self.set_zoom(1.2)
        self._moved_by_user()

    def zoom_out(self) -> None:
        self.set_zoom(1 / 1.2)
        self._moved_by_user()

    def fit_to_view(self) -> None:
        rect = self.canvas_scene.items_rect()
        if rect.isNull():
            self.resetTransform()
            self.centerOn(0, 0)
            return
        self.fitInView(rect.adjusted(-60, -60, 60, 60), Qt.AspectRatioMode.KeepAspectRatio)
        if self.zoom() > 1.2:
            self.set_zoom(1.2 / self.zoom())
        if self.zoom() < MIN_ZOOM:
            self.set_zoom(MIN_ZOOM / self.zoom())
        self._apply_detail()
        self.update_minimap()

    def pan_by(self, dx: float, dy: float) -> None:
        self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - round(dx))
        self.verticalScrollBar().setValue(self.verticalScrollBar().value() - round(dy))
        if not self.canvas_scene.node_items():
            self.viewport().update()  # the empty-canvas hint stays put while the grid scrolls

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        on_item = self.itemAt(event.position().toPoint()) is not None
        if event.button() == Qt.MouseButton.MiddleButton or (
            event.button() == Qt.MouseButton.LeftButton and not on_item
            and not event.modifiers() & (Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier)
        ):
            if event.button() == Qt.MouseButton.LeftButton:
                self.canvas_scene.clearSelection()
            self._pan_from = event.position()
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        if event.button() == Qt.MouseButton.LeftButton and not on_item:
            self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._pan_from is not None:
            delta = event.position() - self._pan_from
            self._pan_from = event.position()
            self.pan_by(delta.x(), delta.y())
            self._moved_by_user()
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._pan_from is not None:
            self._pan_from = None
            self.viewport().unsetCursor()
            event.accept()
            return
        super().mouseReleaseEvent(event)
        self.setDragMode(QGraphicsView.DragMode.NoDrag)

    # ----- palette drops and typing -------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasFormat(NODE_MIME):
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802
        if event.mimeData().hasFormat(NODE_MIME):
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        if event.mimeData().hasFormat(NODE_MIME) and not self.read_only:
            type_id = bytes(event.mimeData().data(NODE_MIME).data()).decode("utf-8")
            self.type_dropped.emit(type_id, self.mapToScene(event.position().toPoint()))
            event.acceptProposedAction()
        else:
            super().dropEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        arrows = {Qt.Key.Key_Left: (-1, 0), Qt.Key.Key_Right: (1, 0), Qt.Key.Key_Up: (0, -1), Qt.Key.Key_Down: (0, 1)}
        if event.key() in arrows and self.canvas_scene.selected_names() and not self.read_only:
            step = 50 if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else 10
            dx, dy = arrows[Qt.Key(event.key())]
            self.nudged.emit(dx * step, dy * step)
            event.accept()
            return
        text = event.text()
        if text and text.isprintable() and not text.isspace() and not event.modifiers() & (
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
        ) and self.scene().focusItem() is None:
            self.search_typed.emit(text)
            event.accept()
            return
        super().keyPressEvent(event)
