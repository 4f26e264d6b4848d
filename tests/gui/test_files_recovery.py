"""Unsaved work is autosaved to a recovery file and offered again after a crash."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from gui.recovery import left_behind

from .editor_support import EXAMPLE, answer_next, document_data, editor_env, make_window  # noqa: F401


def crash(window) -> None:  # type: ignore[no-untyped-def]
    """What a crash leaves: the recovery file stays, no window owns it any more."""
    window.recovery.abandon()
    window.recovery.release = lambda: None
    window.recovery.discard = lambda: None


def test_unsaved_work_is_offered_after_a_crash(qtbot, make_window, editor_env: Path) -> None:
    window = make_window(EXAMPLE)
    window.rename_node("Calculator", "Maths")
    window.set_parameter("AI Agent", ("options", "maxIterations"), 9)
    qtbot.waitUntil(lambda: window.recovery.file.exists(), timeout=5000)
    edited = document_data(window)
    crash(window)

    fresh = make_window()
    answer_next(QMessageBox.StandardButton.Yes)
    assert fresh.offer_recovery()
    assert document_data(fresh) == edited
    assert fresh.path == window.path and fresh.path.name == EXAMPLE.name and fresh.isWindowModified()
    assert left_behind(fresh.recovery.directory)[0] == []  # taken: not offered twice


def test_saved_work_leaves_no_recovery_file(qtbot, make_window, tmp_path: Path) -> None:
    window = make_window(EXAMPLE)
    window.move_nodes({"Calculator": (480, 220)})
    window.autosave_now()
    assert window.recovery.file.exists()
    assert window.save_to(tmp_path / "saved.json")
    assert not window.recovery.file.exists()


def test_declining_recovery_discards_the_files(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.move_nodes({"Calculator": (480, 220)})
    window.autosave_now()
    crash(window)
    fresh = make_window()
    answer_next(QMessageBox.StandardButton.Discard)
    assert not fresh.offer_recovery()
    assert left_behind(fresh.recovery.directory)[0] == []
    assert fresh.document.nodes == []
