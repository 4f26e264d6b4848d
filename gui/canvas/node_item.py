"""A node on the canvas: shape, icon, name, status badge and ports, drawn from the document.

The item holds no document state of its own beyond what it needs to paint; `refresh` copies
the node's current values in after every edit. Free ports carry n8n's "+" handle: clicking it
asks the scene to add a node connected there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QWidget

from gui import theme
from engine.connection_types import MAIN, PortSpec
from engine.node_settings import has_error_output, ports_of
from engine.node_type import NodeType
from engine.rules import port_name
from engine.versions import version_note
from engine.workflow import Node

from .port_item import PortItem

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStyleOptionGraphicsItem

SQUARE = 100.0
CIRCLE = 80.0
WIDE_WIDTH = 240.0
WIDE_HEIGHT = 100.0
LABEL_WIDTH = 200.0
PLUS_SIZE = 18.0  # the "+" handle on a free port
PLUS_OUT = 46.0  # its distance from a right-side output port
PLUS_BELOW = 46.0  # its distance under a bottom (sub-node) input
BREAKPOINT_COLOUR = QColor("#e5484d")
PIN_COLOUR = QColor("#7c4dff")  # n8n marks pinned data in purple
VERSION_COLOUR = QColor("#e5a00d")
# made once: every node item uses them, and each Qt enum operation costs a Python call
_FLAGS = QGraphicsItem.GraphicsItemFlag.ItemIsMovable | QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
_CACHE = QGraphicsItem.CacheMode.DeviceCoordinateCache
_NO_PEN = QPen(Qt.PenStyle.NoPen)


MAIN_LABEL_OFFSET = 8.0  # a main port's label starts this far out from the port, above its link
SUB_LABEL_GAP = 10.0  # room between two labels under a wide node's sub-node inputs
PORT_LABEL_POINTS = 8.0  # the small font port labels are written in


def plus_out(label: str, width: float | None = None) -> float:
    """How far right of an output port its "+" sits: past the port's label, if it has one."""
    if not label:
        return PLUS_OUT
    if width is None:
        width = QFontMetricsF(theme.ui_font(PORT_LABEL_POINTS)).horizontalAdvance(label)
    return max(PLUS_OUT, MAIN_LABEL_OFFSET + width + PLUS_SIZE / 2 + 8)


def sub_input_label(spec: PortSpec) -> str:
    return (spec.label or port_name(spec.type)) + ("*" if spec.required else "")


def wide_width(inputs: tuple[PortSpec, ...]) -> float:
    """Width of a node taking sub-nodes: the usual width, or wider so that its sub-node inputs,
    spread evenly along the bottom edge, each have room for their label (as n8n widens an agent
    with many inputs)."""
    labels = [sub_input_label(s) for s in inputs if s.type != MAIN]
    if not labels:
        return WIDE_WIDTH
    fm = QFontMetricsF(theme.ui_font(PORT_LABEL_POINTS))
    slot = max(fm.horizontalAdvance(label) for label in labels) + 8 + SUB_LABEL_GAP
    return max(WIDE_WIDTH, slot * len(labels))


def node_kind(inputs: tuple[PortSpec, ...], outputs: tuple[PortSpec, ...]) -> str:
    """How a node is drawn: `wide` (takes sub-nodes), `sub` (feeds a parent), or `square`."""
    if any(spec.type != MAIN for spec in inputs):
        return "wide"
    if outputs and all(spec.type != MAIN for spec in outputs):
        return "sub"
    return "square"


def body_size(node_type: NodeType) -> tuple[float, float]:
    """Width and height of a node of this type on the canvas (before it exists)."""
    kind = node_kind(node_type.inputs, node_type.outputs)
    if kind == "wide":
        return wide_width(node_type.inputs), WIDE_HEIGHT
    if kind == "sub":
        return CIRCLE, CIRCLE
    return SQUARE, SQUARE


