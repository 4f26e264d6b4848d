"""The inspector: a form from the Params schema, invalid values marked in place, one undo step each."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QPlainTextEdit, QSpinBox, QToolButton

from .editor_support import EXAMPLE, editor_env, make_window  # noqa: F401  (fixtures)


def test_the_agent_form_has_the_schema_fields(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["AI Agent"])
    editors = window.inspector.builder.editors
    assert isinstance(editors[("promptType",)], QComboBox)
    assert [editors[("promptType",)].itemText(i) for i in range(2)] == ["auto", "define"]
    assert ("text",) not in editors  # promptType "auto": displayOptions show the prompt only for "define"
    assert isinstance(editors[("hasOutputParser",)], QCheckBox)
    spin = editors[("options", "maxIterations")]
    schema = window.registry.get("@n8n/n8n-nodes-langchain.agent").Params.model_json_schema()
    bounds = schema["$defs"]["AgentOptions"]["properties"]["maxIterations"]
    assert isinstance(spin, QSpinBox)
    assert (spin.minimum(), spin.maximum(), spin.value()) == (bounds["minimum"], bounds["maximum"], 5)
    # only the options that are set are shown; the others are offered by "Add option"
    assert ("options", "returnIntermediateSteps") not in editors
    offered = [a.text() for a in editors[("options", "+")].menu().actions()]
    assert offered == ["Return Intermediate Steps", "Enable Streaming", "Automatically Passthrough Binary Images",
                       "Batch Processing"]


def test_each_change_is_one_undo_step(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["AI Agent"])
    editors = window.inspector.builder.editors
    editors[("promptType",)].setCurrentIndex(1)
    editors[("promptType",)].activated.emit(1)
    assert window.document.node("AI Agent").parameters["promptType"] == "define"
    window.inspector.builder.editors[("hasOutputParser",)].setChecked(True)
    assert window.document.node("AI Agent").parameters["hasOutputParser"] is True
    assert window.undo_stack.count() == 2
    window.undo_stack.undo()
    assert "hasOutputParser" not in window.document.node("AI Agent").parameters
    assert window.inspector.builder.editors[("hasOutputParser",)].isChecked() is False


def test_removing_an_option_takes_it_out_of_the_document(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["AI Agent"])
    row = window.inspector.builder.rows[("options", "systemMessage")]
    button = next(b for b in row.findChildren(QToolButton) if b.objectName() == "removeButton")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert "systemMessage" not in window.document.node("AI Agent").parameters["options"]
    assert ("options", "systemMessage") not in window.inspector.builder.editors


def test_invalid_values_are_marked_in_place_with_the_reason(qtbot, make_window, tmp_path: Path) -> None:
    data = json.loads(EXAMPLE.read_text())
    agent = next(n for n in data["nodes"] if n["name"] == "AI Agent")
    agent["parameters"]["options"]["maxIterations"] = 0
    agent["parameters"]["promptType"] = "sometimes"
    path = tmp_path / "invalid.json"
    path.write_text(json.dumps(data))
    window = make_window(path)
    window.scene.select_names(["AI Agent"])
    errors = window.inspector.errors()
    assert "greater than or equal to 1" in errors[("options", "maxIterations")]
    assert "'auto' or 'define'" in errors[("promptType",)]
    assert window.inspector.builder.rows[("promptType",)].error.isVisibleTo(window.inspector)
    combo = window.inspector.builder.editors[("promptType",)]
    assert combo.currentText() == "sometimes (not a valid choice)"
    combo.activated.emit(0)
    assert ("promptType",) not in window.inspector.errors()


def test_bad_json_is_refused_in_place_and_not_applied(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["Model"])
    usage = window.inspector.builder.editors[("replies", 0, "usage")]
    window.activateWindow()
    usage.setFocus()
    qtbot.waitUntil(usage.hasFocus)
    qtbot.keyClicks(usage, '{"promptTokens": 12,')
    qtbot.keyClick(usage, Qt.Key.Key_Tab)
    assert "Not valid JSON" in window.inspector.errors()[("replies", 0, "usage")]
    assert "usage" not in window.document.node("Model").parameters["replies"][0]
    assert window.undo_stack.count() == 0


def test_sticky_note_colour_is_a_named_choice(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["About this workflow"])
    combo = window.inspector.builder.editors[("color",)]
    assert combo.currentText() == "Blue"
    combo.activated.emit(3)
    assert window.document.node("About this workflow").parameters["color"] == 4
    assert window.canvas.node_item("About this workflow").colour == 4


def test_credential_picker_lists_the_local_store(qtbot, make_window, editor_env: Path) -> None:
    from engine.credentials import FileCredentialStore

    from engine.connection_types import AI_LANGUAGE_MODEL, PortSpec
    from engine.node_type import NodeType
    from engine.registry import Registry
    from nodes import BUILTIN_NODE_TYPES

    class KeyedModel(NodeType):
        type = "test.keyedModel"
        display_name = "Keyed Model"
        group = "Models"
        inputs = ()
        outputs = (PortSpec(AI_LANGUAGE_MODEL),)
        credential_types = ("openAiApi",)

    FileCredentialStore(editor_env / "home" / "credentials.json").save("openAiApi", "Work key", {"apiKey": "sk-x"})
    window = make_window(registry=Registry([*BUILTIN_NODE_TYPES, KeyedModel]))
    name = window.add_node_at_centre("test.keyedModel")
    assert name is not None
    window.scene.select_names([name])
    combos = [c for c in window.inspector.findChildren(QComboBox) if c.itemText(0) == "— none —"]
    assert combos and "Work key" in [combos[0].itemText(i) for i in range(combos[0].count())]
    index = [combos[0].itemText(i) for i in range(combos[0].count())].index("Work key")
    combos[0].activated.emit(index)
    assert window.document.node(name).credentials["openAiApi"]["name"] == "Work key"
    window.undo_stack.undo()
    assert window.document.node(name).credentials is None


def test_saving_while_typing_in_a_field_keeps_the_text(qtbot, make_window, tmp_path: Path) -> None:
    window = make_window(EXAMPLE)
    window.scene.select_names(["AI Agent"])
    system = window.inspector.builder.editors[("options", "systemMessage")]
    window.activateWindow()
    system.setFocus()
    qtbot.waitUntil(system.hasFocus)
    system.selectAll()
    qtbot.keyClicks(system, "Answer in French.")
    qtbot.keyClick(system, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)  # Save, still in the field
    assert not window.isWindowModified()
    saved = json.loads(window.path.read_text())
    agent = next(n for n in saved["nodes"] if n["name"] == "AI Agent")
    assert agent["parameters"]["options"]["systemMessage"] == "Answer in French."


def test_every_node_type_gets_a_form_without_errors(qtbot, make_window) -> None:
    window = make_window()
    for node_type in window.registry.types():
        name = window.add_node(node_type.type, (0, 0))
        assert name is not None, node_type.type
        window.scene.select_names([name])
        assert window.inspector.name_edit.text() == name
        builder = window.inspector.builder
        assert builder is not None, node_type.type
        properties = builder.displayed(node_type.Params.model_json_schema(), ())  # what displayOptions show
        for key in properties:
            assert any(path[0] == key for path in builder.rows), (node_type.type, key)


def test_an_unset_choice_shows_the_default_and_choosing_it_unsets(qtbot, make_window, tmp_path: Path) -> None:
    """The MCP Client Tool's transport defaults by version: unset is '— default —', never a bogus value."""
    from tests.builders import agent_workflow

    wf = agent_workflow([{"text": "x"}], tools=[("MCP", "@n8n/n8n-nodes-langchain.mcpClientTool", {"endpointUrl": "http://x/mcp"})])
    path = tmp_path / "mcp.json"
    path.write_text(wf.to_json())
    window = make_window(path)
    window.scene.select_names(["MCP"])
    combo = window.inspector.builder.editors[("serverTransport",)]
    assert [combo.itemText(i) for i in range(combo.count())] == ["— default —", "sse", "httpStreamable", "stdio"]
    assert combo.currentIndex() == 0
    combo.setCurrentIndex(2)
    combo.activated.emit(2)
    assert window.document.node("MCP").parameters["serverTransport"] == "httpStreamable"
    combo = window.inspector.builder.editors[("serverTransport",)]
    combo.setCurrentIndex(0)
    combo.activated.emit(0)
    assert "serverTransport" not in window.document.node("MCP").parameters
