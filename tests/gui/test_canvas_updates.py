"""The canvas updates only what an edit touched, and keeps items by the node's id."""

from __future__ import annotations

import pytest

from gui.canvas.node_item import NodeItem
from gui.canvas.sticky_item import StickyItem

from .editor_support import EXAMPLE, editor_env, make_window  # noqa: F401  (fixtures)


@pytest.fixture
def refreshes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the node items refreshed from the document, in order."""
    seen: list[str] = []
    original = NodeItem.refresh

    def counting(self: NodeItem, node) -> None:  # type: ignore[no-untyped-def]
        seen.append(node.name)
        original(self, node)

    monkeypatch.setattr(NodeItem, "refresh", counting)
    return seen


def test_a_move_refreshes_only_the_moved_node(make_window, refreshes: list[str]) -> None:
    window = make_window(EXAMPLE)
    refreshes.clear()
    window.move_nodes({"Calculator": (900, 700)})
    assert refreshes == ["Calculator"]
    assert window.canvas.node_item("Calculator").pos().x() == 900
    window.undo_stack.undo()
    assert refreshes == ["Calculator", "Calculator"]
    assert window.canvas.node_item("Calculator").pos().x() == window.document.node("Calculator").position[0]


def test_a_parameter_edit_refreshes_that_node_only(make_window, refreshes: list[str]) -> None:
    window = make_window(EXAMPLE)
    refreshes.clear()
    window.set_parameter("AI Agent", ("options", "maxIterations"), 3)
    assert refreshes == ["AI Agent"]


def test_items_are_keyed_by_node_id_and_survive_rename_undo_and_redo(make_window) -> None:
    window = make_window(EXAMPLE)
    item = window.canvas.node_item("Calculator")
    assert window.rename_node("Calculator", "Maths")
    assert window.canvas.node_item("Maths") is item and window.canvas.node_item("Calculator") is None
    window.undo_stack.undo()
    assert window.canvas.node_item("Calculator") is item
    window.undo_stack.redo()
    assert window.canvas.node_item("Maths") is item


def test_a_note_is_drawn_as_a_note_because_its_type_never_runs(make_window) -> None:
    window = make_window(EXAMPLE)
    note = window.canvas.node_item("About this workflow")
    assert isinstance(note, StickyItem)
    assert not window.registry.get(note.node.type).runnable
    assert all(isinstance(i, NodeItem) for i in window.scene.node_items() if i is not note)


def test_read_only_scene_refuses_moves_links_and_plus_handles(make_window) -> None:
    window = make_window(EXAMPLE)
    scene = window.scene
    agent = window.canvas.node_item("AI Agent")
    assert agent.plus_spots()  # a free Tool input at least
    scene.set_read_only(True)
    assert scene.read_only
    assert not agent.flags() & NodeItem.GraphicsItemFlag.ItemIsMovable
    assert agent.plus_spots() == []
    note = window.canvas.node_item("About this workflow")
    assert not note.flags() & NodeItem.GraphicsItemFlag.ItemIsMovable
    scene.set_read_only(False)
    assert agent.flags() & NodeItem.GraphicsItemFlag.ItemIsMovable and agent.plus_spots()


def test_a_notes_colour_is_picked_from_the_note_colours(make_window) -> None:
    from PySide6.QtWidgets import QComboBox

    window = make_window(EXAMPLE)
    window.scene.select_names(["About this workflow"])
    colour = window.inspector.builder.editors[("color",)]
    assert isinstance(colour, QComboBox) and colour.itemText(0) == "Yellow"
    window.scene.select_names(["AI Agent"])
    assert not any(isinstance(e, QComboBox) and e.itemText(0) == "Yellow" for e in window.inspector.builder.editors.values())


def test_a_read_only_view_takes_no_drops_and_no_nudges(qtbot, make_window) -> None:
    from PySide6.QtCore import Qt

    window = make_window(EXAMPLE)
    view = window.canvas
    view.set_read_only(True)
    assert view.read_only and not view.acceptDrops()
    window.scene.select_names(["Calculator"])
    view.setFocus()
    before = window.document.node("Calculator").position
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert window.document.node("Calculator").position == before and window.undo_stack.count() == 0
    view.set_read_only(False)
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert window.document.node("Calculator").position != before
