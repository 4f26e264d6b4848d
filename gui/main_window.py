"""The editor's main window: canvas, palette, inspector, output dock, menus, files and undo.

`document` (a `Workflow`) is the single source of truth; every edit is a command on
`undo_stack` that edits it through the headless `DocumentEditor`, then the canvas resyncs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QDockWidget, QLabel, QMainWindow, QMenu, QToolBar,
)
# The dialogs (QMessageBox, QFileDialog, QInputDialog) are imported where they open: PySide builds
# a type's enums at its first import, and none of them is needed before the first frame.
from shiboken6 import isValid

from gui import theme
from engine.editing import DocumentEditor, EditError, Link, new_workflow
from engine.errors import MiniN8nError, WorkflowFileError
from engine.registry import builtin_registry, Registry
from engine.workflow import load_workflow, save_workflow, Workflow
from gui.canvas.connection_item import ConnectionItem
from gui.canvas.node_item import NodeItem
from gui.canvas.sticky_item import StickyItem
from gui.canvas.scene import WorkflowScene
from gui.canvas.view import CanvasView
from gui.first_frame import after_first_frame
from gui.commands import Change, CredentialCommand, DisableCommand, WorkflowNameCommand, MoveCommand, ParametersCommand, PinCommand, RenameCommand, SettingCommand, StructureCommand
from gui.inspector.panel import Inspector
from gui.node_adding import NodeAdder
from gui.palette import Palette
from gui.recent_files import RecentFiles
from gui.recovery import RecoveredWork, RecoveryFile, left_behind
from gui.start_from_trigger import StartFromTrigger

from gui.bridge import RunBridge
from gui.run_controller import RunController

if TYPE_CHECKING:
    from gui.dialogs.credentials import CredentialsDialog

FILE_FILTER = "n8n workflows (*.json);;All files (*)"
AUTOSAVE_DELAY_MS = 1500


class MainWindow(QMainWindow):
    """One open workflow, with every editor panel around its canvas."""

    node_selected = Signal(str)
    document_changed = Signal()  # another document, or nodes, connections or values edited (not moves)
    document_replaced = Signal()  # another workflow was loaded (not an edit of this one)
    read_only_changed = Signal(bool)  # a stored execution is shown (True) or the document again

    def __init__(self, bridge_registry: Registry | None = None, workflow: Workflow | None = None,
                 path: str | Path | None = None, bridge: RunBridge | None = None) -> None:
        super().__init__()
        self.registry = bridge_registry or builtin_registry()
        self.document = Workflow()
        self.editor = DocumentEditor(self.document, self.registry)
        self.path: Path | None = None
        self.recent = RecentFiles()
        self.recovery = RecoveryFile()
        self.undo_stack = QUndoStack(self)
        self._selected = ""
        self._paste_count = 0
        self._editing: tuple[Workflow, DocumentEditor, Path | None] | None = None  # set while read-only

        self.scene = WorkflowScene(self.document, self.registry)
        self.canvas = CanvasView(self.scene)
        self.adding = NodeAdder(self.registry, self.scene, self.canvas, lambda: self.document, self.push_structure,
                                self.show_message, self)
        self.setCentralWidget(self.canvas)
        self.palette_panel = Palette(self.registry)
        after_first_frame(self, self.palette_panel.populate)
        self.inspector = Inspector(self)
        self._build_docks()
        self._build_actions()
        self._build_menus_and_toolbars()
        self.statusBar().showMessage(
            "Drag the background to pan, Shift+drag to select, wheel to zoom; drag from a port to connect", 10000)

        self.scene.nodes_moved.connect(self._on_nodes_moved)
        self.scene.connect_requested.connect(self._on_connect_requested)
        self.scene.relink_requested.connect(self.relink)
        self.scene.disconnect_requested.connect(self.disconnect_link)
        self.scene.note_resized.connect(self._on_note_resized)
        self.scene.message.connect(self.show_message)
        self.scene.selectionChanged.connect(self._on_selection_changed)
        self.scene.node_activated.connect(self.inspector.focus_first_field)
        self.canvas.type_dropped.connect(self._on_type_dropped)
        self.canvas.search_typed.connect(self._on_search_typed)
        self.canvas.nudged.connect(self._on_nudged)
        self.canvas.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.canvas.customContextMenuRequested.connect(self._canvas_menu)
        self.palette_panel.add_requested.connect(self.add_node_at_centre)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self._autosave = QTimer(self)
        self._autosave.setSingleShot(True)
        self._autosave.setInterval(AUTOSAVE_DELAY_MS)
        self._autosave.timeout.connect(self.autosave_now)
        theme.manager().changed.connect(self._apply_style)
        self._apply_style()
        self.resize(1400, 860)
        self.load_document(workflow if workflow is not None else new_workflow(), path)
        self.run_controller = RunController(self, bridge if bridge is not None else RunBridge.open(self.registry))
        self.run_controller.run_shown.connect(lambda _outcome: self.inspector.refresh())  # previews read the run
        self.start_from_trigger = StartFromTrigger(self, self.run_controller.bridge, self.run_controller.debug)

    # ----- layout ---------------------------------------------------------------------------
    def _build_docks(self) -> None:
        self.palette_dock = QDockWidget("Nodes", self)
        self.palette_dock.setObjectName("paletteDock")
        self.palette_dock.setWidget(self.palette_panel)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.palette_dock)
        self.inspector_dock = QDockWidget("Parameters", self)
        self.inspector_dock.setObjectName("inspectorDock")
        self.inspector_dock.setWidget(self.inspector)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.inspector_dock)
        self.output_dock = QDockWidget("Output", self)
        self.output_dock.setObjectName("outputDock")
        placeholder = QLabel("Run the workflow to see each node's output here.")
        placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        placeholder.setObjectName("placeholder")
        self.output_dock.setWidget(placeholder)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.output_dock)
        self.resizeDocks([self.palette_dock, self.inspector_dock], [270, 340], Qt.Orientation.Horizontal)
        self.resizeDocks([self.output_dock], [170], Qt.Orientation.Vertical)

    def _action(self, text: str, slot, shortcut: QKeySequence | str | None = None, icon: str | None = None,
                tip: str | None = None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        return action

    def _build_actions(self) -> None:
        K = QKeySequence.StandardKey
        self.act_new = self._action("&New", self.new_document, K.New, tip="Start a new workflow")
        self.act_open = self._action("&Open…", self.open_dialog, K.Open, tip="Open an n8n workflow file")
        self.act_save = self._action("&Save", self.save, K.Save, tip="Save the workflow")
        self.act_save_as = self._action("Save &As…", self.save_as, K.SaveAs)
        self.act_rename_workflow = self._action("Rename &Workflow…", self.rename_workflow_dialog,
                                                tip="Change the workflow's name (saved in the file)")
        self.act_quit = self._action("&Quit", self.close, K.Quit)
        self.act_undo = self.undo_stack.createUndoAction(self, "&Undo")
        self.act_undo.setShortcut(QKeySequence(K.Undo))
        self.act_redo = self.undo_stack.createRedoAction(self, "&Redo")
        self.act_redo.setShortcuts([QKeySequence(K.Redo), QKeySequence("Ctrl+Shift+Z")])
        # the toolbar keeps short labels; the menu entries name the edit ("Undo Move 2 nodes")
        self.tool_undo = self._action("Undo", self.undo_stack.undo)
        self.tool_redo = self._action("Redo", self.undo_stack.redo)
        self.tool_undo.setEnabled(False)
        self.tool_redo.setEnabled(False)
        self.undo_stack.canUndoChanged.connect(self.tool_undo.setEnabled)
        self.undo_stack.canRedoChanged.connect(self.tool_redo.setEnabled)
        self.undo_stack.undoTextChanged.connect(lambda text: self.tool_undo.setToolTip(f"Undo {text}".strip()))
        self.undo_stack.redoTextChanged.connect(lambda text: self.tool_redo.setToolTip(f"Redo {text}".strip()))
        self.act_cut = self._action("Cu&t", self.cut, K.Cut)
        self.act_copy = self._action("&Copy", self.copy, K.Copy)
        self.act_paste = self._action("&Paste", self.paste, K.Paste, tip="Paste nodes or an n8n workflow JSON")
        self.act_duplicate = self._action("D&uplicate", self.duplicate, "Ctrl+D")
        self.act_delete = self._action("&Delete", self.delete_selection, K.Delete)
        self.act_delete.setShortcuts([QKeySequence(K.Delete), QKeySequence(Qt.Key.Key_Backspace)])
        self.act_select_all = self._action("Select &All", self.select_all, K.SelectAll)
        self.act_rename = self._action("&Rename", self.start_rename, "F2")
        self.act_disable = self._action("Deactivate / Activate", self.toggle_disabled, "Ctrl+Shift+D",
                                        tip="Deactivated nodes are skipped when the workflow runs")
        self.act_fit = self._action("&Fit to View", self.canvas.fit_to_view, "Shift+1")
        self.act_zoom_in = self._action("Zoom &In", self.canvas.zoom_in, K.ZoomIn)
        self.act_zoom_out = self._action("Zoom &Out", self.canvas.zoom_out, K.ZoomOut)
        self.act_zoom_reset = self._action("Actual Size", self._zoom_reset, "Ctrl+0")
        self.act_minimap = QAction("Overview Map", self, checkable=True, checked=True)
        self.act_minimap.setStatusTip("Show an overview in the corner while part of the workflow is out of sight")
        self.act_minimap.toggled.connect(self.canvas.set_minimap_wanted)
        for action in (self.act_cut, self.act_copy, self.act_paste, self.act_duplicate, self.act_delete,
                       self.act_select_all, self.act_rename, self.act_disable):
            # canvas editing shortcuts must not steal keys from text fields in the panels
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.canvas.addAction(action)

    def _build_menus_and_toolbars(self) -> None:
        bar = self.menuBar()
        self.file_menu = bar.addMenu("&File")
        self.file_menu.addActions([self.act_new, self.act_open])
        self.recent_menu = QMenu("Open &Recent", self)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.file_menu.addMenu(self.recent_menu)
        self.file_menu.addSeparator()
        self.file_menu.addActions([self.act_save, self.act_save_as])
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.act_rename_workflow)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.act_quit)
        self.edit_menu = bar.addMenu("&Edit")
        self.edit_menu.addActions([self.act_undo, self.act_redo])
        self.edit_menu.addSeparator()
        self.edit_menu.addActions([self.act_cut, self.act_copy, self.act_paste, self.act_duplicate, self.act_delete])
        self.edit_menu.addSeparator()
        self.edit_menu.addActions([self.act_select_all, self.act_rename, self.act_disable])
        self.edit_menu.addSeparator()
        self.act_credentials = self.edit_menu.addAction("Credentials…", lambda: self.open_credentials())
        self.view_menu = bar.addMenu("&View")
        self.view_menu.addActions([self.act_fit, self.act_zoom_in, self.act_zoom_out, self.act_zoom_reset])
        self.view_menu.addSeparator()
        self.view_menu.addAction(self.act_minimap)
        for dock in (self.palette_dock, self.inspector_dock, self.output_dock):
            self.view_menu.addAction(dock.toggleViewAction())
        self.run_menu = bar.addMenu("&Run")

        self.main_toolbar = QToolBar("Workflow", self)
        self.main_toolbar.setObjectName("mainToolbar")
        self.main_toolbar.setMovable(False)
        self.main_toolbar.addActions([self.act_new, self.act_open, self.act_save])
        self.main_toolbar.addSeparator()
        self.main_toolbar.addActions([self.tool_undo, self.tool_redo])
        self.main_toolbar.addSeparator()
        self.main_toolbar.addActions([self.act_fit])
        self.addToolBar(self.main_toolbar)
        self.run_toolbar = QToolBar("Run", self)
        self.run_toolbar.setObjectName("runToolbar")
        self.run_toolbar.setMovable(False)
        self.addToolBar(self.run_toolbar)
        self._build_read_only_bar()

    def _apply_style(self) -> None:
        self.setStyleSheet(theme.style_sheet())

    # ----- the document ---------------------------------------------------------------------
    def load_document(self, workflow: Workflow, path: str | Path | None = None) -> None:
        """Show `workflow` (it becomes `document`); `path` is where Save writes it."""
        if self._editing is not None:  # leaving a stored execution shown read-only
            self._editing = None
            self._set_editable(True)
            self.read_only_bar.hide()
            self.read_only_changed.emit(False)
        self.document = workflow
        self.editor = DocumentEditor(workflow, self.registry)
        self.path = Path(path) if path is not None else None
        self.undo_stack.clear()
        self.undo_stack.setClean()
        self.scene.set_workflow(workflow)
        self.canvas.minimap.rebuild()
        self._selected = ""
        self.inspector.show_node(None)
        self._update_title()
        QTimer.singleShot(0, self.canvas.fit_to_view)
        self.canvas.fit_to_view()
        self.recovery.discard()
        self.document_changed.emit()
        self.document_replaced.emit()

    def set_pin(self, name: str, items: list | None) -> None:
        """Pin items on a node (n8n's pinData), or unpin it with None: one undoable edit."""
        if self.read_only or not self.document.has_node(name):
            return
        self.undo_stack.push(PinCommand(self, name, items))
        self.node_selected.emit(name)

    def document_edited(self, change: Change) -> None:
        """Called by every command after it changed the document, with what it touched."""
        self.scene.apply(change)
        self.canvas.content_changed()
        if change.structure and self._selected and not self.document.has_node(self._selected):
            self._on_selection_changed()
        if change.structure or change.nodes or not change.moved:
            self.inspector.refresh()  # positions are not shown there
        self._update_title()
        self._autosave.start()
        if change.structure or change.nodes:  # a move changes nothing a run or a panel shows
            self.document_changed.emit()

    def is_modified(self) -> bool:
        return not self.undo_stack.isClean()

    def _on_clean_changed(self, _clean: bool) -> None:
        if isValid(self):  # the stack also reports while the window is being destroyed
            self._update_title()

    def _update_title(self) -> None:
        name = self.path.name if self.path is not None else "Untitled"
        self.setWindowTitle(f"{name}[*] — {self.document.name} — mini-n8n")
        self.setWindowModified(self.is_modified())

    def show_message(self, text: str, timeout_ms: int = 8000) -> None:
        self.statusBar().showMessage(text, timeout_ms)

    # ----- edits ----------------------------------------------------------------------------
    def push_structure(self, text: str, edit) -> Any:
        """Run a structural edit as one undo step; a refused edit is reported, not pushed."""
        try:
            command = StructureCommand(self, text, edit)
        except (EditError, KeyError) as exc:
            self.show_message(f"{text}: {exc.args[0] if exc.args else exc}")
            return None
        self.undo_stack.push(command)
        return command.result

    def add_node(self, type_id: str, position: tuple[float, float], name: str | None = None) -> str | None:
        """Add a node of a type with its top-left corner at `position` (or right of it, on free
        canvas); the view follows it. Returns its name."""
        return self.adding.add(type_id, position, name)

    def add_node_at_centre(self, type_id: str) -> str | None:
        """Add from the palette: wired to the selected node when they fit, else mid-view."""
        return self.adding.add_next_to_selection(type_id)

    def _on_type_dropped(self, type_id: str, pos: QPointF) -> None:
        if not self.read_only:
            self.add_node(type_id, (pos.x() - 50, pos.y() - 50))

    def _on_search_typed(self, text: str) -> None:
        if self.read_only:
            return
        self.palette_dock.show()
        self.palette_panel.start_search(text)

    def _on_nodes_moved(self, before: dict, after: dict) -> None:
        self.undo_stack.push(MoveCommand(self, before, after))

    def _on_nudged(self, dx: int, dy: int) -> None:
        if self.read_only:
            return
        names = self.scene.selected_names()
        self.move_nodes({n: (self.document.node(n).position[0] + dx, self.document.node(n).position[1] + dy)
                         for n in names})

    def _canvas_menu(self, pos) -> None:  # type: ignore[no-untyped-def]
        """Right-click: the edits that apply to what is under the pointer (or the selection)."""
        if self.read_only:
            return
        item = self.canvas.itemAt(pos)
        while item is not None and item.parentItem() is not None:
            item = item.parentItem()
        if isinstance(item, ConnectionItem):
            self.scene.select_link(item.key)
            menu = QMenu(self)
            menu.addAction("Delete connection", lambda: self.disconnect_link(item.key))
            menu.exec(self.canvas.viewport().mapToGlobal(pos))
            return
        name = item.name if isinstance(item, (NodeItem, StickyItem)) else None
        if name is not None and name not in self.scene.selected_names():
            self.scene.select_names([name])
        menu = QMenu(self)
        if self.scene.selected_names():
            menu.addActions([self.act_rename, self.act_disable, self.act_duplicate, self.act_copy, self.act_cut])
            menu.addActions([a for a in self.actions() if a.property("nodeMenu")])  # e.g. Toggle Breakpoint
            menu.addSeparator()
            menu.addAction(self.act_delete)
        else:
            menu.addActions([self.act_paste, self.act_select_all, self.act_fit])
        menu.exec(self.canvas.viewport().mapToGlobal(pos))

    def changeEvent(self, event) -> None:  # type: ignore[no-untyped-def]  # noqa: N802
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            theme.manager().refresh()  # light/dark follows the system palette
        super().changeEvent(event)

    def move_nodes(self, after: dict[str, tuple[float, float]]) -> None:
        before = {name: self.document.node(name).position for name in after}
        self.undo_stack.push(MoveCommand(self, before, after))

    def connect_nodes(self, source: str, conn_type: str, target: str, output: int = 0, input: int = 0) -> bool:
        link = self.push_structure(
            f'Connect "{source}" to "{target}"',
            lambda e: e.connect(source, conn_type, target, output, input),
        )
        if link is not None:
            self.show_message(f'Connected "{source}" to "{target}"', 4000)
        return link is not None

    def _on_connect_requested(self, source: str, conn_type: str, target: str, output: int, input: int) -> None:
        self.connect_nodes(source, conn_type, target, output, input)

    def relink(self, old: Link, source: str, conn_type: str, target: str, output: int, input: int) -> bool:
        """Move a connection's end to another input, in one undo step (refused: nothing changes)."""
        def edit(editor: DocumentEditor) -> Link:
            editor.disconnect(old)
            return editor.connect(source, conn_type, target, output, input)
        return self.push_structure(f'Reconnect "{source}" to "{target}"', edit) is not None

    def disconnect_link(self, link: Link) -> None:
        self.push_structure(f'Disconnect "{link.source}" from "{link.target}"', lambda e: e.disconnect(link))

    def delete_selection(self) -> None:
        names = self.scene.selected_names()
        links = [l for l in self.scene.selected_links() if l.source not in names and l.target not in names]
        if not names and not links:
            return
        self.undo_stack.beginMacro("Delete")
        for link in links:
            self.disconnect_link(link)
        if names:
            self.push_structure(f"Delete {len(names)} node{'s' if len(names) != 1 else ''}",
                                lambda e: e.remove_nodes(names))
        self.undo_stack.endMacro()

    def rename_node(self, old: str, new: str) -> bool:
        """Rename a node (connections follow); a refused name is explained in the status bar."""
        if new.strip() == old:
            return True
        try:
            command = RenameCommand(self, old, new)
        except (EditError, KeyError) as exc:
            self.show_message(f"Cannot rename: {exc.args[0] if exc.args else exc}")
            return False
        self.undo_stack.push(command)
        if self._selected == old:
            self._selected = new.strip()
            self.node_selected.emit(self._selected)
        return True

    def set_parameter(self, name: str, path: tuple, value: Any, text: str | None = None) -> None:
        label = text or f"Set {'.'.join(str(p) for p in path)} of \"{name}\""
        self.undo_stack.push(ParametersCommand(self, label, name, lambda e: e.set_parameter(name, path, value)))

    def unset_parameter(self, name: str, path: tuple, text: str | None = None) -> None:
        label = text or f"Remove {'.'.join(str(p) for p in path)} of \"{name}\""
        self.undo_stack.push(ParametersCommand(self, label, name, lambda e: e.unset_parameter(name, path)))

    def rename_workflow(self, name: str) -> bool:
        if name.strip() == self.document.name:
            return True
        try:
            command = WorkflowNameCommand(self, name)
        except EditError as exc:
            self.show_message(f"Cannot rename the workflow: {exc}")
            return False
        self.undo_stack.push(command)
        return True

    def rename_workflow_dialog(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        name, ok = QInputDialog.getText(self, "Rename workflow", "Workflow name:", text=self.document.name)
        if ok:
            self.rename_workflow(name)

    def open_credentials(self, select_id: str | None = None, new_type: str | None = None) -> CredentialsDialog:
        """The Credentials dialog; when it closes, warnings and the inspector read the store again."""
        from gui.dialogs.credentials import CredentialsDialog  # not needed for the first frame

        dialog = CredentialsDialog(self, select_id=select_id, new_type=new_type)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(lambda _r: self.credentials_changed())
        dialog.open()
        return dialog

    def credentials_changed(self) -> None:
        self.scene.refresh_problems()
        self.inspector.show_node(self.inspector.node.name if self.inspector.node is not None else None)

    def set_credential(self, name: str, cred_type: str, ref: dict | None) -> None:
        self.undo_stack.push(CredentialCommand(self, name, cred_type, ref))

    def set_settings(self, name: str, values: dict[str, object]) -> None:
        """Change node settings (None removes one) in one undoable edit."""
        if self.document.has_node(name) and not self.read_only:
            self.undo_stack.push(SettingCommand(self, name, values))

    def set_disabled(self, names: list[str], disabled: bool) -> None:
        if names:
            self.undo_stack.push(DisableCommand(self, names, disabled))

    def toggle_disabled(self) -> None:
        names = [n for n in self.scene.selected_names() if self.registry.get(self.document.node(n).type).runnable]
        if names:
            self.set_disabled(names, not all(self.document.node(n).is_disabled for n in names))

    def _on_note_resized(self, name: str, width: int, height: int) -> None:
        def edit(editor: DocumentEditor) -> dict:
            before = editor.set_parameter(name, ("width",), width)
            editor.set_parameter(name, ("height",), height)
            return before
        self.undo_stack.push(ParametersCommand(self, f'Resize "{name}"', name, edit))

    def select_all(self) -> None:
        for item in self.scene.node_items():
            item.setSelected(True)

    def start_rename(self) -> None:
        names = self.scene.selected_names()
        if len(names) != 1:
            self.show_message("Select one node to rename it")
            return
        self.inspector_dock.show()
        self.inspector.start_rename()

    def _zoom_reset(self) -> None:
        self.canvas.set_zoom(1.0 / self.canvas.zoom())

    # ----- selection ------------------------------------------------------------------------
    def _on_selection_changed(self) -> None:
        names = self.scene.selected_names()
        name = names[0] if len(names) == 1 else ""
        if name != self._selected:
            self._selected = name
            self.inspector.show_node(name or None)
            self.node_selected.emit(name)

    # ----- clipboard ------------------------------------------------------------------------
    def copy(self) -> None:
        names = self.scene.selected_names()
        if not names:
            self.show_message("Select nodes to copy")
            return
        QGuiApplication.clipboard().setText(json.dumps(self.editor.fragment(names), indent=2, ensure_ascii=False))
        self._paste_count = 0
        self.show_message(f"Copied {len(names)} node{'s' if len(names) != 1 else ''}", 3000)

    def cut(self) -> None:
        if self.scene.selected_names():
            self.copy()
            self.delete_selection()

    def paste(self) -> None:
        """Paste nodes copied here or an n8n workflow JSON (from n8n's editor or a file)."""
        self.paste_text(QGuiApplication.clipboard().text())

    def paste_text(self, text: str) -> list[str]:
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            self.show_message("Nothing to paste: the clipboard holds no n8n nodes or workflow JSON")
            return []
        if not isinstance(data, dict) or not isinstance(data.get("nodes"), list) or not data["nodes"]:
            self.show_message("Nothing to paste: the clipboard JSON has no \"nodes\" list")
            return []
        offset = self._paste_offset(data["nodes"])
        added = self.push_structure("Paste", lambda e: e.paste(data, offset))
        if added:
            self.scene.select_names(added)
            self.show_message(f"Pasted {len(added)} node{'s' if len(added) != 1 else ''}", 3000)
        return added or []

    def _paste_offset(self, nodes: list[Any]) -> tuple[float, float]:
        positions = []
        for node in nodes:
            pos = node.get("position") if isinstance(node, dict) else None
            if isinstance(pos, (list, tuple)) and len(pos) == 2 and all(isinstance(v, (int, float)) for v in pos):
                positions.append((float(pos[0]), float(pos[1])))
        if not positions:
            return (0.0, 0.0)
        left = min(p[0] for p in positions)
        top = min(p[1] for p in positions)
        visible = self.canvas.visible_scene_rect()
        taken = {(float(n.position[0]), float(n.position[1])) for n in self.document.nodes}
        if visible.contains(QPointF(left, top)) or not visible.isValid():
            dx = dy = 0.0
            while any((p[0] + dx, p[1] + dy) in taken for p in positions):
                dx, dy = dx + 40, dy + 40
            return dx, dy
        centre = visible.center()
        return round((centre.x() - left - 100) / 20) * 20, round((centre.y() - top - 50) / 20) * 20

    def duplicate(self) -> None:
        names = self.scene.selected_names()
        if not names:
            self.show_message("Select nodes to duplicate")
            return
        fragment = self.editor.fragment(names)
        added = self.push_structure("Duplicate", lambda e: e.paste(fragment, self._paste_offset(fragment["nodes"])))
        if added:
            self.scene.select_names(added)

    # ----- files ----------------------------------------------------------------------------
    def confirm_discard(self) -> bool:
        """Ask what to do with unsaved changes; True when it is fine to go on."""
        from PySide6.QtWidgets import QMessageBox

        self.commit_pending_edits()
        if not self.is_modified():
            return True
        answer = QMessageBox.question(
            self, "Unsaved changes",
            f"Save the changes to {self.path.name if self.path else 'this new workflow'} first?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def new_document(self) -> None:
        if self.confirm_discard():
            self.load_document(new_workflow())

    def open_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        if not self.confirm_discard():
            return
        start = str(self.path.parent) if self.path else str(Path.cwd())
        path, _ = QFileDialog.getOpenFileName(self, "Open workflow", start, FILE_FILTER)
        if path:
            self.open_file(path, ask=False)

    def open_file(self, path: str | Path, ask: bool = True) -> bool:
        """Load a workflow file; problems are listed in a dialog and nothing is lost."""
        from PySide6.QtWidgets import QMessageBox

        if ask and not self.confirm_discard():
            return False
        try:
            workflow = load_workflow(path)
        except WorkflowFileError as exc:
            QMessageBox.warning(self, "Cannot open workflow",
                                f"{exc.source} cannot be opened:\n\n" + "\n".join(f"• {p}" for p in exc.problems))
            self.show_message(f"Cannot open {path}")
            return False
        self.load_document(workflow, path)
        if self.isVisible():
            self.recent.add(path)
        else:  # opened at start: the settings file is read and written after the first frame
            after_first_frame(self, lambda: self.recent.add(path))
        unsupported = sorted({n.type for n in workflow.nodes if not self.registry.knows(n.type)})
        notes = []
        if unsupported:
            notes.append(f"{len(unsupported)} unsupported node type(s) kept as placeholders ({', '.join(unsupported)})")
        if workflow.load_warnings:
            notes.append(f"{len(workflow.load_warnings)} link(s) to missing nodes dropped ("
                         + "; ".join(workflow.load_warnings) + ")")
        if notes:
            self.show_message(f"Opened {Path(path).name}: " + "; ".join(notes), 15000)
        else:
            self.show_message(f"Opened {Path(path).name}", 4000)
        return True

    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self.save_to(self.path)

    def save_as(self) -> bool:
        from PySide6.QtWidgets import QFileDialog

        start = str(self.path) if self.path else str(Path.cwd() / f"{self.document.name}.json")
        path, _ = QFileDialog.getSaveFileName(self, "Save workflow as", start, FILE_FILTER)
        if not path:
            return False
        if not path.lower().endswith(".json"):
            path += ".json"
        return self.save_to(path)

    def commit_pending_edits(self) -> None:
        """Apply the inspector field being typed in (it commits on leaving it), e.g. before a run."""
        self.inspector.commit_pending()

    def save_to(self, path: str | Path) -> bool:
        """Write the document atomically; a failure is shown in a dialog and nothing is lost."""
        from PySide6.QtWidgets import QMessageBox

        self.commit_pending_edits()
        try:
            save_workflow(self.document, path)
        except (OSError, MiniN8nError) as exc:
            QMessageBox.critical(self, "Cannot save workflow", f"{path} could not be written:\n\n{exc}")
            self.show_message(f"Not saved: {exc}")
            return False
        self.path = Path(path)
        self.undo_stack.setClean()
        self.recent.add(path)
        self.recovery.discard()
        self._update_title()
        self.show_message(f"Saved {self.path.name}", 4000)
        return True

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        paths = self.recent.paths()
        if not paths:
            empty = self.recent_menu.addAction("No recent files")
            empty.setEnabled(False)
            return
        for path in paths:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _c=False, p=path: self._open_recent(p))
        self.recent_menu.addSeparator()
        self.recent_menu.addAction("Clear list", self.recent.clear)

    def _open_recent(self, path: str) -> None:
        from PySide6.QtWidgets import QMessageBox

        if not Path(path).exists():
            self.recent.remove(path)
            QMessageBox.warning(self, "File not found", f"{path} no longer exists; it was taken off the list.")
            return
        self.open_file(path)

    # ----- recovery -------------------------------------------------------------------------
    def autosave_now(self) -> None:
        """Write unsaved work to this window's recovery file (or drop it when all is saved)."""
        if not self.is_modified():
            self.recovery.discard()
            return
        try:
            self.recovery.write(self.document, str(self.path) if self.path else None)
        except OSError as exc:
            self.show_message(f"Autosave failed: {exc}")

    def offer_recovery(self) -> bool:
        """After a crash: offer the newest work left in a recovery file; True when restored."""
        found, problems = left_behind(self.recovery.directory)
        for problem in problems:
            self.show_message(f"A recovery file cannot be read: {problem}", 15000)
        if not found:
            return False
        from PySide6.QtWidgets import QMessageBox

        work = found[0]
        where = work.path or "a new, unsaved workflow"
        answer = QMessageBox.question(
            self, "Recover unsaved work?",
            f"mini-n8n did not close normally. Unsaved work on {where} (autosaved {work.saved_at}) "
            "can be recovered.\n\nRecover it?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Discard,
            QMessageBox.StandardButton.Yes,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.restore(work)
            return True
        for other in found:
            other.discard()
        return False

    def restore(self, work: RecoveredWork) -> None:
        self.load_document(work.workflow, work.path)
        work.discard()
        # recovered work is unsaved: mark it modified with one undoable no-op step
        self.undo_stack.resetClean()
        self._update_title()
        self.autosave_now()
        self.show_message("Recovered unsaved work; save it to keep it", 10000)

    # ----- a stored execution, read-only --------------------------------------------------------
    def _build_read_only_bar(self) -> None:
        self.read_only_bar = QToolBar("Read-only execution", self)
        self.read_only_bar.setObjectName("readOnlyBar")
        self.read_only_bar.setMovable(False)
        self.read_only_label = QLabel()
        self.read_only_label.setObjectName("readOnlyBanner")
        self.read_only_bar.addWidget(self.read_only_label)
        self.act_copy_to_editor = QAction("Copy to editor", self)
        self.act_copy_to_editor.setToolTip("Load the workflow as it ran into the editor, to change and run it again")
        self.act_leave_read_only = QAction("Back to the workflow", self)
        self.act_leave_read_only.setToolTip("Leave this execution and show the workflow being edited")
        self.act_leave_read_only.triggered.connect(self.leave_read_only)
        self.read_only_bar.addActions([self.act_copy_to_editor, self.act_leave_read_only])
        self.addToolBarBreak()
        self.addToolBar(self.read_only_bar)
        self.read_only_bar.hide()
        self._style_read_only_bar()
        theme.manager().changed.connect(self._style_read_only_bar)

    def _style_read_only_bar(self) -> None:
        current = theme.current()
        self.read_only_bar.setStyleSheet(
            f"QToolBar#readOnlyBar {{ background: {current.user_fill.name()}; border: none; }}"
            f"QToolBar#readOnlyBar QLabel, QToolBar#readOnlyBar QToolButton {{ color: {current.node_text.name()}; }}"
            "QToolBar#readOnlyBar QLabel { font-weight: bold; }")

    @property
    def read_only(self) -> bool:
        """A stored execution is shown: its workflow on the canvas, nothing editable."""
        return self._editing is not None

    @property
    def edited_document(self) -> Workflow:
        """The workflow being edited (set aside while a stored execution is shown)."""
        return self._editing[0] if self._editing is not None else self.document

    def enter_read_only(self, workflow: Workflow, execution_id: str) -> None:
        """Show the workflow a stored execution ran, read-only, under a banner saying so."""
        if self._editing is None:
            self.commit_pending_edits()
            self._editing = (self.document, self.editor, self.path)
        shown = workflow.model_copy(deep=True)
        self.document = shown
        self.editor = DocumentEditor(shown, self.registry)
        self.scene.set_workflow(shown)
        self.canvas.minimap.rebuild()
        self._selected = ""
        self.inspector.show_node(None)
        self._set_editable(False)
        self.read_only_label.setText(f"  Execution {execution_id} — read-only  ")
        self.read_only_bar.show()
        self.canvas.fit_to_view()
        self.read_only_changed.emit(True)

    def leave_read_only(self) -> None:
        """Show the document being edited again (with its undo history, as it was left)."""
        if self._editing is None:
            return
        self.document, self.editor, self.path = self._editing
        self._editing = None
        self.scene.set_workflow(self.document)
        self.canvas.minimap.rebuild()
        self._selected = ""
        self.inspector.show_node(None)
        self._set_editable(True)
        self.read_only_bar.hide()
        self._update_title()
        self.canvas.fit_to_view()
        self.read_only_changed.emit(False)

    def _set_editable(self, on: bool) -> None:
        self.canvas.set_read_only(not on)
        self.palette_panel.setEnabled(on)
        self.inspector.setEnabled(on)
        for action in (self.act_cut, self.act_paste, self.act_duplicate, self.act_delete, self.act_rename,
                       self.act_disable, self.act_rename_workflow, self.act_save, self.act_save_as):
            action.setEnabled(on)
        can_undo, can_redo = on and self.undo_stack.canUndo(), on and self.undo_stack.canRedo()
        for action, enabled in ((self.act_undo, can_undo), (self.tool_undo, can_undo),
                                (self.act_redo, can_redo), (self.tool_redo, can_redo)):
            action.setEnabled(enabled)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.leave_read_only()
        if self.confirm_discard():
            self._autosave.stop()
            self.recovery.release()
            event.accept()
        else:
            event.ignore()
