"""Dragging connections between ports: compatible ports light up, refused drops say why."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, Qt

from .editor_support import (  # noqa: F401  (fixtures)
    EXAMPLE, click, focus_canvas, connect_by_drag, drag, editor_env, make_window, mouse, palette_add, port_pos,
)


def test_compatible_ports_light_up_while_dragging(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    extra = palette_add(qtbot, window, "Calculator")
    view = window.canvas
    view.centerOn(view.node_item("AI Agent"))
    start = port_pos(window, extra, "out", "ai_tool")
    mouse(view, QEvent.Type.MouseButtonPress, start, Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton)
    mouse(view, QEvent.Type.MouseMove, start + QPointF(0, -30), Qt.MouseButton.NoButton, Qt.MouseButton.LeftButton)
    agent = view.node_item("AI Agent")
    states = {p.conn_type: p.highlight for p in agent.ports if p.direction == "in"}
    assert states["ai_tool"] == "compatible"
    assert states["ai_languageModel"] is None and states["ai_memory"] is None and states["main"] is None
    mouse(view, QEvent.Type.MouseButtonRelease, start + QPointF(0, -30), Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton)
    assert all(p.highlight is None for p in agent.ports)


def test_a_second_chat_model_is_refused_with_the_rule(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    second = palette_add(qtbot, window, "Scripted Chat Model")
    before = window.document.model_dump()
    connect_by_drag(window, second, "ai_languageModel", "AI Agent")
    assert window.document.model_dump() == before
    assert window.statusBar().currentMessage() == (
        'Cannot connect: "AI Agent" takes only 1 Chat Model; "Model" is connected already')
    assert window.undo_stack.count() == 1  # only the add


def test_a_port_of_another_type_refuses_the_drop(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    tool = palette_add(qtbot, window, "Calculator")
    window.canvas.centerOn(window.canvas.node_item("AI Agent"))
    drag(window.canvas, port_pos(window, tool, "out", "ai_tool"), port_pos(window, "AI Agent", "in", "ai_memory"))
    assert "a Tool connection does not fit the Memory port" in window.statusBar().currentMessage()
    assert not any(s == tool for s, *_ in window.document.links())


def test_a_main_output_cannot_go_into_a_trigger_or_itself(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    view = window.canvas
    view.resetTransform()
    view.centerOn(view.node_item("AI Agent"))
    agent = view.node_item("AI Agent")
    drag(view, port_pos(window, "AI Agent", "out", "main"), agent.mapToScene(agent.body_rect().center()))
    assert window.statusBar().currentMessage() == "Cannot connect: A node cannot be connected to itself"
    trigger = view.node_item("When chat message received")
    drag(view, port_pos(window, "AI Agent", "out", "main"), trigger.mapToScene(trigger.body_rect().center()))
    assert window.statusBar().currentMessage() == 'Cannot connect: "When chat message received" has no main input'
    assert window.undo_stack.count() == 0


def test_dropping_on_a_node_body_uses_its_matching_port(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    tool = palette_add(qtbot, window, "Calculator")
    agent = window.canvas.node_item("AI Agent")
    window.canvas.centerOn(agent)
    drag(window.canvas, port_pos(window, tool, "out", "ai_tool"), agent.mapToScene(agent.body_rect().center()))
    assert (tool, "ai_tool", 0) in [(s, c, i) for s, c, i, t in window.document.links() if t.node == "AI Agent"]


def test_select_a_connection_and_delete_it_then_undo(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    links = {item.key: item for item in window.scene.connection_items()}
    memory_link = next(k for k in links if k.source == "Simple Memory")
    item = links[memory_link]
    point = item.path_point(0.5)
    window.canvas.centerOn(point)
    click(window.canvas, point)
    assert window.scene.selected_links() == [memory_link]
    focus_canvas(qtbot, window)
    qtbot.keyClick(window.canvas, Qt.Key.Key_Delete)
    assert not any(s == "Simple Memory" for s, *_ in window.document.links())
    assert memory_link not in {i.key for i in window.scene.connection_items()}
    window.undo_stack.undo()
    assert any(s == "Simple Memory" for s, *_ in window.document.links())


def test_adding_from_the_palette_wires_the_new_node_to_the_selected_one(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["AI Agent"])
    window.palette_panel.add_requested.emit("@n8n/n8n-nodes-langchain.toolCalculator")
    assert ("Calculator1", "ai_tool", "AI Agent") in {(s, c, t.node) for s, c, _i, t in window.document.links()}
    tool = window.document.node("Calculator1")
    agent = window.document.node("AI Agent")
    assert tool.position[1] > agent.position[1] + 100  # under the agent, connecting upward
    window.scene.select_names(["AI Agent"])
    window.palette_panel.add_requested.emit("n8n-nodes-base.set")
    assert ("AI Agent", "main", "Edit Fields") in {(s, c, t.node) for s, c, _i, t in window.document.links()}
    assert window.document.node("Edit Fields").position[0] > agent.position[0] + 240
    assert window.undo_stack.count() == 2  # each add-and-connect is one step
    window.undo_stack.undo()
    window.undo_stack.undo()
    assert not window.document.has_node("Calculator1") and not window.document.has_node("Edit Fields")


def test_a_second_model_from_the_palette_is_added_but_not_wired(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["AI Agent"])
    window.palette_panel.add_requested.emit("mini-n8n.lmChatScripted")
    assert window.document.has_node("Scripted Chat Model")
    assert not any(s == "Scripted Chat Model" for s, *_ in window.document.links())
    assert window.statusBar().currentMessage() == (
        'Added "Scripted Chat Model", not connected: "AI Agent" takes only 1 Chat Model; "Model" is connected already')


def test_dragging_a_connected_input_picks_up_its_link(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    second = palette_add(qtbot, window, "AI Agent")
    window.move_nodes({second: (260, 500)})
    view = window.canvas
    view.resetTransform()
    view.centerOn(QPointF(360, 300))
    # move the memory from the first agent to the second
    drag(view, port_pos(window, "AI Agent", "in", "ai_memory"), port_pos(window, second, "in", "ai_memory"))
    links = {(s, c, t.node) for s, c, _i, t in window.document.links()}
    assert ("Simple Memory", "ai_memory", second) in links and ("Simple Memory", "ai_memory", "AI Agent") not in links
    assert window.undo_stack.count() == 3  # add, move, and the reconnection as one step
    # drop a picked-up link on empty canvas: it is removed
    drag(view, port_pos(window, "AI Agent", "in", "ai_tool"), QPointF(700, 420))
    assert not any(s == "Calculator" for s, *_ in window.document.links())
    window.undo_stack.undo()
    assert ("Calculator", "ai_tool", "AI Agent") in {(s, c, t.node) for s, c, _i, t in window.document.links()}
    assert all(item.isVisible() for item in window.scene.connection_items())
