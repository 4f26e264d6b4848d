"""Nothing that can wait is done before the editor's first frame: the palette lists the node
types (importing every node module, and httpx with them) only after it, the run bridge opens its
engine (the executor, the store) when first needed, and a file opened at start joins the recent
files after it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .editor_support import editor_env, make_window  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parents[2]

BEFORE_THE_FIRST_FRAME = """
import sys
from PySide6.QtWidgets import QApplication
app = QApplication(["mini-n8n"])
from gui.main_window import MainWindow
window = MainWindow()
loaded = sorted(m for m in sys.modules if m.startswith(("nodes.", "engine.store", "sqlite3")) or m in ("httpx", "engine.executor"))
print(" ".join(loaded))
print("populated" if window.palette_panel.populated else "empty")
"""


def test_the_window_is_built_without_node_modules_or_httpx(editor_env: Path) -> None:  # noqa: F811
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "QT_QPA_PLATFORM": "offscreen", "MINI_N8N_DB": str(editor_env / "store.sqlite")}
    done = subprocess.run([sys.executable, "-c", BEFORE_THE_FIRST_FRAME], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    modules, palette = done.stdout.splitlines()[-2:]
    loaded = set(modules.split())
    assert "httpx" not in loaded and not any(m.startswith("nodes.models") for m in loaded), loaded
    assert not loaded & {"engine.executor", "engine.store", "sqlite3"}, loaded
    assert palette == "empty"


def test_the_engine_opens_when_first_needed(qtbot, make_window) -> None:  # noqa: F811
    window = make_window()
    bridge = window.run_controller.bridge
    qtbot.waitUntil(lambda: window.run_controller.executions._painted)  # the Executions panel lists the store
    assert bridge.engine.store is not None and bridge.engine is bridge.engine


def test_a_file_opened_at_start_joins_the_recent_files_after_the_first_frame(qtbot, editor_env: Path) -> None:  # noqa: F811
    from gui.main_window import MainWindow
    from tests.builders import agent_workflow
    from engine.workflow import save_workflow

    path = editor_env / "start.json"
    save_workflow(agent_workflow([{"text": "done"}], tools=[]), path)
    window = MainWindow()
    qtbot.addWidget(window)
    assert window.open_file(path, ask=False)
    assert str(path.resolve()) not in window.recent.paths()
    window.show()
    qtbot.waitUntil(lambda: str(path.resolve()) in window.recent.paths())
    window.undo_stack.setClean()


def test_the_palette_fills_after_the_first_frame(qtbot, make_window) -> None:  # noqa: F811
    window = make_window()
    qtbot.waitUntil(lambda: window.palette_panel.populated)
    assert len(window.palette_panel.visible_type_ids()) > 10
