"""`mini-n8n FILE` with a file that cannot be opened: the editor starts anyway and says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from gui.app import _open_at_start
from engine.editing import new_workflow
from tests.builders import MANUAL_TRIGGER, node

from .editor_support import editor_env, make_window  # noqa: F401  (fixtures)


def deep_file(path: Path, depth: int) -> Path:
    value = "[" * depth + "]" * depth
    text = json.dumps({"nodes": [node("Start", MANUAL_TRIGGER, {"v": "X"})], "connections": {}})
    path.write_text(text.replace('"X"', value))
    return path


@pytest.mark.parametrize("depth", [300, 100_000])
def test_a_deeply_nested_file_at_start_is_refused_with_a_message(make_window, tmp_path: Path,  # noqa: F811
                                                                monkeypatch: pytest.MonkeyPatch, depth: int) -> None:
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda _parent, _title, text: shown.append(text)))
    window = make_window()
    _open_at_start(window, deep_file(tmp_path / "deep.json", depth), new_workflow)
    assert len(shown) == 1 and "levels deep" in shown[0]
    assert window.isVisible() and window.document.nodes == []


def test_an_unexpected_failure_at_start_is_shown_and_the_editor_lives(make_window, tmp_path: Path,  # noqa: F811
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    window = make_window()
    path = tmp_path / "wf.json"
    path.write_text("{}")

    def broken(*_args: object, **_kwargs: object) -> bool:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(window, "open_file", broken)
    _open_at_start(window, path, new_workflow)
    boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]
    assert [b.windowTitle() for b in boxes] == [f"Cannot open {path}"]
    assert "RuntimeError: disk on fire" in boxes[0].detailedText()
    assert window.isVisible()
    for box in boxes:
        box.close()
