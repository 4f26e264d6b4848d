"""What the canvas shows: selection unlike any state, breakpoints inside nodes, icons, names and
links far out, and an overview map that stays out of the way."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage

from gui import theme
from gui.canvas.minimap import BUTTON_SIZE, MAP_SIZE

from .editor_support import EXAMPLE, editor_env, make_window, mouse  # noqa: F401  (fixtures)


def reddish(colour: QColor) -> bool:
    return colour.red() > colour.green() + 60 and colour.red() > colour.blue() + 60


def grab(window) -> QImage:  # type: ignore[no-untyped-def]
    window.canvas.viewport().repaint()
    return window.canvas.viewport().grab().toImage()


def colour_distance(a: QColor, b: QColor) -> int:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue())


def test_the_selection_ring_is_no_state_colour() -> None:
    for current in (theme.LIGHT, theme.DARK):
        for state in ("error", "paused", "running", "success"):
            assert colour_distance(current.selection, current.status_colour(state)) > 120, state


def test_a_selected_node_is_not_outlined_in_red(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    view = window.canvas
    view.resetTransform()
    item = window.canvas.node_item("Calculator")
    view.centerOn(item)
    window.scene.select_names(["Calculator"])
    image = grab(window)
    ring = [view.mapFromScene(item.mapToScene(QPointF(x, y))) for x, y in ((40, 0.5), (0.5, 40), (40, 79.5))]
    assert not any(reddish(image.pixelColor(p)) for p in ring)
    assert any(colour_distance(image.pixelColor(p), theme.current().node_border) > 40 for p in ring)  # it shows


def test_breakpoint_dots_sit_inside_every_kind_of_node(make_window) -> None:
    window = make_window(EXAMPLE)
    for name in ("AI Agent", "Calculator", "When chat message received"):
        item = window.canvas.node_item(name)
        centre = item.breakpoint_centre()
        dot = QRectF(centre.x() - 7, centre.y() - 7, 14, 14)  # the dot with its rim
        assert item.body_path().contains(dot), name


def test_far_out_nodes_show_icons_names_and_links(make_window) -> None:
    window = make_window(EXAMPLE)
    view = window.canvas
    view.resetTransform()
    view.set_zoom(0.3)
    assert window.scene.far
    view.centerOn(window.canvas.node_item("AI Agent"))
    image = grab(window)
    t = theme.current()
    agent = window.canvas.node_item("AI Agent")
    # the icon: colours other than the fill and outline inside the node's left part
    icon = view.mapFromScene(agent.mapToScene(QRectF(22, 30, 40, 40))).boundingRect()
    colours = {image.pixelColor(x, y).rgb() for x in range(icon.left(), icon.right()) for y in range(icon.top(), icon.bottom())}
    assert len(colours) > 6
    # the name, under the node: text-coloured pixels
    below = view.mapFromScene(agent.mapToScene(QRectF(0, agent.height + 4, agent.width, 40))).boundingRect()
    assert any(colour_distance(image.pixelColor(x, y), t.node_text) < 120
               for x in range(below.left(), below.right()) for y in range(below.top(), below.bottom()))
    # the link from the trigger: drawn, not lost in the canvas colour
    link = next(l for l in window.scene.connection_items() if l.key.source == "When chat message received")
    middle = view.mapFromScene(link.path_point(0.5))
    near = [image.pixelColor(middle + QPoint(dx, dy)) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
    assert any(colour_distance(c, t.canvas) > 60 for c in near)


def test_the_overview_map_is_folded_opens_on_demand_and_while_panning(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    view = window.canvas
    view.resetTransform()
    view.centerOn(QPointF(2000, 2000))  # the workflow out of sight: the overview is offered
    view.update_minimap()
    minimap = view.minimap
    assert minimap.isVisible() and minimap.size() == BUTTON_SIZE  # folded: a small button
    qtbot.mouseClick(minimap, Qt.MouseButton.LeftButton, pos=QPoint(15, 15))
    assert minimap.size() == MAP_SIZE and minimap.pinned
    qtbot.mouseClick(minimap, Qt.MouseButton.LeftButton, pos=minimap._toggle_rect().center().toPoint())
    assert minimap.size() == BUTTON_SIZE
    # dragging the background pans: the map opens for a moment, then folds again
    start = QPoint(300, 300)
    mouse(view, QEvent.Type.MouseButtonPress, start, Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton)
    mouse(view, QEvent.Type.MouseMove, start + QPoint(40, 10), Qt.MouseButton.NoButton, Qt.MouseButton.LeftButton)
    mouse(view, QEvent.Type.MouseButtonRelease, start + QPoint(40, 10), Qt.MouseButton.LeftButton,
          Qt.MouseButton.NoButton)
    assert minimap.size() == MAP_SIZE
    qtbot.waitUntil(lambda: minimap.size() == BUTTON_SIZE, timeout=5000)


def test_far_out_names_of_close_nodes_do_not_run_into_each_other(make_window) -> None:
    from gui.canvas.far_drawing import label_rooms

    window = make_window(EXAMPLE)
    window.move_nodes({"Simple Memory": (250, 220), "Calculator": (340, 220)})  # circles 90 apart
    subs = [window.canvas.node_item(n) for n in ("Model", "Simple Memory", "Calculator")]
    rooms = {item.name: (item.pos().x() + item.width / 2, room) for item, room in label_rooms(subs, 200.0)}
    ordered = sorted(rooms.values())
    for (c1, r1), (c2, r2) in zip(ordered, ordered[1:]):
        assert c1 + r1 / 2 <= c2 - r2 / 2, rooms
    assert all(room >= 80 for _c, room in rooms.values())  # never narrower than the node
