"""Build the example workflow as a user would (palette, ports, inspector), save, reopen, compare."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QFileDialog

from engine.registry import builtin_registry
from engine.workflow import load_workflow

from .editor_support import (  # noqa: F401  (fixtures)
    EXAMPLE, centre, click, connect_by_drag, document_data, drag, editor_env, make_window, palette_add,
)


def move_node(window, name: str, top_left: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    item = window.canvas.node_item(name)
    start = centre(item)
    delta = QPointF(top_left[0], top_left[1]) - item.pos()
    window.canvas.centerOn(start + delta / 2)
    drag(window.canvas, start, start + delta)


def select(window, name: str) -> None:  # type: ignore[no-untyped-def]
    window.canvas.centerOn(window.canvas.node_item(name))
    click(window.canvas, centre(window.canvas.node_item(name)))
    assert window.scene.selected_names() == [name]


def editors(window):  # type: ignore[no-untyped-def]
    return window.inspector.builder.editors


def type_into(qtbot, widget, text: str, enter: bool = False) -> None:  # type: ignore[no-untyped-def]
    """Focus a field, replace its text by typing, then Enter or Tab away (which commits it)."""
    widget.window().activateWindow()
    qtbot.waitUntil(widget.isVisible)
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus)
    widget.selectAll()
    qtbot.keyClicks(widget, text)
    qtbot.keyClick(widget, Qt.Key.Key_Return if enter else Qt.Key.Key_Tab)


def semantic(workflow) -> dict:  # type: ignore[no-untyped-def]
    """Node names, types, versions, validated parameters and links, ignoring ids and notes."""
    registry = builtin_registry()
    nodes = {
        n.name: (n.type, float(n.typeVersion), registry.get(n.type).Params.model_validate(n.parameters).model_dump())
        for n in workflow.nodes if n.type != "n8n-nodes-base.stickyNote"
    }
    links = sorted((s, c, i, t.node, t.type, t.index) for s, c, i, t in workflow.links())
    return {"nodes": nodes, "links": links}


def test_build_the_example_through_the_gui_save_and_reopen(qtbot, make_window, tmp_path: Path, monkeypatch) -> None:
    window = make_window()
    trigger = palette_add(qtbot, window, "Chat Trigger")
    agent = palette_add(qtbot, window, "AI Agent")
    model = palette_add(qtbot, window, "Scripted Chat Model")
    memory = palette_add(qtbot, window, "Simple Memory")
    calculator = palette_add(qtbot, window, "Calculator")
    assert (trigger, agent, memory, calculator) == ("When chat message received", "AI Agent", "Simple Memory", "Calculator")

    for name, spot in ((model, (160, 220)), (memory, (300, 220)), (calculator, (440, 220)), (trigger, (0, 0)),
                       (agent, (260, 0))):
        move_node(window, name, spot)
        assert tuple(window.document.node(name).position) == spot

    connect_by_drag(window, trigger, "main", agent)
    connect_by_drag(window, model, "ai_languageModel", agent)
    connect_by_drag(window, memory, "ai_memory", agent)
    connect_by_drag(window, calculator, "ai_tool", agent)
    assert len(window.document.links()) == 4
    assert len(window.scene.connection_items()) == 4

    # the model: renamed, two scripted replies (a calculator call, then the answer)
    select(window, model)
    type_into(qtbot, window.inspector.name_edit, "Model", enter=True)
    assert window.document.has_node("Model") and not window.document.has_node(model)
    qtbot.mouseClick(editors(window)[("replies", "+")], Qt.MouseButton.LeftButton)
    qtbot.mouseClick(editors(window)[("replies", "+")], Qt.MouseButton.LeftButton)
    qtbot.mouseClick(editors(window)[("replies", 0, "toolCalls", "+")], Qt.MouseButton.LeftButton)
    type_into(qtbot, editors(window)[("replies", 0, "toolCalls", 0, "name")], "Calculator", enter=True)
    type_into(qtbot, editors(window)[("replies", 0, "toolCalls", 0, "args")], '{"input": "17 * 25"}')
    type_into(qtbot, editors(window)[("replies", 1, "text")], "17 shirts at 25 dollars each cost 425 dollars.")

    # the agent: two options added with "Add option", then filled in
    select(window, agent)
    menu = editors(window)[("options", "+")].menu()
    next(a for a in menu.actions() if a.text() == "System Message").trigger()
    menu = editors(window)[("options", "+")].menu()
    next(a for a in menu.actions() if a.text() == "Max Iterations").trigger()
    type_into(qtbot, editors(window)[("options", "systemMessage")],
              "You are a helpful assistant. Use the calculator for arithmetic.")
    editors(window)[("options", "maxIterations")].setValue(5)
    assert window.inspector.errors() == {}

    target = tmp_path / "built.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    window.act_save.trigger()
    assert target.exists() and not window.isWindowModified()
    assert window.windowTitle().startswith("built.json")

    fresh = make_window(target)
    assert document_data(fresh) == document_data(window)
    built, example = semantic(fresh.document), semantic(load_workflow(EXAMPLE))
    for name in example["nodes"]:
        assert built["nodes"].get(name) == example["nodes"][name], name
    assert built == example
    assert json.loads(target.read_text())["connections"]["Model"]["ai_languageModel"][0][0]["node"] == "AI Agent"
