"""Start a run from a chosen trigger node, as `mini-n8n run --trigger NAME --input JSON` does.

The node's context menu offers "Start from This Trigger…" on a trigger: a dialog takes the JSON
of the trigger's output item(s) (an object or a list of objects). Left empty, a pinned trigger
starts with its pinned data and a trigger mini-n8n runs (Manual, Chat) runs itself; a trigger of
a type mini-n8n does not run needs the JSON (or pinned data).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction

from engine.errors import MiniN8nError
from engine.start import is_pinned, is_trigger
from engine.workflow import Node
from gui.bridge import RunBridge

if TYPE_CHECKING:
    from gui.debug_controller import DebugController
    from gui.main_window import MainWindow

EXAMPLE = '{\n  "field": "value"\n}'


class StartFromTrigger(QObject):
    """The "Start from This Trigger…" action of a window (its document, registry, status bar); the
    run stops at the window's breakpoints, as its re-runs and replays do."""

    def __init__(self, window: MainWindow, bridge: RunBridge, debug: DebugController) -> None:
        super().__init__(window)
        self.window = window
        self.bridge = bridge
        self.debug = debug
        self.action = QAction("Start from This Trigger…", self)
        self.action.setToolTip("Run the workflow from this trigger, with its output item given as JSON")
        self.action.setProperty("nodeMenu", True)  # offered in the node's context menu
        self.action.triggered.connect(self.ask_and_start)
        window.addAction(self.action)
        window.scene.selectionChanged.connect(self._update)
        self._update()

    def trigger(self) -> Node | None:
        """The one selected node, when it is a trigger."""
        names = self.window.scene.selected_names()
        if len(names) != 1:
            return None
        node = self.window.document.node(names[0])
        return node if is_trigger(node, self.window.registry) else None

    def _update(self) -> None:
        found = self.trigger()
        self.action.setEnabled(found is not None and not self.bridge.running)
        self.action.setVisible(found is not None)

    def prefilled(self, node: Node) -> str:
        """What the dialog starts with: empty where the trigger has its own output, else an example."""
        document = self.window.document
        node_type = self.window.registry.get(node.type)
        if is_pinned(document, node.name) or node_type.supported:
            example = node_type.example_output()
            if example is not None and not is_pinned(document, node.name):
                return "{\n" + ",\n".join(f'  "{k}": "{v}"' for k, v in example.items()) + "\n}"
            return ""
        return EXAMPLE

    def ask_and_start(self) -> None:
        node = self.trigger()
        if node is None:
            self.window.statusBar().showMessage("Select one trigger node to start from", 6000)
            return
        pinned = is_pinned(self.window.document, node.name)
        label = (f'Output of "{node.name}" ({node.type}) as JSON: an object or a list of objects.\n'
                 + ("Leave it empty to start with its pinned data." if pinned else
                    "Leave it empty to let the trigger run itself." if self.prefilled(node) == "" else ""))
        from PySide6.QtWidgets import QInputDialog

        text, ok = QInputDialog.getMultiLineText(self.window, "Start from This Trigger", label, self.prefilled(node))
        if ok:
            self.start(node.name, text)

    def start(self, trigger: str, text: str) -> str | None:
        """Start the run from `trigger` with `text` as its output (empty: its own), stopping at the
        window's breakpoints; the problem, if it cannot start."""
        self.window.commit_pending_edits()
        self.window.leave_read_only()
        try:
            self.bridge.run_from_trigger(self.window.document, trigger, text if text.strip() else None,
                                         self.debug.breakpoints_if_set())
        except MiniN8nError as exc:
            self.window.statusBar().showMessage(str(exc), 15000)
            return str(exc)
        self.window.statusBar().showMessage(f'Started from "{trigger}"', 6000)
        return None
