"""The node palette: node types grouped as in n8n, searchable, dragged or double-clicked in.

Listing the types imports every node module, so the list is filled after the editor's first
frame (`populate`), or at once when it is searched first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QMimeData, QModelIndex, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QDrag, QFontMetrics, QPainter, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView, QLineEdit, QStyledItemDelegate, QTreeView, QVBoxLayout, QWidget,
)

from gui import theme
from engine.node_type import NodeType
from engine.registry import Registry
from gui.canvas.view import NODE_MIME

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStyleOptionViewItem

GROUPS = ("Triggers", "AI", "Models", "Memory", "Tools", "Core", "Notes")
TYPE_ROLE = Qt.ItemDataRole.UserRole + 1
DESCRIPTION_ROLE = Qt.ItemDataRole.UserRole + 2


def row_colours(current: theme.Theme) -> tuple[QColor, QColor, QColor]:
    """(name, description, selected row's fill) of node rows, from the theme: the style's own
    selection (white text on a white-ish fill under Fusion with our item style) is not used."""
    return current.node_text, current.muted_text, current.row_selected


class _TwoLineDelegate(QStyledItemDelegate):
    """Node rows show the name in bold and the one-line description under it."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:  # noqa: N802
        if index.data(TYPE_ROLE) is None:
            return QSize(option.rect.width(), 28)
        return QSize(option.rect.width(), 48)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        type_id = index.data(TYPE_ROLE)
        if type_id is None:
            option.font = theme.ui_font(8.5, bold=True)
            super().paint(painter, option, index)
            return
        from PySide6.QtWidgets import QStyle, QStyleOptionViewItem  # PySide builds a type's enums at its first import: after the first frame

        style = option.widget.style() if option.widget else None
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        name_colour, description_colour, selected_fill = row_colours(theme.current())
        painter.save()
        if style is not None:
            opt = QStyleOptionViewItem(option)
            self.initStyleOption(opt, index)
            opt.text = ""
            opt.icon = type(opt.icon)()
            opt.state &= ~QStyle.StateFlag.State_Selected  # the selection is ours: see `row_colours`
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, option.widget)
        rect = option.rect
        if selected:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(selected_fill)
            painter.drawRoundedRect(QRectF(rect).adjusted(1, 1, -1, -1), 6, 6)
            description_colour = name_colour
        icon = index.data(Qt.ItemDataRole.DecorationRole)
        if icon is not None:
            icon.paint(painter, QRect(rect.left() + 6, rect.top() + 10, 28, 28))
        name_font = theme.ui_font(9.5, bold=True)
        painter.setFont(name_font)
        painter.setPen(name_colour)
        text_rect = QRect(rect.left() + 42, rect.top() + 6, rect.width() - 48, 18)
        painter.drawText(text_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, index.data())
        small = theme.ui_font(8)
        painter.setFont(small)
        painter.setPen(description_colour)
        fm = QFontMetrics(small)
        desc_rect = QRect(rect.left() + 42, rect.top() + 24, rect.width() - 48, 18)
        painter.drawText(desc_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         fm.elidedText(index.data(DESCRIPTION_ROLE) or "", Qt.TextElideMode.ElideRight, desc_rect.width()))
        painter.restore()


class _PaletteTree(QTreeView):
    """Starts a drag carrying the node type id; Enter adds the current node type."""

    enter_pressed = Signal(QModelIndex)

    def keyPressEvent(self, event) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.enter_pressed.emit(self.currentIndex())
            return
        super().keyPressEvent(event)

    def startDrag(self, actions: Qt.DropAction) -> None:  # noqa: N802
        index = self.currentIndex()
        type_id = index.data(TYPE_ROLE)
        if not type_id:
            return
        mime = QMimeData()
        mime.setData(NODE_MIME, type_id.encode("utf-8"))
        drag = QDrag(self)
        drag.setMimeData(mime)
        icon = index.data(Qt.ItemDataRole.DecorationRole)
        if icon is not None:
            drag.setPixmap(icon.pixmap(32, 32))
        drag.exec(Qt.DropAction.CopyAction)


