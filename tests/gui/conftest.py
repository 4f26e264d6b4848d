"""GUI fixtures: Qt offscreen, and the asyncio loop running inside Qt (qasync) as in the app.

`qloop` makes a qasync.QEventLoop over pytest-qt's QApplication and marks it running, so
coroutines started by slots make progress whenever Qt processes events — which
`qtbot.waitUntil` / `waitSignal` do. No test calls `run_until_complete` or sleeps.
"""

from __future__ import annotations

import asyncio
import os
from typing import Iterator

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import qasync  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A running qasync loop for the test; pending tasks are cancelled and drained at the end."""
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        deadline = 200
        while any(not t.done() for t in pending) and deadline:
            qapp.processEvents()
            deadline -= 1
        loop._QEventLoop__is_running = False  # set by already_running; no Qt exec() to leave
        asyncio.events._set_running_loop(None)
        loop.close()
        asyncio.set_event_loop(None)


def _standin_window(workflow):  # type: ignore[no-untyped-def]
    """Until gui.main_window lands: a QMainWindow with the real canvas and the contract's attributes."""
    from PySide6.QtCore import Qt, Signal
    from PySide6.QtWidgets import QDockWidget, QMainWindow

    from gui.bridge import builtin_registry
    from gui.canvas.scene import WorkflowScene
    from gui.canvas.view import CanvasView
    from gui.run_controller import RunController

    class Window(QMainWindow):
        node_selected = Signal(str)

        def __init__(self) -> None:
            super().__init__()
            self.registry = builtin_registry()
            self.document = workflow
            scene = WorkflowScene(workflow, self.registry)
            scene.sync()
            self.canvas = CanvasView(scene)
            self.setCentralWidget(self.canvas)
            self.output_dock = QDockWidget("Output", self)
            self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.output_dock)
            self.run_toolbar = self.addToolBar("Run")
            self.run_menu = self.menuBar().addMenu("&Run")
            scene.selectionChanged.connect(self._selection)
            self.run_controller = RunController(self)

        def _selection(self) -> None:
            names = self.canvas.canvas_scene.selected_names()
            if len(names) == 1:
                self.node_selected.emit(names[0])

    return Window()


@pytest.fixture
def run_window(qtbot, qloop):  # type: ignore[no-untyped-def]
    """Factory: the editor's main window on a workflow, with its RunController, shown offscreen."""

    def make(workflow):  # type: ignore[no-untyped-def]
        try:
            from gui.main_window import MainWindow
        except ImportError:
            window = _standin_window(workflow)
        else:
            window = MainWindow(workflow=workflow)
        qtbot.addWidget(window)
        window.resize(1400, 900)
        window.show()
        qtbot.waitExposed(window)
        return window, window.run_controller

    return make
