"""Adding nodes to the document where the user asked: at a point, next to the selected node,
at a free port's "+", or inside a link. Each add (and its connections) is one undo step; the new
node lands where it covers no other node, gets selected and is scrolled into view."""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QWidget
from shiboken6 import isValid

from engine.connection_types import MAIN
from engine.editing import DocumentEditor, Link
from engine.node_type import NodeType
from engine.registry import Registry
from engine.rules import connection_refusal
from engine.workflow import Workflow
from gui.canvas.adding import LABEL_ROOM, TypeMenu, free_spot, occupied, types_for_link, types_for_port
from gui.canvas.node_item import NodeItem, body_size
from gui.canvas.port_item import PortItem
from gui.canvas.scene import WorkflowScene
from gui.canvas.view import CanvasView

Edit = Callable[[DocumentEditor], Any]


class NodeAdder:
    """Makes the add edits; `push(text, edit)` runs one as an undo step (None when refused)."""

    def __init__(self, registry: Registry, scene: WorkflowScene, canvas: CanvasView,
                 document: Callable[[], Workflow], push: Callable[[str, Edit], Any],
                 message: Callable[[str], None], menu_parent: QWidget) -> None:
        self.registry = registry
        self.scene = scene
        self.canvas = canvas
        self.document = document
        self.push = push
        self.message = message
        self.menu_parent = menu_parent
        self.type_menu: TypeMenu | None = None  # the node types offered by the last "+" clicked
        scene.plus_clicked.connect(self.choose_for_port)
        scene.insert_clicked.connect(self.choose_for_link)

    def add(self, type_id: str, position: tuple[float, float], name: str | None = None) -> str | None:
        """A node with its top-left corner at `position`, or right of it where it covers no node."""
        node_type = self.registry.get(type_id)
        spot = free_spot(occupied(self.scene.node_items()), node_type, *position)

        def edit(editor: DocumentEditor) -> str:
            node = editor.new_node(type_id, spot, name)
            editor.add_node(node)
            return node.name
        return self._shown(self.push(f"Add {node_type.display_name}", edit))

    def add_next_to_selection(self, type_id: str) -> str | None:
        """From the palette: wired to the selected node when they fit (after it for a main node,
        under it for a model, memory or tool; a sub-node's agent takes a new sub-node), else
        in the middle of the view."""
        selected = self.scene.selected_names()
        if len(selected) == 1:
            added = self._add_connected(self.registry.get(type_id), selected[0])
            if added:
                return added
        centre = self.canvas.visible_scene_rect().center()
        return self.add(type_id, (centre.x() - 50, centre.y() - 50))

    def _add_connected(self, node_type: NodeType, anchor: str) -> str | None:
        anchor_item = self.canvas.node_item(anchor)
        if not isinstance(anchor_item, NodeItem):
            return None
        outputs = [s.type for s in node_type.outputs]
        sub_type = outputs[0] if outputs and all(t != MAIN for t in outputs) else None
        if sub_type is not None and anchor_item.kind == "sub":
            parents = [link.target.node_item for link in anchor_item.connections if link.source.node_item is anchor_item]
            if len(parents) == 1:
                anchor_item = parents[0]
        if sub_type is not None and anchor_item.port("in", sub_type) is not None:
            return self.add_at_port(node_type.type, anchor_item.name, "in", sub_type)
        if sub_type is None and any(s.type == MAIN for s in node_type.inputs):
            free = [p for p, _spot in anchor_item.plus_spots() if p.direction == "out" and p.conn_type == MAIN]
            port = free[0] if free else anchor_item.port("out", MAIN)
            if port is not None:
                return self.add_at_port(node_type.type, anchor_item.name, "out", MAIN, port.index)
        return None

    def add_at_port(self, type_id: str, anchor: str, direction: str, conn_type: str, index: int = 0) -> str | None:
        """A node connected to a port of `anchor`: after a main output, or under a sub-node input
        (Chat Model, Memory, Tool, ...). A connection the rules refuse is said; the node stays."""
        node_type = self.registry.get(type_id)
        anchor_item = self.canvas.node_item(anchor)
        port = anchor_item.port(direction, conn_type, index) if isinstance(anchor_item, NodeItem) else None
        if port is None:
            return None
        width, height = body_size(node_type)
        origin = anchor_item.pos()
        taken = occupied(self.scene.node_items())
        if direction == "out":
            spot = free_spot(taken, node_type, origin.x() + anchor_item.width + 120, origin.y() + port.y() - height / 2,
                             step_y=height + LABEL_ROOM + 40)
            ends = (anchor, "new", index, 0)
        else:
            spot = free_spot(taken, node_type, origin.x() + port.x() - width / 2, origin.y() + anchor_item.height + 140)
            ends = ("new", anchor, 0, index)
        refusal: list[str] = []

        def edit(editor: DocumentEditor) -> str:
            node = editor.new_node(type_id, spot)
            editor.add_node(node)
            source, target = (node.name if e == "new" else e for e in ends[:2])
            reason = connection_refusal(self.document(), self.registry, source, conn_type, target)
            if reason is None:
                editor.connect(source, conn_type, target, ends[2], ends[3])
            else:
                refusal.append(reason)
            return node.name
        added = self.push(f"Add {node_type.display_name}", edit)
        if added and refusal:
            self.message(f'Added "{added}", not connected: {refusal[0]}')
        return self._shown(added)

    def insert_into_link(self, type_id: str, link: Link) -> str | None:
        """A node inside a main connection (source → new → target)."""
        node_type = self.registry.get(type_id)
        source, target = self.canvas.node_item(link.source), self.canvas.node_item(link.target)
        if not isinstance(source, NodeItem) or not isinstance(target, NodeItem):
            return None
        width, height = body_size(node_type)
        out_port = source.port("out", MAIN, link.output)
        y = source.pos().y() + (out_port.y() if out_port is not None else source.height / 2) - height / 2
        x = (source.pos().x() + source.width + target.pos().x()) / 2 - width / 2
        spot = free_spot(occupied(self.scene.node_items()), node_type, x, y, step_y=height + LABEL_ROOM + 40)

        def edit(editor: DocumentEditor) -> str:
            node = editor.new_node(type_id, spot)
            editor.add_node(node)
            editor.disconnect(link)
            editor.connect(link.source, MAIN, node.name, link.output, 0)
            editor.connect(node.name, MAIN, link.target, 0, link.input)
            return node.name
        return self._shown(self.push(
            f'Insert {node_type.display_name} between "{link.source}" and "{link.target}"', edit))

    def _shown(self, name: str | None) -> str | None:
        """Select a node just added and scroll it into view."""
        if name:
            self.scene.select_names([name])
            item = self.canvas.node_item(name)
            if item is not None:
                self.canvas.ensureVisible(item.sceneBoundingRect(), 60, 60)
            self.canvas.setFocus()
        return name

    # ----- the "+" handles: pick a type from a menu -------------------------------------------
    def choose_for_port(self, port: PortItem) -> None:
        anchor, direction, conn_type, index = port.node_name, port.direction, port.conn_type, port.index
        title = f'Add after "{anchor}"' if direction == "out" else f'Add a {port.label.rstrip("*")} to "{anchor}"'
        self._open_menu(title, types_for_port(self.registry, direction, conn_type),
                        lambda type_id: self.add_at_port(type_id, anchor, direction, conn_type, index))

    def choose_for_link(self, link: Link) -> None:
        self._open_menu(f'Insert between "{link.source}" and "{link.target}"', types_for_link(self.registry),
                        lambda type_id: self.insert_into_link(type_id, link))

    def _open_menu(self, title: str, types: list[NodeType], then: Callable[[str], Any]) -> None:
        if self.type_menu is not None and isValid(self.type_menu):
            self.type_menu.close()
        self.type_menu = TypeMenu(title, types, self.menu_parent)
        self.type_menu.chosen.connect(then)
        self.type_menu.popup(QCursor.pos())
