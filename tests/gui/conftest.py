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


@pytest.fixture
def run_window(qtbot, qloop, monkeypatch):  # type: ignore[no-untyped-def]
    """Factory: the editor's main window on a workflow, shown and active (so shortcuts work).
    Closing it at the end discards unsaved edits (a failed test must not wait on a dialog)."""
    from PySide6.QtWidgets import QMessageBox

    from gui.main_window import MainWindow

    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Discard))

    def make(workflow):  # type: ignore[no-untyped-def]
        window = MainWindow(workflow=workflow)
        qtbot.addWidget(window)
        window.resize(1400, 900)
        window.show()
        qtbot.waitExposed(window)
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow)
        return window, window.run_controller

    return make
