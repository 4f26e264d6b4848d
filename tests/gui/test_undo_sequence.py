"""Undo and redo: a long mixed sequence returns to the exact document, moves merge, macros."""

from __future__ import annotations

from PySide6.QtCore import QPointF

from engine.editing import Link

from .editor_support import (  # noqa: F401  (fixtures)
    EXAMPLE, centre, document_data, drag, editor_env, focus_canvas, make_window, palette_add,
)


def test_a_long_edit_sequence_undoes_and_redoes_exactly(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    start = document_data(window)
    stack = window.undo_stack

    calc = palette_add(qtbot, window, "Calculator")                       # add
    window.connect_nodes(calc, "ai_tool", "AI Agent")                     # connect
    window.move_nodes({calc: (580, 220)})                                 # move
    window.set_parameter("Model", ("replies", 1, "text"), "={{ $('AI Agent').item.json.output }}")
    window.rename_node("AI Agent", "Support Agent")                       # rename (expressions follow)
    assert "$('Support Agent')" in window.document.node("Model").parameters["replies"][1]["text"]
    window.set_parameter("Support Agent", ("options", "maxIterations"), 8)  # parameter
    window.unset_parameter("Support Agent", ("options", "systemMessage"))   # remove an option
    window.set_disabled(["Simple Memory"], True)                          # deactivate
    window.scene.select_names(["Model", "Simple Memory"])
    window.duplicate()                                                    # paste
    window.disconnect_link(Link("Calculator", "ai_tool", 0, "Support Agent", 0))  # disconnect
    window.scene.select_names(["When chat message received"])
    window.delete_selection()                                             # delete
    window.set_parameter("Model", ("replies", 0, "text"), "changed")
    end = document_data(window)
    assert end != start
    steps = stack.count()
    assert steps == 12

    for _ in range(steps):
        stack.undo()
    assert document_data(window) == start
    assert not window.isWindowModified()
    for _ in range(steps):
        stack.redo()
    assert document_data(window) == end
    for _ in range(steps):
        stack.undo()
    assert document_data(window) == start
    # the canvas reflects the document after all that
    assert sorted(i.name for i in window.scene.node_items()) == sorted(n.name for n in window.document.nodes)
    assert len(window.scene.connection_items()) == len(window.document.links())


def test_consecutive_moves_of_the_same_nodes_merge_into_one_step(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    item = window.canvas.node_item("Calculator")
    window.canvas.resetTransform()  # at 100 % a pixel is a scene unit
    window.canvas.centerOn(item)
    for _ in range(3):
        point = centre(item)
        drag(window.canvas, point, point + QPointF(20, 0))
    assert tuple(window.document.node("Calculator").position) == (500, 220)
    assert window.undo_stack.count() == 1
    window.undo_stack.undo()
    assert tuple(window.document.node("Calculator").position) == (440, 220)
    assert item.pos() == QPointF(440, 220)


def test_deleting_nodes_and_links_together_is_one_step(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    start = document_data(window)
    window.scene.select_names(["Model", "Calculator"])
    link = next(i for i in window.scene.connection_items() if i.key.source == "Simple Memory")
    window.scene.select_link(link.key, add=True)
    focus_canvas(qtbot, window)
    window.act_delete.trigger()
    assert not window.document.has_node("Model") and not window.document.links()[1:]
    assert window.undo_stack.count() == 1
    window.undo_stack.undo()
    assert document_data(window) == start