class NodeItem(QGraphicsRectItem):
    """The drawing of one workflow node; `set_run_state` paints the run status area.

    A QGraphicsRectItem whose rect is the fixed bounding box, so Qt bounds it in C++ on every
    frame; the drawing itself is Python but cached per item (DeviceCoordinateCache).
    """

    def __init__(self, node: Node, node_type: NodeType,
                 link_types: tuple[set[str], set[str]] | None = None) -> None:
        """`link_types` (inputs, outputs) gives an unsupported node ports for the links it has."""
        super().__init__()
        self.node = node
        self.node_type = node_type
        self.inputs: tuple[PortSpec, ...]
        self.outputs: tuple[PortSpec, ...]
        self.inputs, self.outputs = ports_of(node_type, node)
        if link_types is not None:
            ins, outs = link_types
            feeds_a_parent = bool(outs) and MAIN not in outs  # an unknown model, memory or tool
            self.inputs = tuple(PortSpec(t) for t in sorted(ins or (set() if feeds_a_parent else {MAIN})))
            self.outputs = tuple(PortSpec(t) for t in sorted(outs or {MAIN}))
        self.kind = node_kind(self.inputs, self.outputs)
        self.name = node.name
        self.disabled = node.is_disabled
        self.status: str | None = None
        self.runs = 0
        self.error: str | None = None
        self.breakpoint = False
        self.problem: str | None = None
        self.pinned = False  # the node outputs its pinned data instead of running
        self.read_only = False  # a stored execution is shown: no moves, no "+" handles
        self.version_note = version_note(node, node_type)  # a typeVersion its type does not map
        self.connections: set = set()
        self._shape: QPainterPath | None = None
        self._body: QPainterPath | None = None
        self.far_chunk = 0  # which batch of the far-out drawing holds this node
        if self.kind == "wide":
            self.width, self.height = wide_width(self.inputs), WIDE_HEIGHT
        elif self.kind == "sub":
            self.width = self.height = CIRCLE
        else:
            self.width = self.height = SQUARE
        self.setFlags(_FLAGS)
        self.setCacheMode(_CACHE)
        self.setPen(_NO_PEN)
        self.setRect(self._bounds())
        self.setAcceptHoverEvents(True)
        self.base_z = 1
        self.setZValue(self.base_z)
        self.ports: list[PortItem] = []
        self._build_ports()
        self.setPos(QPointF(float(node.position[0]), float(node.position[1])))
        self._update_tooltip()

    # ----- ports ---------------------------------------------------------------------------
    def _build_ports(self) -> None:
        main_in = [s for s in self.inputs if s.type == MAIN]
        sub_in = [s for s in self.inputs if s.type != MAIN]
        main_out = [s for s in self.outputs if s.type == MAIN]
        sub_out = [s for s in self.outputs if s.type != MAIN]
        for i, spec in enumerate(main_in):
            port = PortItem(self, "in", MAIN, i, spec.label, spec.required, "left")
            port.setPos(0, self.height * (i + 1) / (len(main_in) + 1))
            self.ports.append(port)
        for i, spec in enumerate(main_out):
            port = PortItem(self, "out", MAIN, i, spec.label, spec.required, "right")
            port.setPos(self.width, self.height * (i + 1) / (len(main_out) + 1))
            self.ports.append(port)
        step = self.width / max(1, len(sub_in))
        same_type: dict[str, int] = {}  # the k-th port of a type is input index k (an Agent's Fallback Model: 1)
        for i, spec in enumerate(sub_in):
            label = sub_input_label(spec)
            index = same_type[spec.type] = same_type.get(spec.type, -1) + 1
            port = PortItem(self, "in", spec.type, index, label, spec.required, "bottom")
            port.setPos(step * (i + 0.5), self.height)
            self.ports.append(port)
        for i, spec in enumerate(sub_out):
            port = PortItem(self, "out", spec.type, 0, spec.label, spec.required, "top")
            port.setPos(self.width * (i + 1) / (len(sub_out) + 1), 0)
            self.ports.append(port)

    def set_ports(self, inputs: tuple[PortSpec, ...], outputs: tuple[PortSpec, ...]) -> None:
        """Show other ports (a parameter switched a port on or off, a Switch's rules, the error
        output of On Error); links are re-made by the scene."""
        for port in self.ports:
            port.setParentItem(None)
            if port.scene() is not None:
                port.scene().removeItem(port)
        self.ports = []
        self.inputs, self.outputs = inputs, outputs
        if self.kind == "wide" and wide_width(inputs) != self.width:
            self.prepareGeometryChange()
            self.width = wide_width(inputs)
            self.setRect(self._bounds())
            self._shape = self._body = None
        self._build_ports()
        self._look_changed()

    def port(self, direction: str, conn_type: str, index: int = 0) -> PortItem | None:
        for port in self.ports:
            if port.direction == direction and port.conn_type == conn_type and port.index == index:
                return port
        for port in self.ports:  # files may name an index the type does not declare
            if port.direction == direction and port.conn_type == conn_type:
                return port
        return None

    # ----- "+" handles on free ports ---------------------------------------------------------
    def plus_spots(self) -> list[tuple[PortItem, QPointF]]:
        """Free ports and where their "+" sits: main outputs with no link, sub-node inputs with
        no link (a Tool input takes many, so it always has one). None while read-only."""
        if self.read_only or not self.node_type.supported:
            return []
        links: dict[PortItem, int] = {}
        for link in self.connections:
            for end in (link.source, link.target):
                links[end] = links.get(end, 0) + 1
        spots = []
        for port in self.ports:
            if port.side == "right" and port not in links:
                spots.append((port, port.pos() + QPointF(plus_out(port.label), 0)))
            elif port.side == "bottom":
                limit = next((s.max_connections for s in self.inputs if s.type == port.conn_type), None)
                if limit is None or links.get(port, 0) < limit:
                    spots.append((port, port.pos() + QPointF(0, PLUS_BELOW)))
        return spots

    def plus_at(self, pos: QPointF) -> PortItem | None:
        """The port whose "+" is under `pos` (item coordinates)."""
        for port, centre in self.plus_spots():
            if abs(pos.x() - centre.x()) <= PLUS_SIZE / 2 + 3 and abs(pos.y() - centre.y()) <= PLUS_SIZE / 2 + 3:
                return port
        return None

    def links_changed(self) -> None:
        """A link to or from this node came or went: the "+" handles follow."""
        self._shape = None
        self.update()

    def set_read_only(self, on: bool) -> None:
        self.read_only = on
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsMovable, not on)
        self.links_changed()

    # ----- state from the document and from runs ------------------------------------------
    def refresh(self, node: Node) -> None:
        """Take the node's current name, position and disabled flag from the document."""
        self.node = node
        note = version_note(node, self.node_type)
        changed = node.name != self.name or node.is_disabled != self.disabled or note != self.version_note
        self.version_note = note
        self.name = node.name
        self.disabled = node.is_disabled
        pos = QPointF(float(node.position[0]), float(node.position[1]))
        if pos != self.pos():
            self.setPos(pos)
            self.moved()
        if changed:
            self._update_tooltip()
            self._look_changed()

    def moved(self) -> None:
        """The item was moved (by a drag or from the document): its links and the far-out
        drawing follow. Called explicitly: an itemChange override would cost a Python call
        on every change of every item."""
        for link in self.connections:
            link.update_path()
        scene = self.scene()
        if scene is not None and scene.far:  # type: ignore[attr-defined]
            scene.far_changed(self)  # type: ignore[attr-defined]

    def set_run_state(self, status: str | None, runs: int, error: str | None) -> None:
        """Show a run status (None, running, success, error, paused), run count and error."""
        self.status, self.runs, self.error = status, runs, error
        self._update_tooltip()
        self._look_changed()

    def set_breakpoint(self, on: bool) -> None:
        self.breakpoint = on
        self.update()

    def set_pinned(self, on: bool) -> None:
        if on != self.pinned:
            self.pinned = on
            self._update_tooltip()
            self._look_changed()

    def set_problem(self, problem: str | None) -> None:
        """A broken connection rule of this node (for example a missing Chat Model)."""
        if problem != self.problem:
            self.problem = problem
            self._update_tooltip()
            self.update()

    def _update_tooltip(self) -> None:
        lines = [f"<b>{self.name}</b> — {self.node_type.display_name}"]
        if not self.node_type.supported:
            lines.append(f"Unsupported node type <code>{self.node.type}</code>: kept unchanged in the file")
        if self.disabled:
            lines.append("Deactivated: skipped when the workflow runs")
        if self.pinned:
            lines.append("Pinned data: outputs its pinned items without running (unpin in the Node data tab)")
        if self.version_note:
            lines.append(f"⚠ {self.version_note}")
        if self.problem:
            lines.append(f"⚠ {self.problem}")
        if self.error:
            lines.append(f"<span style='color:#e5484d'>{self.error}</span>")
        self.setToolTip("<br>".join(lines))

    # ----- geometry ------------------------------------------------------------------------
    def body_rect(self) -> QRectF:
        return QRectF(0, 0, self.width, self.height)

    def _bounds(self) -> QRectF:
        """Body, name lines under it, room for the "+" handles right of it and for the labels
        of its main ports (a Switch's outputs, the error output, a Merge's inputs)."""
        extra = (LABEL_WIDTH - self.width) / 2 if self.width < LABEL_WIDTH else 0
        fm = QFontMetricsF(theme.ui_font(PORT_LABEL_POINTS))
        out_label = max((fm.horizontalAdvance(s.label) for s in self.outputs if s.type == MAIN and s.label), default=0)
        in_label = max((fm.horizontalAdvance(s.label) for s in self.inputs if s.type == MAIN and s.label), default=0)
        right = max(self.width + extra + 14, self.width + plus_out(" " if out_label else "", out_label) + PLUS_SIZE / 2 + 4)
        left = max(extra + 14, MAIN_LABEL_OFFSET + in_label + 4 if in_label else 0)
        return QRectF(-left, -14, right + left, self.height + 76)

    def shape(self) -> QPainterPath:
        """The body, and the "+" handles so that clicks on them reach the node."""
        if self._shape is None:
            path = self.body_path()
            for _port, centre in self.plus_spots():
                path.addRect(QRectF(centre.x() - PLUS_SIZE / 2 - 3, centre.y() - PLUS_SIZE / 2 - 3,
                                    PLUS_SIZE + 6, PLUS_SIZE + 6))
            self._shape = path
        return self._shape

    def body_path(self) -> QPainterPath:
        if self._body is None:
            path = QPainterPath()
            if self.kind == "sub":
                path.addEllipse(self.body_rect())
            else:
                path.addRoundedRect(self.body_rect(), 12, 12)
            self._body = path
        return QPainterPath(self._body)

    # ----- painting ------------------------------------------------------------------------
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        t = theme.current()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        supported = self.node_type.supported
        body = self.body_path()
        if option.levelOfDetailFromTransform(painter.worldTransform()) < 0.3:
            self._paint_far(painter, t, body)
            return
        fill = t.disabled_fill if self.disabled else t.node_fill
        painter.setPen(Qt.PenStyle.NoPen)
        shadow = QColor(0, 0, 0, 60 if t.dark else 22)
        painter.setBrush(shadow)
        painter.drawPath(body.translated(0, 2))
        if self.isSelected():  # n8n's halo: a soft ring round the node, no colour of a state
            halo = QColor(t.selection)
            halo.setAlpha(70)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(halo, 9))
            painter.drawPath(body)
            painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QBrush(fill))
        if self.isSelected():
            pen = QPen(t.selection, 2.2)
        elif self.status:
            pen = QPen(t.status_colour(self.status), 2.2)
        elif not supported:
            pen = QPen(t.unsupported, 2.0, Qt.PenStyle.DashLine)
        elif self.problem:
            pen = QPen(t.status_colour("error").lighter(130), 1.6, Qt.PenStyle.DashLine)
        else:
            pen = QPen(t.node_border, 1.3)
        painter.setPen(pen)
        painter.drawPath(body)

        painter.save()
        if self.disabled:
            painter.setOpacity(0.4)
        self._paint_icon(painter)
        painter.restore()
        self._paint_texts(painter, t)
        if self.disabled:
            painter.setPen(QPen(t.muted_text, 1.4))
            painter.drawLine(QPointF(self.width * 0.2, self.height * 0.2), QPointF(self.width * 0.8, self.height * 0.8))
        self._paint_status(painter, t)
        if self.pinned:
            self._paint_pin(painter, t)
        if self.version_note:
            self._paint_version_warning(painter)
        if self.breakpoint:
            painter.setPen(QPen(t.node_fill, 1.5))
            painter.setBrush(BREAKPOINT_COLOUR)
            painter.drawEllipse(self.breakpoint_centre(), 6, 6)
        self._paint_plus(painter, t)

    def breakpoint_centre(self) -> QPointF:
        """The breakpoint dot sits inside the outline, in the top-left corner (on the circle's rim
        for sub-nodes)."""
        if self.kind == "sub":
            inset = self.width / 2 * (1 - 0.7071) + 9  # 45 degrees on the circle, 9 units inwards
            return QPointF(inset, inset)
        return QPointF(13, 13)

    def _paint_plus(self, painter: QPainter, t: theme.Theme) -> None:
        """n8n's handle on a free port: a short line, then a "+" in a small rounded square."""
        for port, centre in self.plus_spots():
            colour = t.muted_text if port.conn_type == MAIN else t.port_colour(port.conn_type)
            painter.setPen(QPen(colour, 1.4))
            if port.side == "right":
                painter.drawLine(port.pos() + QPointF(8, 0), centre - QPointF(PLUS_SIZE / 2, 0))
            else:
                painter.drawLine(port.pos() + QPointF(0, 26), centre - QPointF(0, PLUS_SIZE / 2))
            box = QRectF(centre.x() - PLUS_SIZE / 2, centre.y() - PLUS_SIZE / 2, PLUS_SIZE, PLUS_SIZE)
            painter.setBrush(t.node_fill)
            painter.drawRoundedRect(box, 4, 4)
            painter.setPen(QPen(colour, 1.6, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
            painter.drawLine(centre - QPointF(4.5, 0), centre + QPointF(4.5, 0))
            painter.drawLine(centre - QPointF(0, 4.5), centre + QPointF(0, 4.5))

    def _paint_pin(self, painter: QPainter, t: theme.Theme) -> None:
        """n8n's mark of a pinned node: a pin in a purple disc at the top right corner."""
        centre = QPointF(self.width - 4, 4)
        painter.setPen(QPen(t.node_fill, 2))
        painter.setBrush(PIN_COLOUR)
        painter.drawEllipse(centre, 9, 9)
        painter.setPen(QPen(QColor("white"), 1.6, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        painter.setBrush(QColor("white"))
        painter.drawEllipse(centre + QPointF(1.6, -1.6), 2.6, 2.6)
        painter.drawLine(centre + QPointF(1.0, -1.0), centre + QPointF(-4.0, 4.0))

    def _paint_version_warning(self, painter: QPainter) -> None:
        """An amber "!" at the bottom left: the node's typeVersion is not one its type maps."""
        centre = QPointF(4, self.height - 4)
        painter.setPen(QPen(QColor("white"), 1.5))
        painter.setBrush(VERSION_COLOUR)
        painter.drawEllipse(centre, 8, 8)
        painter.setFont(theme.ui_font(8, bold=True))
        painter.setPen(QColor("white"))
        painter.drawText(QRectF(centre.x() - 8, centre.y() - 8, 16, 16), Qt.AlignmentFlag.AlignCenter, "!")

    def far_style(self) -> tuple[QColor, QPen]:
        """Fill and outline far out, where a node is a shape with its state colour."""
        t = theme.current()
        if self.isSelected():
            border = t.selection
        elif self.status:
            border = t.status_colour(self.status)
        elif not self.node_type.supported:
            border = t.unsupported
        else:
            border = t.muted_text
        pen = QPen(border, 6 if self.isSelected() or self.status else 3)
        return (t.disabled_fill if self.disabled else t.node_fill), pen

    def _paint_far(self, painter: QPainter, t: theme.Theme, body: QPainterPath) -> None:
        fill, pen = self.far_style()
        painter.setPen(pen)
        painter.setBrush(fill)
        painter.drawPath(body)

    def _look_changed(self) -> None:
        self.update()
        scene = self.scene()
        if scene is not None and scene.far:  # type: ignore[attr-defined]
            scene.far_changed(self)  # type: ignore[attr-defined]
            scene.update()

    def _paint_icon(self, painter: QPainter) -> None:
        renderer = theme.icon_renderer(self.node_type.icon)
        if self.kind == "wide":
            size = 40.0
            rect = QRectF(22, (self.height - size) / 2, size, size)
        else:
            size = 40.0 if self.kind == "square" else 34.0
            rect = QRectF((self.width - size) / 2, (self.height - size) / 2, size, size)
            if not self.node_type.supported:
                rect.translate(0, -8)
        renderer.render(painter, rect)

    def _paint_main_labels(self, painter: QPainter, t: theme.Theme, small: QFont) -> None:
        """The names of main ports that have one, outside the body just above each port's link
        (n8n writes a Switch's outputs and "Success"/"Error" there); the error output in red."""
        labelled = [p for p in self.ports if p.side in ("left", "right") and p.label]
        if not labelled:
            return
        painter.setFont(small)
        fm = QFontMetricsF(small)
        last_output = sum(1 for s in self.outputs if s.type == MAIN) - 1
        for port in labelled:
            width = fm.horizontalAdvance(port.label) + 2
            if port.side == "right":
                box = QRectF(port.x() + MAIN_LABEL_OFFSET, port.y() - fm.height() - 1, width, fm.height())
                align = Qt.AlignmentFlag.AlignLeft
            else:
                box = QRectF(port.x() - MAIN_LABEL_OFFSET - width, port.y() - fm.height() - 1, width, fm.height())
                align = Qt.AlignmentFlag.AlignRight
            error = port.side == "right" and port.index == last_output and has_error_output(self.node)
            painter.setPen(t.status_colour("error") if error else t.muted_text)
            painter.drawText(box, align | Qt.AlignmentFlag.AlignVCenter, port.label)

    def _paint_texts(self, painter: QPainter, t: theme.Theme) -> None:
        name_font = theme.ui_font(9.5, bold=True)
        small = theme.ui_font(PORT_LABEL_POINTS)
        self._paint_main_labels(painter, t, small)
        if self.kind == "wide":
            subtitle = "Deactivated" if self.disabled else (
                self.node_type.display_name if self.name != self.node_type.display_name else "")
            painter.setFont(name_font)
            painter.setPen(t.node_text)
            fm = QFontMetricsF(name_font)
            top = self.height / 2 - (20 if subtitle else 11)
            text_rect = QRectF(74, top, self.width - 110, 22)
            painter.drawText(text_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                             fm.elidedText(self.name, Qt.TextElideMode.ElideRight, text_rect.width()))
            painter.setFont(small)
            if subtitle:
                painter.setPen(t.muted_text)
                painter.drawText(QRectF(74, self.height / 2 + 1, self.width - 110, 18),
                                 Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, subtitle)
            fm_small = QFontMetricsF(small)
            for port in self.ports:
                if port.side == "bottom":
                    width = fm_small.horizontalAdvance(port.label) + 8
                    box = QRectF(port.x() - width / 2, self.height + 10, width, fm_small.height() + 2)
                    back = QColor(t.canvas)
                    back.setAlpha(225)
                    painter.setPen(Qt.PenStyle.NoPen)
                    painter.setBrush(back)
                    painter.drawRoundedRect(box, 4, 4)
                    painter.setPen(t.port_colour(port.conn_type) if port.required else t.muted_text)
                    painter.drawText(box, Qt.AlignmentFlag.AlignCenter, port.label)
            return
        if not self.node_type.supported:
            painter.setFont(theme.ui_font(7, bold=True))
            painter.setPen(t.unsupported)
            painter.drawText(QRectF(0, self.height - 30, self.width, 16), Qt.AlignmentFlag.AlignHCenter, "UNSUPPORTED")
        painter.setFont(name_font)
        painter.setPen(t.node_text)
        fm = QFontMetricsF(name_font)
        left = self.width / 2 - LABEL_WIDTH / 2
        lines = self._label_lines(fm)
        for i, line in enumerate(lines):
            painter.drawText(QRectF(left, self.height + 8 + i * 16, LABEL_WIDTH, 18), Qt.AlignmentFlag.AlignHCenter, line)
        subtitle_top = self.height + 10 + 16 * len(lines)
        subtitle = ""
        if not self.node_type.supported:
            subtitle = self.node.type
        elif self.disabled:
            subtitle = "Deactivated"
        if subtitle:
            painter.setFont(small)
            painter.setPen(t.unsupported if not self.node_type.supported else t.muted_text)
            fm_small = QFontMetricsF(small)
            painter.drawText(QRectF(left, subtitle_top, LABEL_WIDTH, 16), Qt.AlignmentFlag.AlignHCenter,
                             fm_small.elidedText(subtitle, Qt.TextElideMode.ElideMiddle, LABEL_WIDTH))

    def _label_lines(self, fm: QFontMetricsF) -> list[str]:
        """The name in at most two centred lines, broken at a space, the rest elided."""
        width = LABEL_WIDTH - 30
        if fm.horizontalAdvance(self.name) <= width:
            return [self.name]
        words = self.name.split(" ")
        first = words[0]
        rest_at = 1
        for i in range(1, len(words)):
            candidate = " ".join(words[: i + 1])
            if fm.horizontalAdvance(candidate) > width:
                break
            first, rest_at = candidate, i + 1
        rest = " ".join(words[rest_at:])
        if not rest:
            return [fm.elidedText(self.name, Qt.TextElideMode.ElideRight, width)]
        return [first, fm.elidedText(rest, Qt.TextElideMode.ElideRight, width)]

    def _paint_status(self, painter: QPainter, t: theme.Theme) -> None:
        if self.problem and not self.status:
            centre = QPointF(self.width - 14, 14) if self.kind != "sub" else QPointF(self.width - 8, 8)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(t.status_colour("error"))
            painter.drawEllipse(centre, 7, 7)
            painter.setPen(QPen(QColor("white"), 1.8))
            painter.drawLine(centre + QPointF(0, -3.5), centre + QPointF(0, 1))
            painter.drawPoint(centre + QPointF(0, 3.5))
        if not self.status:
            return
        colour = t.status_colour(self.status)
        glyph = {"running": "…", "success": "✓", "error": "!", "paused": "❚❚"}.get(self.status, "")
        text = f"{glyph} {self.runs}" if self.runs > 1 or (self.runs and self.status != "running") else glyph
        font = theme.ui_font(8.5, bold=True)
        fm = QFontMetricsF(font)
        width = max(22.0, fm.horizontalAdvance(text) + 14)
        if self.kind == "sub":
            rect = QRectF(self.width - width + 8, self.height - 20, width, 20)
        elif self.kind == "wide":
            rect = QRectF(self.width - width - 8, 8, width, 20)
        else:
            rect = QRectF(self.width - width - 6, self.height - 26, width, 20)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(rect, 10, 10)
        painter.setFont(font)
        painter.setPen(QColor("white"))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)

    def mousePressEvent(self, event) -> None:  # noqa: N802
        port = self.plus_at(event.pos()) if event.button() == Qt.MouseButton.LeftButton else None
        scene = self.scene()
        if port is not None and scene is not None:
            scene.plus_clicked.emit(port)  # type: ignore[attr-defined]
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        """Qt drags every selected movable item; their links follow."""
        super().mouseMoveEvent(event)
        scene = self.scene()
        if scene is not None:
            for item in scene.selectedItems():
                if isinstance(item, NodeItem):
                    item.moved()

    def hoverMoveEvent(self, event) -> None:  # noqa: N802
        on_plus = self.plus_at(event.pos()) is not None
        self.setCursor(Qt.CursorShape.PointingHandCursor if on_plus else Qt.CursorShape.ArrowCursor)
        super().hoverMoveEvent(event)

    def mouseDoubleClickEvent(self, event) -> None:  # noqa: N802
        scene = self.scene()
        if scene is not None:
            scene.node_activated.emit(self.name)  # type: ignore[attr-defined]
        event.accept()
