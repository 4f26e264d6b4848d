"""Renaming with F2 and the inspector: connections follow, refused names are explained."""

from __future__ import annotations

from PySide6.QtCore import Qt

from .editor_support import EXAMPLE, editor_env, focus_canvas, make_window  # noqa: F401  (fixtures)


def links_of(window) -> set[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    return {(s, c, t.node) for s, c, _i, t in window.document.links()}


def test_f2_renames_and_connections_follow(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["AI Agent"])
    focus_canvas(qtbot, window)
    qtbot.keyClick(window.canvas, Qt.Key.Key_F2)
    name = window.inspector.name_edit
    qtbot.waitUntil(name.hasFocus)
    assert name.selectedText() == "AI Agent"
    qtbot.keyClicks(name, "Shop Agent")
    qtbot.keyClick(name, Qt.Key.Key_Return)
    assert links_of(window) == {
        ("When chat message received", "main", "Shop Agent"),
        ("Model", "ai_languageModel", "Shop Agent"),
        ("Simple Memory", "ai_memory", "Shop Agent"),
        ("Calculator", "ai_tool", "Shop Agent"),
    }
    assert window.canvas.node_item("Shop Agent") is not None and window.canvas.node_item("AI Agent") is None
    assert {i.key.target for i in window.scene.connection_items()} == {"Shop Agent"}
    window.undo_stack.undo()
    assert ("Model", "ai_languageModel", "AI Agent") in links_of(window)


def test_renaming_a_source_moves_its_connection_key(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    assert window.rename_node("Model", "Scripted Model")
    assert "Scripted Model" in window.document.connections and "Model" not in window.document.connections
    assert list(window.document.connections).index("Scripted Model") == 1


def test_a_taken_name_is_refused_in_place(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["Calculator"])
    name = window.inspector.name_edit
    window.activateWindow()
    name.setFocus()
    qtbot.waitUntil(name.hasFocus)
    name.selectAll()
    qtbot.keyClicks(name, "Simple Memory")
    qtbot.keyClick(name, Qt.Key.Key_Return)
    assert window.document.has_node("Calculator")
    assert 'A node named "Simple Memory" exists already' in window.statusBar().currentMessage()
    assert window.inspector.name_error.isVisible()
    assert "exists already" in window.inspector.name_error.text()
    assert window.undo_stack.count() == 0