class Palette(QWidget):
    """Search box over a grouped list of node types; `add_requested(type_id)` on double-click."""

    add_requested = Signal(str)

    def __init__(self, registry: Registry) -> None:
        super().__init__()
        self.setObjectName("palette")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search nodes…")
        self.search.setClearButtonEnabled(True)
        self.tree = _PaletteTree()
        self.tree.setHeaderHidden(True)
        self.tree.setRootIsDecorated(False)
        self.tree.setIndentation(0)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.setItemDelegate(_TwoLineDelegate(self.tree))
        self.tree.setUniformRowHeights(False)
        self.tree.setMouseTracking(True)
        self.model = QStandardItemModel(self)
        self.tree.setModel(self.model)
        self.registry = registry
        self.populated = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(6)
        layout.addWidget(self.search)
        layout.addWidget(self.tree)
        self.search.textChanged.connect(self.filter)
        self.search.returnPressed.connect(self._add_first_visible)
        self.tree.doubleClicked.connect(self._on_double_click)
        self.tree.enter_pressed.connect(self._on_double_click)

    def populate(self) -> None:
        """List the node types (once)."""
        if not self.populated:
            self.populated = True
            self._fill(self.registry.types())

    def _fill(self, types: list[NodeType]) -> None:
        by_group: dict[str, list[NodeType]] = {}
        for node_type in types:
            by_group.setdefault(node_type.group, []).append(node_type)
        order = list(GROUPS) + sorted(g for g in by_group if g not in GROUPS)
        for group in order:
            members = by_group.get(group)
            if not members:
                continue
            header = QStandardItem(group.upper())
            header.setFlags(Qt.ItemFlag.ItemIsEnabled)
            header.setForeground(theme.current().muted_text)
            for node_type in sorted(members, key=lambda t: t.display_name.lower()):
                row = QStandardItem(theme.icon(node_type.icon, 28), node_type.display_name)
                row.setData(node_type.type, TYPE_ROLE)
                row.setData(node_type.description, DESCRIPTION_ROLE)
                row.setToolTip(f"<b>{node_type.display_name}</b><br>{node_type.description}<br><i>Drag onto the canvas or double-click</i>")
                row.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsDragEnabled)
                header.appendRow(row)
            self.model.appendRow(header)
        self.tree.expandAll()

    def filter(self, text: str) -> None:
        """Show the node types whose name, description or group contain every typed word."""
        self.populate()
        words = text.lower().split()
        root = self.model.invisibleRootItem()
        for g in range(root.rowCount()):
            header = root.child(g)
            visible = 0
            for r in range(header.rowCount()):
                row = header.child(r)
                haystack = f"{row.text()} {row.data(DESCRIPTION_ROLE)} {header.text()}".lower()
                hide = not all(w in haystack for w in words)
                self.tree.setRowHidden(r, header.index(), hide)
                visible += not hide
            self.tree.setRowHidden(g, root.index(), visible == 0)
        self.tree.expandAll()

    def visible_type_ids(self) -> list[str]:
        self.populate()
        out = []
        root = self.model.invisibleRootItem()
        for g in range(root.rowCount()):
            header = root.child(g)
            if self.tree.isRowHidden(g, root.index()):
                continue
            for r in range(header.rowCount()):
                if not self.tree.isRowHidden(r, header.index()):
                    out.append(header.child(r).data(TYPE_ROLE))
        return out

    def start_search(self, text: str) -> None:
        self.search.setFocus()
        self.search.setText(text)

    def _add_first_visible(self) -> None:
        """Enter in the search box adds the first match, then the full list comes back."""
        visible = self.visible_type_ids()
        if visible:
            self.add_requested.emit(visible[0])
            self.search.clear()

    def _on_double_click(self, index: QModelIndex) -> None:
        type_id = index.data(TYPE_ROLE)
        if type_id:
            self.add_requested.emit(type_id)
