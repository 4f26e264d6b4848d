"""Renders the main window with the example workflow offscreen, for a person to look at.

The PNG goes to $MINI_N8N_SCREENSHOT (or the test's temporary folder); the test checks that
the canvas really drew the workflow: node bodies, links and the grid differ from plain paper.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from gui import theme

from .editor_support import EXAMPLE, editor_env, make_window  # noqa: F401  (fixtures)


def test_screenshot_of_the_main_window_with_the_example(qtbot, make_window, tmp_path: Path) -> None:
    window = make_window(EXAMPLE)
    window.canvas.fit_to_view()
    window.scene.select_names(["AI Agent"])
    window.canvas.node_item("Calculator").set_run_state("success", 1, None)
    QApplication.processEvents()  # queued layout and selection updates, before grabbing
    image = window.grab().toImage()
    target = Path(os.environ.get("MINI_N8N_SCREENSHOT", tmp_path / "editor.png"))
    assert image.save(str(target))
    assert image.width() >= 1200 and image.height() >= 800

    canvas = window.canvas
    paper = theme.current().canvas
    origin = canvas.mapTo(window, canvas.rect().topLeft())

    def pixel_at(scene_x: float, scene_y: float) -> QColor:
        point = canvas.mapFromScene(scene_x, scene_y) + origin
        return QColor(image.pixel(point.x(), point.y()))

    agent = canvas.node_item("AI Agent")
    body = agent.mapToScene(agent.body_rect().center())
    assert pixel_at(body.x() + 60, body.y() + 25) == theme.current().node_fill  # inside the agent card
    trigger_port = canvas.node_item("When chat message received").port("out", "main").scenePos()
    colours = {pixel_at(trigger_port.x() + dx, trigger_port.y()).rgb() for dx in range(10, 120, 5)}
    assert any(c != paper.rgb() for c in colours)  # the main link is drawn
    assert len({QColor(image.pixel(x, y)).rgb() for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}) > 50
