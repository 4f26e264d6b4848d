"""A node's ports follow its parameters and settings as they are edited: the inspector's On Error
choice adds (and Undo removes) the error output; a Switch's outputs follow its rules."""

from __future__ import annotations

import json
from pathlib import Path

from engine.connection_types import MAIN
from tests.builders import MANUAL_TRIGGER, link, node

from .editor_support import editor_env, make_window  # noqa: F401  (fixtures)

SWITCH = "n8n-nodes-base.switch"


def _file(tmp_path: Path) -> Path:
    rules = {"values": [{"outputKey": "small", "conditions": {}}, {"outputKey": "big", "conditions": {}}]}
    connections: dict = {}
    link(connections, "Start", "Code")
    link(connections, "Code", "Switch")
    nodes = [node("Start", MANUAL_TRIGGER), node("Code", "n8n-nodes-base.code", {"jsCode": "return $input.all();"}),
             node("Switch", SWITCH, {"rules": rules}, typeVersion=3.2)]
    path = tmp_path / "ports.json"
    path.write_text(json.dumps({"name": "ports", "nodes": nodes, "connections": connections}))
    return path


def out_labels(window, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    item = window.canvas.node_item(name)
    return [port.label for port in sorted((p for p in item.ports if p.direction == "out" and p.conn_type == MAIN),
                                          key=lambda p: p.index)]


def test_choosing_continue_using_error_output_adds_the_error_port(make_window, tmp_path: Path) -> None:
    window = make_window(_file(tmp_path))
    window.scene.select_names(["Code"])
    form = window.inspector.settings
    assert form is not None and form.on_error.currentText() == "Stop Workflow"
    assert out_labels(window, "Code") == [""]

    form.on_error.setCurrentIndex(2)
    form.on_error.activated.emit(2)
    assert window.document.node("Code").model_extra["onError"] == "continueErrorOutput"
    assert out_labels(window, "Code") == ["Success", "Error"]
    assert window.inspector.settings is not None
    assert window.inspector.settings.on_error.currentText() == "Continue (using error output)"
    assert window.canvas.node_item("Switch") in {c.target.node_item for c in window.canvas.node_item("Code").connections}

    window.undo_stack.undo()
    assert "onError" not in (window.document.node("Code").model_extra or {})
    assert out_labels(window, "Code") == [""]


def test_retry_on_fail_shows_its_tries_and_wait(make_window, tmp_path: Path) -> None:
    window = make_window(_file(tmp_path))
    window.scene.select_names(["Code"])
    form = window.inspector.settings
    assert form is not None and not form.tries_row.isVisibleTo(form)
    form.retry.setChecked(True)
    form = window.inspector.settings
    assert form is not None and form.retry.isChecked() and form.tries_row.isVisibleTo(form)
    assert (form.tries.value(), form.wait.value()) == (3, 1000)
    form.tries.setValue(5)
    extra = window.document.node("Code").model_extra
    assert extra["retryOnFail"] is True and extra["maxTries"] == 5


def test_a_switchs_outputs_follow_its_rules_as_they_are_edited(make_window, tmp_path: Path) -> None:
    window = make_window(_file(tmp_path))
    assert out_labels(window, "Switch") == ["small", "big"]
    rules = window.document.node("Switch").parameters["rules"]["values"]
    window.set_parameter("Switch", ("rules", "values"), [*rules, {"outputKey": "huge", "conditions": {}}])
    assert out_labels(window, "Switch") == ["small", "big", "huge"]
    window.set_parameter("Switch", ("rules", "values", 0, "outputKey"), "tiny")
    assert out_labels(window, "Switch") == ["tiny", "big", "huge"]
    window.set_parameter("Switch", ("options",), {"fallbackOutput": "extra"})
    assert out_labels(window, "Switch") == ["tiny", "big", "huge", "Fallback"]
    window.undo_stack.undo()
    window.undo_stack.undo()
    assert out_labels(window, "Switch") == ["small", "big", "huge"]


def test_the_labels_under_an_agent_with_every_input_do_not_touch(make_window, tmp_path: Path) -> None:
    from PySide6.QtGui import QFontMetricsF

    from gui import theme
    from gui.canvas.node_item import PORT_LABEL_POINTS

    agent = node("AI Agent", "@n8n/n8n-nodes-langchain.agent",
                 {"hasOutputParser": True, "needsFallback": True, "promptType": "define", "text": "hi"}, typeVersion=3)
    path = tmp_path / "agent.json"
    path.write_text(json.dumps({"name": "agent", "nodes": [agent], "connections": {}}))
    window = make_window(path)
    item = window.canvas.node_item("AI Agent")
    fm = QFontMetricsF(theme.ui_font(PORT_LABEL_POINTS))
    bottom = sorted((p for p in item.ports if p.side == "bottom"), key=lambda p: p.x())
    assert [p.label for p in bottom] == ["Chat Model*", "Fallback Model", "Memory", "Tool", "Output Parser"]
    spans = [(p.x() - fm.horizontalAdvance(p.label) / 2, p.x() + fm.horizontalAdvance(p.label) / 2) for p in bottom]
    assert all(right + 4 <= next_left for (_l, right), (next_left, _r) in zip(spans, spans[1:]))
    assert spans[0][0] >= 0 and spans[-1][1] <= item.width  # all under the node
