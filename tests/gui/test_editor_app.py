"""The entry point: `mini-n8n FILE` opens the window on the file, on a qasync loop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from gui.app import main
from gui.canvas.view import NODE_MIME

from .editor_support import EXAMPLE, ROOT, editor_env, make_window  # noqa: F401  (fixtures)

DRIVER = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(["mini-n8n"])
import asyncio
from gui.app import main

def check():
    from gui.main_window import MainWindow
    window = next(w for w in app.topLevelWidgets() if isinstance(w, MainWindow))
    loop_running = asyncio.get_event_loop().is_running()
    print("TITLE", window.windowTitle(), "NODES", len(window.document.nodes), "LOOP", loop_running, flush=True)
    window.close()

QTimer.singleShot(300, check)
sys.exit(main(sys.argv[1:]))
"""


def test_main_opens_the_file_in_the_window_on_a_qasync_loop(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "MINI_N8N_RECOVERY_DIR": str(tmp_path / "r"),
           "MINI_N8N_CONFIG_DIR": str(tmp_path / "c"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", DRIVER, str(EXAMPLE)], env=env, capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    line = next(l for l in done.stdout.splitlines() if l.startswith("TITLE"))
    assert "scripted-calculator-agent.json" in line and "NODES 6" in line and "LOOP True" in line


def test_help_and_bad_arguments(capsys) -> None:
    assert main(["--help"]) == 0
    assert "mini-n8n [FILE]" in capsys.readouterr().out
    assert main(["a.json", "b.json"]) == 2


def test_dropping_a_palette_type_on_the_canvas_adds_it_there(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    view = window.canvas
    mime = QMimeData()
    mime.setData(NODE_MIME, b"@n8n/n8n-nodes-langchain.toolCalculator")
    at = QPoint(120, 420)
    buttons, keys = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(at, Qt.DropAction.CopyAction, mime, buttons, keys)
    QApplication.sendEvent(view.viewport(), enter)
    assert enter.isAccepted()
    QApplication.sendEvent(view.viewport(), QDragMoveEvent(at, Qt.DropAction.CopyAction, mime, buttons, keys))
    drop = QDropEvent(QPointF(at), Qt.DropAction.CopyAction, mime, buttons, keys)
    spot = view.mapToScene(at)  # before the drop: the view then scrolls to show the new node whole
    QApplication.sendEvent(view.viewport(), drop)
    assert window.document.has_node("Calculator1")
    node = window.document.node("Calculator1")
    assert abs(node.position[0] + 50 - spot.x()) <= 150 and abs(node.position[1] + 50 - spot.y()) <= 20
    assert window.scene.selected_names() == ["Calculator1"]
