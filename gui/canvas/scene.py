"""The scene mirrors the workflow document: `apply(change)` updates the items an edit touched,
`sync` adds, updates and removes items to match the whole document.

User gestures (moving nodes, dragging a connection, resizing a note) are reported as signals;
the main window turns them into undoable commands, which edit the document and call `apply`.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtWidgets import QGraphicsScene, QGraphicsSceneMouseEvent
from shiboken6 import isValid

from engine.editing import Link, links_of
from engine.node_settings import ports_of
from engine.registry import Registry
from engine.rules import connection_refusal, port_name
from engine.workflow import Node, Workflow
from gui.bridge import warnings_by_node
from gui.commands import Change

from .connection_item import ConnectionItem, DraftLink, InsertHandle
from .far_drawing import FarDrawing
from .node_item import NodeItem
from .port_item import PortItem
from .sticky_item import StickyItem

GRID = 20  # scene units between the canvas dots; dragged nodes snap to them
SCENE_RECT = QRectF(-100_000, -100_000, 200_000, 200_000)


class WorkflowScene(QGraphicsScene):
    """Items for every node and connection of `workflow`; never holds state the document lacks."""

    nodes_moved = Signal(dict, dict)  # before, after: name -> (x, y)
    connect_requested = Signal(str, str, str, int, int)  # source, type, target, output, input
    relink_requested = Signal(object, str, str, str, int, int)  # old Link, then as connect_requested
    disconnect_requested = Signal(object)  # Link
    note_resized = Signal(str, int, int)
    links_selection_changed = Signal()
    node_activated = Signal(str)
    plus_clicked = Signal(object)  # PortItem: add a node connected to this free port
    insert_clicked = Signal(object)  # Link: insert a node into this connection
    message = Signal(str)

    def __init__(self, workflow: Workflow, registry: Registry) -> None:
        super().__init__()
        self.workflow = workflow
        self.registry = registry
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self.setSceneRect(SCENE_RECT)
        self._items: dict[str, NodeItem | StickyItem] = {}  # by Node.id
        self._by_name: dict[str, NodeItem | StickyItem] = {}
        self._links: dict[Link, ConnectionItem] = {}
        self._draft: DraftLink | None = None
        self._candidates: set[PortItem] = set()
        self._hover_port: PortItem | None = None
        self._detached: ConnectionItem | None = None
        self._rules_signature: tuple[frozenset, frozenset] | None = None
        self._content: QRectF | None = None
        self._far = False
        self.far_drawing = FarDrawing()
        self._read_only = False
        self._raised: list[NodeItem] = []  # selected nodes, drawn above the others
        self.selectionChanged.connect(self._selection_changed)

    # ----- mirroring the document -----------------------------------------------------------
    def restyle(self) -> None:
        """Repaint every item in the current theme's colours."""
        for item in self._by_name.values():
            for port in getattr(item, "ports", []):
                port.restyle()
            item.update()
        for link in self._links.values():
            link.restyle()

    def set_workflow(self, workflow: Workflow) -> None:
        for link in list(self._links.values()):
            link.detach()
        self._items.clear()
        self._by_name.clear()
        self._links.clear()
        self._rules_signature = None
        self.clear()
        self.workflow = workflow
        self.sync()

    def apply(self, change: Change) -> None:
        """Update the items an edit touched: positions after a move, looks after a node's own
        values changed; a structural edit (nodes or connections added, removed, renamed) syncs."""
        if change.structure:
            self.sync()
            return
        touched = change.moved | change.nodes
        if not touched:
            return
        self._content = None
        pinned = self.workflow.pinData or {}
        ports_changed = False
        for name in touched:
            item = self._by_name.get(name)
            if item is None:
                continue
            item.refresh(item.node)
            if isinstance(item, NodeItem):
                item.set_pinned(pinned.get(name) is not None)
                if name in change.nodes and item.node_type.supported:
                    linked = {(t, target.index) for _s, t, _i, target in self.workflow.links() if target.node == name}
                    ports_changed |= self._update_ports(item, item.node, linked)
        if ports_changed:  # a parameter showed or hid a port: its links are drawn again
            self.sync()
        elif change.nodes:
            self._check_rules(frozenset(links_of(self.workflow)))

    def _new_item(self, node: Node) -> NodeItem | StickyItem:
        node_type = self.registry.get(node.type)
        if node_type.supported and not node_type.runnable:
            item: NodeItem | StickyItem = StickyItem(node, node_type)
        elif not node_type.supported:
            item = NodeItem(node, node_type, self._link_types(node.name))
        else:
            item = NodeItem(node, node_type)
        if self._far and isinstance(item, NodeItem):
            item.setOpacity(0.0)
        if self._read_only:
            item.set_read_only(True)
        self.addItem(item)
        return item

    def sync(self) -> None:
        """Make the items match the document: nodes by their id, connections by their key."""
        self._content = None
        wf = self.workflow
        seen: dict[str, NodeItem | StickyItem] = {}
        linked_into: dict[str, set[tuple[str, int]]] = {}  # (connection type, input index) linked into each node
        for _source, conn_type, _index, target in wf.links():
            linked_into.setdefault(target.node, set()).add((conn_type, target.index))
        for node in wf.nodes:
            key = node.id if node.id not in seen else f"{node.id}\n{node.name}"  # a file may repeat an id
            item = self._items.get(key)
            if item is not None and item.node is not node and item.node.type != node.type:
                item = None  # another node under a reused id: drawn anew
            if item is None:
                item = self._new_item(node)
            else:
                item.refresh(node)
            if isinstance(item, NodeItem) and item.node_type.supported:
                self._update_ports(item, node, linked_into.get(node.name, set()))
            seen[key] = item
        for key, item in self._items.items():
            if seen.get(key) is not item:
                for link in list(item.connections):
                    self._drop_link(link)
                self.removeItem(item)
        self._items = seen
        self._by_name = {item.name: item for item in seen.values()}
        self.far_drawing.set_items([i for i in seen.values() if isinstance(i, NodeItem)])
        pinned = wf.pinData or {}
        for item in self._by_name.values():
            if isinstance(item, NodeItem):
                item.set_pinned(pinned.get(item.name) is not None)

        wanted = set()
        for link in links_of(wf):
            wanted.add(link)
            existing = self._links.get(link)
            if existing is not None:
                if existing.source.node_item is self._by_name.get(link.source) and \
                        existing.target.node_item is self._by_name.get(link.target):
                    continue
                self._drop_link(existing)
            self._add_link(link)
        for link in [k for k in self._links if k not in wanted]:
            self._drop_link(self._links[link])
        self._check_rules(frozenset(wanted))

    def _check_rules(self, links: frozenset[Link]) -> None:
        """Rule problems depend on links, names, deactivated nodes and model nodes' credentials:
        re-checked when they change (not after moves)."""
        wf = self.workflow
        signature = (links, frozenset((n.name, n.is_disabled) for n in wf.nodes),
                     json.dumps([(n.name, n.credentials, n.parameters) for n in wf.nodes
                                 if self.registry.get(n.type).credential_types], sort_keys=True, default=str))
        if signature != self._rules_signature:
            self._rules_signature = signature
            self.refresh_problems()

    def _update_ports(self, item: NodeItem, node: Node, linked: set[tuple[str, int]]) -> bool:
        """Ports a parameter or setting shows or hides (the Agent's Output Parser, a Merge's
        inputs, a Switch's outputs and their names, the error output of On Error); an input with
        a link (`linked`: connection type and input index) stays. True when the ports changed
        (their links were dropped to be redrawn)."""
        shown, outputs = ports_of(item.node_type, node)
        declared = item.node_type.inputs
        if all(spec in declared for spec in shown):  # keep the declared order
            index: dict[str, int] = {}
            kept = []
            for spec in declared:
                index[spec.type] = index.get(spec.type, -1) + 1
                if spec in shown or (spec.type, index[spec.type]) in linked:
                    kept.append(spec)
            shown = tuple(kept)
        if shown == item.inputs and outputs == item.outputs:
            return False
        for link in list(item.connections):
            self._drop_link(link)
        item.set_ports(shown, outputs)
        return True

    def _link_types(self, name: str) -> tuple[set[str], set[str]]:
        """The connection types going into and out of a node, from the document's links."""
        ins: set[str] = set()
        outs: set[str] = set()
        for src, ctype, _i, target in self.workflow.links():
            if src == name:
                outs.add(ctype)
            if target.node == name:
                ins.add(ctype)
        return ins, outs

    def _add_link(self, link: Link) -> None:
        source = self._by_name.get(link.source)
        target = self._by_name.get(link.target)
        if not isinstance(source, NodeItem) or not isinstance(target, NodeItem):
            return
        out_port = source.port("out", link.type, link.output)
        in_port = target.port("in", link.type, link.input)
        if out_port is None or in_port is None:
            return  # an unsupported node declares no ports; the link stays in the document
        item = ConnectionItem(link, out_port, in_port, self._far)
        item.read_only = self._read_only
        self.addItem(item)
        self._links[link] = item

    def _drop_link(self, item: ConnectionItem) -> None:
        item.detach()
        self._links.pop(item.key, None)
        if item.scene() is self:
            self.removeItem(item)

    def refresh_problems(self) -> None:
        """Mark nodes whose sub-node inputs break a rule (a missing Chat Model, ...) or whose credential is missing."""
        items = [item for item in self._by_name.values() if isinstance(item, NodeItem)]
        found = warnings_by_node(self.workflow, self.registry, [item.name for item in items])
        for item in items:
            problems = found[item.name]
            item.set_problem(problems[0] if problems else None)

    # ----- lookups --------------------------------------------------------------------------
    def node_item(self, name: str) -> NodeItem | StickyItem | None:
        return self._by_name.get(name)

    def node_items(self) -> list[NodeItem | StickyItem]:
        return list(self._by_name.values())

    def connection_item(self, link: Link) -> ConnectionItem | None:
        return self._links.get(link)

    def connection_items(self) -> list[ConnectionItem]:
        return list(self._links.values())

    def selected_names(self) -> list[str]:
        """Selected nodes in document order (nothing while the scene is being torn down)."""
        return [n.name for n in self.workflow.nodes
                if (i := self._by_name.get(n.name)) is not None and isValid(i) and i.isSelected()]

    def selected_links(self) -> list[Link]:
        return [key for key, item in self._links.items() if isValid(item) and item.selected]

    def select_link(self, link: Link, add: bool = False) -> None:
        """Select a connection (Ctrl adds to the selection); nodes are deselected unless adding."""
        if not add:
            self.clear_link_selection()
            self.clearSelection()
        item = self._links.get(link)
        if item is not None:
            item.set_selected(not item.selected if add else True)
        self.links_selection_changed.emit()

    def clear_link_selection(self) -> None:
        changed = False
        for item in self._links.values():
            if item.selected:
                item.set_selected(False)
                changed = True
        if changed:
            self.links_selection_changed.emit()

    def set_far(self, far: bool) -> None:
        """Zoomed far out: links are drawn thin and solid (dashes cost much and cannot be seen),
        and the nodes by `far_drawing` in batches instead of item by item."""
        if far == self._far:
            return
        self._far = far
        self.far_drawing.invalidate()
        for item in self._links.values():
            item.set_far(far)
        for item in self._by_name.values():
            if isinstance(item, NodeItem):
                item.setOpacity(0.0 if far else 1.0)  # still there for the mouse, not painted

    @property
    def far(self) -> bool:
        return self._far

    # ----- read-only (a stored execution is shown) ------------------------------------------
    def set_read_only(self, on: bool) -> None:
        """Nodes cannot be moved, no link drawn or picked up, no "+" handles: the scene only
        shows the document. Edits through menus and keys are the window's to refuse."""
        self._read_only = on
        for item in self._by_name.values():
            item.set_read_only(on)
        for link in self._links.values():
            link.read_only = on
            link.show_insert_handle(False)

    @property
    def read_only(self) -> bool:
        return self._read_only

    def _selection_changed(self) -> None:
        """Selected nodes are drawn above the others (and far out, in the selection colour)."""
        for item in self._raised:
            if isValid(item):
                item.setZValue(item.base_z)
        self._raised = [i for i in self.selectedItems() if isinstance(i, NodeItem)]
        for item in self._raised:
            item.setZValue(item.base_z + 2)
        self.far_changed()

    def far_changed(self, item: NodeItem | None = None) -> None:
        """A node moved or changed its look (None: any may have): the far-out drawing follows."""
        self.far_drawing.invalidate(item)

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        add = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        under = [i for i in self.items(event.scenePos()) if not isinstance(i, DraftLink)]
        top = under[0] if under else None
        if isinstance(top, InsertHandle) and event.button() == Qt.MouseButton.LeftButton:
            self.insert_clicked.emit(top.link.key)
            event.accept()
            return
        if isinstance(top, ConnectionItem) and event.button() == Qt.MouseButton.LeftButton:
            self.select_link(top.key, add)
            event.accept()
            return
        if not add:
            self.clear_link_selection()
        super().mousePressEvent(event)

    def select_names(self, names: list[str]) -> None:
        self.clearSelection()
        for name in names:
            item = self._by_name.get(name)
            if item is not None:
                item.setSelected(True)

    def items_rect(self) -> QRectF:
        """The area the nodes cover, as of the last sync (cached: asked on every scroll)."""
        if self._content is None:
            rect = QRectF()
            for item in self._by_name.values():
                if isValid(item):
                    rect = rect.united(item.sceneBoundingRect())
            self._content = rect
        return QRectF(self._content)

    # ----- moving nodes ---------------------------------------------------------------------
    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        """A drag of nodes ends: their new places (snapped to the grid, unless Alt is held)."""
        super().mouseReleaseEvent(event)
        if self._read_only:
            return
        snap = 1 if event.modifiers() & Qt.KeyboardModifier.AltModifier else GRID
        moved = []
        for item in self.selectedItems():
            if isinstance(item, (NodeItem, StickyItem)) and self.workflow.has_node(item.name):
                old = self.workflow.node(item.name).position
                if item.pos() != QPointF(float(old[0]), float(old[1])):
                    moved.append((item, old))
        if not moved:
            return
        # one correction for all, taken from the first: the selection keeps its shape
        first = moved[0][0].pos()
        dx = round(first.x() / snap) * snap - first.x()
        dy = round(first.y() / snap) * snap - first.y()
        before: dict[str, tuple[float, float]] = {}
        after: dict[str, tuple[float, float]] = {}
        for item, old in moved:
            new = (round(item.pos().x() + dx), round(item.pos().y() + dy))
            if (float(old[0]), float(old[1])) != (float(new[0]), float(new[1])):
                before[item.name] = old
                after[item.name] = new
            else:
                item.setPos(float(old[0]), float(old[1]))  # a tiny drag that snapped back
                if isinstance(item, NodeItem):
                    item.moved()
        if after:
            self.nodes_moved.emit(before, after)

    # ----- dragging a connection ------------------------------------------------------------
    def _ends(self, start: PortItem, other: PortItem) -> tuple[str, str]:
        """(source, target) node names of a link between the start port and another port."""
        if start.direction == "out":
            return start.node_name, other.node_name
        return other.node_name, start.node_name

    def begin_link(self, port: PortItem, pos: QPointF) -> None:
        """Start dragging a new link; from a connected input, pick up its last link instead
        (drop it on another input to move it, on empty canvas to remove it)."""
        self._detached = None
        if self._read_only:
            return
        if port.direction == "in":
            attached = [item for item in self._links.values() if item.target is port]
            if attached:
                self._detached = attached[-1]
                self._detached.hide()
                port = self._detached.source
        self._draft = DraftLink(port)
        self.addItem(self._draft)
        self._candidates = set()
        wanted = "in" if port.direction == "out" else "out"
        for item in self._by_name.values():
            if item is port.node_item or not isinstance(item, NodeItem):
                continue
            for other in item.ports:
                if other.direction != wanted or other.conn_type != port.conn_type:
                    continue
                source, target = self._ends(port, other)
                index = (other if other.direction == "in" else port).index
                if connection_refusal(self.workflow, self.registry, source, port.conn_type, target, index) is None:
                    self._candidates.add(other)
                    other.set_highlight("compatible")
        kind = port_name(port.conn_type)
        if self._candidates:
            self.message.emit(f"Drop on a highlighted port to connect ({kind})")
        else:
            self.message.emit(f"No port can take this {kind} connection now")

    def _port_at(self, pos: QPointF, start: PortItem) -> PortItem | None:
        """The port under the pointer, or the matching port of the node under it."""
        wanted = "in" if start.direction == "out" else "out"
        best: PortItem | None = None
        for item in self.items(QRectF(pos.x() - 14, pos.y() - 14, 28, 28)):
            if isinstance(item, PortItem) and item is not start and item.direction == wanted:
                if best is None or item.conn_type == start.conn_type:
                    best = item
        if best is not None:
            return best
        for item in self.items(pos):
            if isinstance(item, NodeItem):
                return item.port(wanted, start.conn_type) or next(
                    (p for p in item.ports if p.direction == wanted), None)
        return None

    def drag_link(self, pos: QPointF) -> None:
        if self._draft is None:
            return
        self._draft.move_to(pos)
        port = self._port_at(pos, self._draft.port)
        if port is not self._hover_port:
            if self._hover_port is not None:
                self._hover_port.set_highlight("compatible" if self._hover_port in self._candidates else None)
            self._hover_port = port if port in self._candidates else None
            if self._hover_port is not None:
                self._hover_port.set_highlight("hover")

    def end_link(self, pos: QPointF) -> None:
        draft = self._draft
        if draft is None:
            return
        start = draft.port
        target_port = self._port_at(pos, start)
        self.removeItem(draft)
        self._draft = None
        for port in self._candidates:
            port.set_highlight(None)
        self._candidates = set()
        self._hover_port = None
        detached, self._detached = self._detached, None
        if detached is not None:
            self._finish_detached(detached, start, target_port)
            return
        if target_port is None:
            self.message.emit(self._body_refusal(pos, start))
            return
        source, target = self._ends(start, target_port)
        if target_port.conn_type != start.conn_type:
            ours, theirs = port_name(start.conn_type), port_name(target_port.conn_type)
            self.message.emit(
                f'Cannot connect: a {ours} connection does not fit the {theirs} port of "{target_port.node_name}"')
            return
        out_port = start if start.direction == "out" else target_port
        in_port = target_port if start.direction == "out" else start
        reason = connection_refusal(self.workflow, self.registry, source, start.conn_type, target, in_port.index)
        if reason is not None:
            self.message.emit(f"Cannot connect: {reason}")
            return
        self.connect_requested.emit(source, start.conn_type, target, out_port.index, in_port.index)

    def _body_refusal(self, pos: QPointF, start: PortItem) -> str:
        """Dropped on a node without a fitting port: the rule that says why, else nothing."""
        node = next((i for i in self.items(pos) if isinstance(i, NodeItem)), None)
        if node is None:
            return ""
        if start.direction == "out":
            source, target = start.node_name, node.name
        else:
            source, target = node.name, start.node_name
        reason = connection_refusal(self.workflow, self.registry, source, start.conn_type, target)
        return f"Cannot connect: {reason}" if reason else ""

    def _finish_detached(self, link: ConnectionItem, start: PortItem, target_port: PortItem | None) -> None:
        """A picked-up link dropped: removed on empty canvas, moved onto another input."""
        if target_port is None:
            self.disconnect_requested.emit(link.key)
        elif target_port is link.target:
            self.message.emit("")
        elif target_port.direction != "in" or target_port.conn_type != start.conn_type:
            self.message.emit(f"Cannot connect: a {port_name(start.conn_type)} connection does not fit the "
                              f'{port_name(target_port.conn_type)} port of "{target_port.node_name}"')
        else:
            self.relink_requested.emit(link.key, start.node_name, start.conn_type, target_port.node_name,
                                       start.index, target_port.index)
        if isValid(link) and link.scene() is self:
            link.show()  # still in the document: the drop changed nothing
