"""Pinning in the editor: pin a node's output from the Node data tab, the canvas marks it, the next
run uses it, unpin and undo; a typeVersion the type does not map is flagged on the canvas."""

from __future__ import annotations

import os
from pathlib import Path

from engine.workflow import parse_workflow
from tests.builders import MANUAL_TRIGGER, SET, link, node


def workflow():  # type: ignore[no-untyped-def]
    connections: dict = {}
    link(connections, "Start", "Edit Fields")
    link(connections, "Edit Fields", "Later")
    return parse_workflow({"name": "pins", "nodes": [
        node("Start", MANUAL_TRIGGER, position=[0, 0]),
        node("Edit Fields", SET, {"assignments": {"assignments": [{"name": "a", "value": "live", "type": "string"}]}},
             position=[250, 0]),
        node("Later", SET, {"assignments": {"assignments": [{"name": "b", "value": "={{ $json.a }}", "type": "string"}]}},
             typeVersion=3.9, position=[500, 0]),
    ], "connections": connections})


def run(qtbot, controller):  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as finished:
        controller.run_action.trigger()
    return finished.args[0]


def test_pin_from_node_data_marks_the_canvas_and_the_next_run_uses_it(run_window, qtbot, tmp_path: Path) -> None:
    window, controller = run_window(workflow())
    later = window.canvas.node_item("Later")
    assert later.version_note is not None and "typeVersion 3.9" in later.toolTip()
    assert run(qtbot, controller).status == "success"

    data = controller.output.node_data
    data.show_node("Edit Fields")
    assert data.pin_button.text() == "Pin this output" and data.pin_button.isEnabled()
    qtbot.mouseClick(data.pin_button, qtbot_left())
    assert window.document.pinData == {"Edit Fields": [{"json": {"a": "live"}}]}
    item = window.canvas.node_item("Edit Fields")
    assert item.pinned and "Pinned data" in item.toolTip()
    data.show_node("Edit Fields")
    assert data.pin_button.text() == "Unpin" and "pinned data" in data.title.text()
    if os.environ.get("MINI_N8N_SCREENSHOTS"):  # for looking at: light and dark
        shots = Path(os.environ["MINI_N8N_SCREENSHOTS"])
        controller.output.setCurrentWidget(data)
        window.grab().save(str(shots / "pinned-light.png"))
        from PySide6.QtWidgets import QApplication

        from gui import theme
        from tests.gui.test_canvas_theme import dark_palette

        light = QApplication.palette()
        try:
            QApplication.setPalette(dark_palette())
            qtbot.waitUntil(lambda: theme.current().dark)
            window.grab().save(str(shots / "pinned-dark.png"))
        finally:
            QApplication.setPalette(light)
            theme.manager().refresh()

    window.document.pinData["Edit Fields"][0]["json"]["a"] = "pinned"  # as if edited in the file
    assert run(qtbot, controller).status == "success"
    assert controller.bridge.state.run_data["Edit Fields"][0].metadata.get("pinned") is True
    assert controller.bridge.state.result == [{"json": {"b": "pinned"}, "pairedItem": {"item": 0}}]

    data.show_node("Edit Fields")
    qtbot.mouseClick(data.pin_button, qtbot_left())
    assert window.document.pinData == {} and not window.canvas.node_item("Edit Fields").pinned
    window.undo_stack.undo()
    assert "Edit Fields" in window.document.pinData and window.canvas.node_item("Edit Fields").pinned
    window.undo_stack.setClean()  # closing asks nothing


def qtbot_left():  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton
