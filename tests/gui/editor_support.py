"""Helpers for the editor's GUI tests: a main window in temporary folders, and user gestures.

Gestures are real Qt mouse and key events sent to the canvas viewport, so the same code paths
run as when a user drags ports and nodes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from gui.canvas.view import CanvasView

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "scripted-calculator-agent.json"


@pytest.fixture
def editor_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Settings, recovery files and credentials in a temporary folder; dialogs answered."""
    monkeypatch.setenv("MINI_N8N_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MINI_N8N_RECOVERY_DIR", str(tmp_path / "recovery"))
    monkeypatch.setenv("MINI_N8N_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MINI_N8N_CREDENTIALS", str(tmp_path / "home" / "credentials.json"))
    answers: list[QMessageBox.StandardButton] = []
    monkeypatch.setattr(QMessageBox, "question",
                        staticmethod(lambda *a, **k: answers.pop(0) if answers else QMessageBox.StandardButton.Discard))
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Ok))
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Ok))
    _answers[:] = [answers]
    return tmp_path


_answers: list[list[Any]] = []


def answer_next(*buttons: QMessageBox.StandardButton) -> None:
    """Queue answers for the next QMessageBox.question calls (Discard when none is queued)."""
    _answers[0].extend(buttons)


@pytest.fixture
def make_window(qtbot, editor_env: Path) -> Iterator[Callable[..., Any]]:  # type: ignore[no-untyped-def]
    """Factory: a shown MainWindow, closed (changes discarded) after the test. Files of the
    repository are opened from a copy in the temporary folder, so a save never touches them."""
    from gui.main_window import MainWindow

    windows = []

    def make(path: Path | None = None, registry: Any = None) -> MainWindow:
        if path is not None and ROOT in Path(path).resolve().parents:
            copy = editor_env / "files" / Path(path).name
            copy.parent.mkdir(exist_ok=True)
            copy.write_bytes(Path(path).read_bytes())
            path = copy
        window = MainWindow(bridge_registry=registry)
        qtbot.addWidget(window)
        window.resize(1400, 900)
        window.show()
        qtbot.waitExposed(window)
        if path is not None:
            assert window.open_file(path, ask=False)
        windows.append(window)
        return window

    yield make


def mouse(view: CanvasView, kind: QEvent.Type, point: QPointF | QPoint, button: Qt.MouseButton,
          buttons: Qt.MouseButton, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    """A mouse event at a scene point (QPointF) or a viewport point (QPoint)."""
    local = QPointF(point) if isinstance(point, QPoint) else QPointF(view.mapFromScene(point))
    global_point = QPointF(view.viewport().mapToGlobal(local.toPoint()))
    event = QMouseEvent(kind, local, global_point, button, buttons, modifiers)
    QApplication.sendEvent(view.viewport(), event)


def drag(view: CanvasView, start: QPointF, end: QPointF, button: Qt.MouseButton = Qt.MouseButton.LeftButton,
         modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier, steps: int = 6) -> None:
    """Press at `start`, move in steps, release at `end` (scene coordinates)."""
    mouse(view, QEvent.Type.MouseButtonPress, start, button, button, modifiers)
    for i in range(1, steps + 1):
        point = start + (end - start) * (i / steps)
        mouse(view, QEvent.Type.MouseMove, point, Qt.MouseButton.NoButton, button, modifiers)
    mouse(view, QEvent.Type.MouseButtonRelease, end, button, Qt.MouseButton.NoButton, modifiers)


def click(view: CanvasView, point: QPointF, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    mouse(view, QEvent.Type.MouseButtonPress, point, Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton, modifiers)
    mouse(view, QEvent.Type.MouseButtonRelease, point, Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton, modifiers)


def port_pos(window: Any, node: str, direction: str, conn_type: str) -> QPointF:
    item = window.canvas.node_item(node)
    port = item.port(direction, conn_type)
    assert port is not None, f"{node} has no {direction} {conn_type} port"
    return port.scenePos()


def connect_by_drag(window: Any, source: str, conn_type: str, target: str) -> None:
    """Drag from the source's output port to the target's input port, as a user does."""
    window.canvas.centerOn(window.canvas.node_item(target))
    drag(window.canvas, port_pos(window, source, "out", conn_type), port_pos(window, target, "in", conn_type))


def palette_add(qtbot, window: Any, display_name: str) -> str:  # type: ignore[no-untyped-def]
    """Double-click a node type in the palette (with nothing selected, so it is not wired to a
    selected node); returns the new node's name."""
    window.scene.clearSelection()
    qtbot.waitUntil(lambda: window.palette_panel.populated)  # filled after the first frame
    tree = window.palette_panel.tree
    model = window.palette_panel.model
    before = {n.name for n in window.document.nodes}
    for g in range(model.rowCount()):
        header = model.item(g)
        for r in range(header.rowCount()):
            if header.child(r).text() == display_name:
                index = header.child(r).index()
                tree.scrollTo(index)
                rect = tree.visualRect(index)
                qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
                qtbot.mouseDClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
                added = {n.name for n in window.document.nodes} - before
                assert len(added) == 1, f"double-clicking {display_name} added {added}"
                return added.pop()
    raise AssertionError(f"{display_name} is not in the palette")


def document_data(window: Any) -> dict[str, Any]:
    from engine.workflow import workflow_to_data

    return json.loads(json.dumps(workflow_to_data(window.document)))


def centre(item: Any) -> QPointF:
    return item.sceneBoundingRect().center() if not hasattr(item, "body_rect") else item.mapToScene(item.body_rect().center())


def focus_canvas(qtbot, window: Any) -> None:  # type: ignore[no-untyped-def]
    """Give the canvas keyboard focus, as clicking into it does."""
    window.activateWindow()
    window.canvas.setFocus()
    qtbot.waitUntil(window.canvas.hasFocus)


def focus_out(qtbot, widget: Any) -> None:  # type: ignore[no-untyped-def]
    """Move keyboard focus away from a field so it commits (as tabbing away does)."""
    widget.clearFocus()
    QApplication.processEvents()


__all__ = ["editor_env", "make_window", "drag", "click", "mouse", "port_pos", "connect_by_drag", "palette_add",
           "document_data", "centre", "focus_out", "focus_canvas", "answer_next", "EXAMPLE", "QPoint"]
