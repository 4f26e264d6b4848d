"""Entry point of the editor: `mini-n8n [FILE]` opens the main window on a Qt + asyncio loop.

qasync runs asyncio inside Qt's event loop so workflow runs never block the window; errors
that escape a slot or a task are shown in the window, not only on the console.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from pathlib import Path
from types import TracebackType

# The engine's modules (and the others the window imports before its first frame) before Qt's:
# once PySide6 is imported it reads the source of every module imported after it (for its
# `__feature__` switches), about 6 % of the editor's start-up.
import html  # noqa: F401
import mini_n8n_resources  # noqa: F401
from engine import (  # noqa: F401
    abort, debugger, display_options, editing, node_settings, processes, run_state, runs, start, versions,
)
from engine.expressions import preview  # noqa: F401
from engine.collector import pause_collections

import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

START_UP_COLLECTIONS_MS = 5000
"""The collector is off from `main` until the window's first frame, or this long at most (a
window that starts minimized paints later)."""

USAGE = "usage: mini-n8n [FILE]   open the editor (on FILE, an n8n workflow JSON)\n" \
        "       mini-n8n run FILE --message TEXT   run a workflow headless"


def _report_to_window(window, title: str, text: str) -> None:  # type: ignore[no-untyped-def]
    print(text, file=sys.stderr)
    if window is not None:
        from PySide6.QtWidgets import QMessageBox

        window.show_message(f"{title}: {text.strip().splitlines()[-1] if text.strip() else ''}", 15000)
        box = QMessageBox(QMessageBox.Icon.Critical, title, text.strip().splitlines()[-1] if text.strip() else title,
                          QMessageBox.StandardButton.Ok, window)
        box.setDetailedText(text)
        box.setModal(False)
        box.show()


def _open_at_start(window, path: Path, new_workflow) -> None:  # type: ignore[no-untyped-def]
    """Open the file named on the command line; whatever goes wrong is shown, and the editor
    starts on an empty workflow rather than not at all."""
    if not path.exists():
        window.load_document(new_workflow(path.stem), path)
        window.show_message(f"{path} does not exist yet: it will be created when you save", 10000)
        return
    try:
        window.open_file(path, ask=False)
    except Exception:  # the editor outlives any file
        _report_to_window(window, f"Cannot open {path}", traceback.format_exc())


def main(argv: list[str]) -> int:
    """Open the editor; `argv` holds the optional workflow file. Returns the exit code."""
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if len(argv) > 1:
        print(USAGE, file=sys.stderr)
        return 2
    resume_collections = pause_collections()  # until the first frame: what is built until then is kept
    try:
        app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "mini-n8n"])
        app.setApplicationName("mini-n8n")
        app.setOrganizationName("mini-n8n")
        app.setApplicationDisplayName("mini-n8n")
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)

        from gui import theme
        from engine.editing import new_workflow
        from gui.first_frame import after_first_frame
        from gui.main_window import MainWindow

        app.setWindowIcon(theme.icon("agent", 64))
        window = MainWindow()
        after_first_frame(window, resume_collections)
        QTimer.singleShot(START_UP_COLLECTIONS_MS, resume_collections)

        def excepthook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
            _report_to_window(window, "Unexpected error", "".join(traceback.format_exception(kind, value, tb)))

        def loop_errors(_loop: asyncio.AbstractEventLoop, context: dict) -> None:
            exc = context.get("exception")
            text = "".join(traceback.format_exception(exc)) if exc else str(context.get("message"))
            _report_to_window(window, "Unexpected error in a background task", text)

        sys.excepthook = excepthook
        loop.set_exception_handler(loop_errors)

        if argv:
            _open_at_start(window, Path(argv[0]), new_workflow)
        window.show()
        QTimer.singleShot(0, window.offer_recovery)

        closed = asyncio.Event()
        app.aboutToQuit.connect(closed.set)
        with loop:
            loop.run_until_complete(closed.wait())
    finally:
        resume_collections()
    return 0
