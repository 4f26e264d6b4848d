"""The canvas as a user handles it: zoom around the cursor, pan, select, disable, notes, status."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QGraphicsItem, QGraphicsView, QGraphicsScene

from .editor_support import (  # noqa: F401  (fixtures)
    EXAMPLE, drag, editor_env, focus_canvas, make_window, mouse,
)


def wheel(view, at: QPoint, delta: int) -> None:  # type: ignore[no-untyped-def]
    event = QWheelEvent(QPointF(at), QPointF(view.viewport().mapToGlobal(at)), QPoint(0, 0), QPoint(0, delta),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), event)


def test_performance_settings_of_the_canvas(make_window) -> None:
    window = make_window(EXAMPLE)
    view, scene = window.canvas, window.scene
    assert scene.itemIndexMethod() == QGraphicsScene.ItemIndexMethod.NoIndex
    assert not scene.sceneRect().isNull() and scene.sceneRect().width() >= 100_000
    assert view.cacheMode() & QGraphicsView.CacheModeFlag.CacheBackground
    assert view.viewportUpdateMode() == QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate
    assert all(i.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache for i in scene.node_items())


def test_items_mirror_the_document(make_window) -> None:
    window = make_window(EXAMPLE)
    assert sorted(i.name for i in window.scene.node_items()) == sorted(n.name for n in window.document.nodes)
    agent = window.canvas.node_item("AI Agent")
    bottom = [p.label for p in agent.ports if p.side == "bottom"]
    # Fallback Model and Output Parser: only while their switches are on, as in n8n
    assert bottom == ["Chat Model*", "Memory", "Tool"]
    model = window.canvas.node_item("Model")
    assert [(p.side, p.conn_type) for p in model.ports] == [("top", "ai_languageModel")]
    assert [p.side for p in window.canvas.node_item("When chat message received").ports] == ["right"]


def test_wheel_zooms_around_the_cursor(make_window) -> None:
    window = make_window(EXAMPLE)
    view = window.canvas
    at = QPoint(200, 150)
    before = view.mapToScene(at)
    zoom = view.zoom()
    wheel(view, at, 240)
    assert view.zoom() > zoom * 1.3
    after = view.mapToScene(at)
    assert abs(after.x() - before.x()) < 2 and abs(after.y() - before.y()) < 2


def test_background_drag_pans_and_shift_drag_selects(make_window) -> None:
    window = make_window(EXAMPLE)
    view = window.canvas
    view.resetTransform()
    view.centerOn(QPointF(300, 600))  # empty canvas below the nodes
    empty = view.mapFromScene(QPointF(300, 600))
    visible = view.visible_scene_rect()
    mouse(view, QEvent.Type.MouseButtonPress, empty, Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton)
    for step in range(1, 5):
        mouse(view, QEvent.Type.MouseMove, empty - QPoint(30, 20) * step, Qt.MouseButton.NoButton, Qt.MouseButton.LeftButton)
    mouse(view, QEvent.Type.MouseButtonRelease, empty - QPoint(120, 80), Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton)
    moved = view.visible_scene_rect()
    assert abs((moved.x() - visible.x()) - 120) < 3 and abs((moved.y() - visible.y()) - 80) < 3
    assert window.undo_stack.count() == 0
    view.fit_to_view()
    memory, calc = view.node_item("Simple Memory"), view.node_item("Calculator")
    start = memory.pos() + QPointF(-30, 150)  # empty canvas below-left of Simple Memory
    end = calc.pos() + QPointF(110, -10)  # up-right of Calculator
    assert view.itemAt(view.mapFromScene(start)) is None and view.itemAt(view.mapFromScene(end)) is None
    drag(view, start, end, modifiers=Qt.KeyboardModifier.ShiftModifier)
    assert set(window.scene.selected_names()) == {"Simple Memory", "Calculator"}


def test_ctrl_a_selects_all_and_delete_removes(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    focus_canvas(qtbot, window)
    qtbot.keyClick(window.canvas, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert len(window.scene.selected_names()) == len(window.document.nodes)
    qtbot.keyClick(window.canvas, Qt.Key.Key_Delete)
    assert window.document.nodes == [] and window.document.links() == []
    assert window.scene.node_items() == [] and window.scene.connection_items() == []


def test_typing_on_the_canvas_searches_the_palette(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    focus_canvas(qtbot, window)
    qtbot.keyClicks(window.canvas, "c")
    qtbot.keyClicks(window.palette_panel.search, "alc")
    assert window.palette_panel.search.text() == "calc"
    assert window.palette_panel.visible_type_ids() == ["@n8n/n8n-nodes-langchain.toolCalculator"]
    qtbot.keyClick(window.palette_panel.search, Qt.Key.Key_Return)
    assert window.document.has_node("Calculator1")
    assert window.palette_panel.search.text() == "" and len(window.palette_panel.visible_type_ids()) > 5


def test_disable_draws_greyed_and_is_undoable(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["Calculator"])
    focus_canvas(qtbot, window)
    qtbot.keyClick(window.canvas, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.document.node("Calculator").disabled is True
    assert window.canvas.node_item("Calculator").disabled
    window.undo_stack.undo()
    assert "disabled" not in window.document.node("Calculator").model_fields_set


def test_copy_paste_and_duplicate_give_unique_names(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["Model", "AI Agent"])
    focus_canvas(qtbot, window)
    qtbot.keyClick(window.canvas, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(window.canvas, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert set(window.scene.selected_names()) == {"Model1", "AI Agent1"}
    assert ("Model1", "ai_languageModel", 0) in [(s, c, i) for s, c, i, t in window.document.links() if t.node == "AI Agent1"]
    qtbot.keyClick(window.canvas, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    assert set(window.scene.selected_names()) == {"Model2", "AI Agent2"}
    ids = [n.id for n in window.document.nodes]
    assert len(set(ids)) == len(ids)


def test_run_state_and_breakpoint_contract(make_window) -> None:
    window = make_window(EXAMPLE)
    item = window.canvas.node_item("Calculator")
    item.set_run_state("error", 2, "Division by zero")
    assert (item.status, item.runs) == ("error", 2) and "Division by zero" in item.toolTip()
    item.set_breakpoint(True)
    assert item.breakpoint
    item.set_run_state(None, 0, None)
    assert "Division" not in item.toolTip()


def test_sticky_note_resizes_with_its_corner_as_one_step(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    note = window.canvas.node_item("About this workflow")
    window.canvas.resetTransform()
    window.canvas.centerOn(note)
    corner = note.mapToScene(QPointF(note.width - 4, note.height - 4))
    drag(window.canvas, corner, corner + QPointF(60, 40))
    params = window.document.node("About this workflow").parameters
    assert (params["width"], params["height"]) == (480, 220)
    assert note.width == 480 and window.undo_stack.count() == 1
    assert "Scripted calculator agent" in note.doc.toPlainText()  # markdown heading rendered as text
    window.undo_stack.undo()
    assert note.width == 420


def test_agent_without_a_model_is_marked(make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["Model"])
    window.delete_selection()
    agent = window.canvas.node_item("AI Agent")
    assert agent.problem == 'Node "AI Agent" needs a Chat Model connected'
    window.undo_stack.undo()
    assert agent.problem is None


def test_arrow_keys_nudge_the_selection_as_one_merged_step(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["Calculator", "Simple Memory"])
    focus_canvas(qtbot, window)
    qtbot.keyClick(window.canvas, Qt.Key.Key_Right)
    qtbot.keyClick(window.canvas, Qt.Key.Key_Right)
    qtbot.keyClick(window.canvas, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    assert tuple(window.document.node("Calculator").position) == (460, 270)
    assert tuple(window.document.node("Simple Memory").position) == (320, 270)
    assert window.undo_stack.count() == 1


def test_a_new_sticky_note_shows_the_default_text(qtbot, make_window) -> None:
    window = make_window()
    name = window.add_node_at_centre("n8n-nodes-base.stickyNote")
    note = window.canvas.node_item(name)
    assert "I'm a note" in note.doc.toPlainText()
    assert (note.width, note.height) == (240, 160)


def test_dragged_nodes_snap_to_the_grid_and_alt_places_freely(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    view = window.canvas
    view.resetTransform()
    item = view.node_item("Calculator")
    view.centerOn(item)
    start = item.mapToScene(item.body_rect().center())
    drag(view, start, start + QPointF(27, 13))
    assert tuple(window.document.node("Calculator").position) == (460, 240)
    start = item.mapToScene(item.body_rect().center())
    drag(view, start, start + QPointF(3, 2))  # too small a drag: snaps back, nothing to undo
    assert item.pos() == QPointF(460, 240) and window.undo_stack.count() == 1
    drag(view, start, start + QPointF(7, 3), modifiers=Qt.KeyboardModifier.AltModifier)
    assert tuple(window.document.node("Calculator").position) == (467, 243)


def test_a_new_document_after_zooming_far_out_draws_its_nodes_in_full(make_window) -> None:
    """Fitting an empty canvas puts it back at 100 %: the far-out drawing (batched shapes, items
    transparent) must not stay on for the nodes added next."""
    window = make_window(EXAMPLE)
    view = window.canvas
    view.set_zoom(0.2 / view.zoom())
    assert window.scene.far
    window.new_document()
    assert view.zoom() == 1.0 and not window.scene.far
    name = window.add_node_at_centre("n8n-nodes-base.set")
    assert name is not None
    item = view.node_item(name)
    assert item is not None and item.opacity() == 1.0
