"""Adding nodes on the canvas: which node types fit a port or a link, a menu to pick one, and a
free place for the new node (it never lands on another node).
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Signal
from PySide6.QtWidgets import QMenu, QWidget

from gui import theme
from engine.connection_types import MAIN
from engine.node_type import NodeType
from engine.registry import Registry

from .node_item import NodeItem, body_size

GAP = 20.0  # free room kept round a placed node
LABEL_ROOM = 44.0  # the name lines under a node


def types_for_port(registry: Registry, direction: str, conn_type: str) -> list[NodeType]:
    """Types that can be connected to a free port: after a main output, nodes with a main
    input; under a sub-node input (Chat Model, Memory, Tool, ...), the nodes supplying it."""
    out = []
    for node_type in registry.types():
        if not node_type.supported or not node_type.runnable:
            continue
        if direction == "out" and conn_type == MAIN:
            fits = any(s.type == MAIN for s in node_type.inputs)
        else:
            fits = bool(node_type.outputs) and all(s.type == conn_type for s in node_type.outputs)
        if fits:
            out.append(node_type)
    return out


def types_for_link(registry: Registry) -> list[NodeType]:
    """Types that can sit inside a main link: a main input and a main output."""
    return [t for t in registry.types() if t.supported and any(s.type == MAIN for s in t.inputs)
            and any(s.type == MAIN for s in t.outputs)]


class TypeMenu(QMenu):
    """The node types to choose from, grouped as in the palette; `chosen(type_id)`."""

    chosen = Signal(str)

    def __init__(self, title: str, types: list[NodeType], parent: QWidget | None = None) -> None:
        super().__init__(title, parent)
        groups: dict[str, list[NodeType]] = {}
        for node_type in types:
            groups.setdefault(node_type.group, []).append(node_type)
        for group, members in groups.items():
            self.addSection(group)
            for node_type in sorted(members, key=lambda t: t.display_name.lower()):
                action = self.addAction(theme.icon(node_type.icon, 20), node_type.display_name)
                action.setToolTip(node_type.description)
                action.setData(node_type.type)
                action.triggered.connect(lambda _c=False, type_id=node_type.type: self.chosen.emit(type_id))

    def action_for(self, display_name: str):  # type: ignore[no-untyped-def]
        """The entry of a node type, by its name (as a user reads the menu)."""
        return next((a for a in self.actions() if a.text() == display_name), None)


def occupied(items: list) -> list[QRectF]:  # type: ignore[type-arg]
    """The areas nodes take on the canvas (body and name lines; notes left out: nodes go on them)."""
    rects = []
    for item in items:
        if isinstance(item, NodeItem):
            rects.append(QRectF(item.pos().x(), item.pos().y(), item.width, item.height + LABEL_ROOM))
    return rects


def free_spot(taken: list[QRectF], node_type: NodeType, x: float, y: float, step_x: float = 0.0,
              step_y: float = 0.0, grid: float = 20.0) -> tuple[float, float]:
    """The first place from (x, y), moving by (step_x, step_y) (right when both are 0), where a
    node of this type and its name cover no other node."""
    width, height = body_size(node_type)
    if not step_x and not step_y:
        step_x = width + 2 * GAP
    x, y = round(x / grid) * grid, round(y / grid) * grid
    for _ in range(500):
        rect = QRectF(x - GAP, y - GAP, width + 2 * GAP, height + LABEL_ROOM + 2 * GAP)
        if not any(rect.intersects(other) for other in taken):
            break
        x, y = x + step_x, y + step_y
    return x, y
