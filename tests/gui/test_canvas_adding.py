"""Adding nodes as in n8n: "+" on free ports and in links, placed on free canvas, in view."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt

from gui.canvas.adding import LABEL_ROOM
from gui.canvas.node_item import NodeItem

from .editor_support import EXAMPLE, click, editor_env, make_window, mouse  # noqa: F401  (fixtures)


def body(item: NodeItem) -> QRectF:
    return QRectF(item.pos().x(), item.pos().y(), item.width, item.height + LABEL_ROOM)


def assert_alone(window, name: str) -> None:  # type: ignore[no-untyped-def]
    """The node covers no other node, and the view shows it whole."""
    new = window.canvas.node_item(name)
    for other in window.scene.node_items():
        if other is not new and isinstance(other, NodeItem):
            assert not body(new).intersects(body(other)), f"{name} lands on {other.name}"
    assert window.canvas.visible_scene_rect().contains(new.sceneBoundingRect())


def links(window) -> set[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    return {(s, c, t.node) for s, c, _i, t in window.document.links()}


def plus_of(window, node: str, conn_type: str, direction: str) -> QPointF:  # type: ignore[no-untyped-def]
    item = window.canvas.node_item(node)
    for port, centre in item.plus_spots():
        if port.conn_type == conn_type and port.direction == direction:
            return item.mapToScene(centre)
    raise AssertionError(f"{node} shows no + on its {direction} {conn_type} port")


def choose(qtbot, window, display_name: str) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: window.adding.type_menu is not None and window.adding.type_menu.isVisible())
    action = window.adding.type_menu.action_for(display_name)
    assert action is not None, [a.text() for a in window.adding.type_menu.actions()]
    action.trigger()
    window.adding.type_menu.close()


def test_a_double_clicked_node_never_lands_on_the_wide_agent_and_is_shown(make_window) -> None:
    window = make_window(EXAMPLE)
    view = window.canvas
    agent = window.canvas.node_item("AI Agent")
    view.resetTransform()
    view.centerOn(agent.pos() + QPointF(120, 50))  # the middle of the view is on the agent
    window.scene.clearSelection()
    added = window.add_node_at_centre("n8n-nodes-base.set")
    assert added is not None
    assert_alone(window, added)
    view.centerOn(QPointF(5000, 5000))  # far away: the view comes back to the new node
    second = window.add_node("n8n-nodes-base.set", (agent.pos().x(), agent.pos().y()))
    assert second is not None
    assert_alone(window, second)


def test_plus_on_the_agents_tool_input_adds_a_connected_tool(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    view = window.canvas
    view.resetTransform()
    plus = plus_of(window, "AI Agent", "ai_tool", "in")
    view.centerOn(plus)
    # the connected Chat Model input has no "+" (the Fallback Model input beside it is free)
    assert not any(p.conn_type == "ai_languageModel" and p.index == 0
                   for p, _c in window.canvas.node_item("AI Agent").plus_spots())
    click(view, plus)
    choose(qtbot, window, "Calculator")
    assert ("Calculator1", "ai_tool", "AI Agent") in links(window)
    assert_alone(window, "Calculator1")
    assert window.scene.selected_names() == ["Calculator1"]
    window.undo_stack.undo()  # one step
    assert not window.document.has_node("Calculator1")


def test_plus_on_a_free_main_output_adds_the_next_node(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    view = window.canvas
    view.resetTransform()
    plus = plus_of(window, "AI Agent", "main", "out")
    view.centerOn(plus)
    click(view, plus)
    choose(qtbot, window, "Edit Fields (Set)")
    added = next(t for s, c, t in links(window) if s == "AI Agent" and c == "main")
    assert_alone(window, added)
    assert window.document.node(added).position[0] > window.document.node("AI Agent").position[0] + 240
    # the output is used now: its + is gone, the new node's own output has one
    assert not any(p.direction == "out" for p, _c in window.canvas.node_item("AI Agent").plus_spots())
    assert plus_of(window, added, "main", "out")


def test_plus_in_the_middle_of_a_link_inserts_a_node(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    view = window.canvas
    view.resetTransform()
    link = next(l for l in window.scene.connection_items() if l.key.source == "When chat message received")
    middle = link.path_point(0.5)
    view.centerOn(middle)
    mouse(view, QEvent.Type.MouseMove, middle, Qt.MouseButton.NoButton, Qt.MouseButton.NoButton)
    qtbot.waitUntil(lambda: link.insert_handle is not None and link.insert_handle.isVisible())
    click(view, link.insert_handle.scenePos())
    choose(qtbot, window, "Edit Fields (Set)")
    new = "Edit Fields"
    assert ("When chat message received", "main", new) in links(window)
    assert (new, "main", "AI Agent") in links(window)
    assert ("When chat message received", "main", "AI Agent") not in links(window)
    assert_alone(window, new)
    window.undo_stack.undo()
    assert ("When chat message received", "main", "AI Agent") in links(window)
    assert not window.document.has_node(new)


def test_a_tool_added_while_a_tool_is_selected_goes_to_its_agent(make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["Calculator"])
    added = window.add_node_at_centre("@n8n/n8n-nodes-langchain.toolCalculator")
    assert (added, "ai_tool", "AI Agent") in links(window)
    assert_alone(window, added)
