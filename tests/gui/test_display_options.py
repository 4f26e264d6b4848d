"""Inspector fields follow n8n's displayOptions: the Agent's prompt only for "define", the Code
Tool's code for its language, the schema fields once an input schema is asked for."""

from __future__ import annotations

import os
from pathlib import Path

from gui import theme

from .editor_support import EXAMPLE, editor_env, make_window  # noqa: F401  (fixtures)
from .test_theme_contrast import themed  # noqa: F401  (fixture)

SHOTS = os.environ.get("MINI_N8N_SCREENSHOTS")


def test_agent_prompt_only_when_defined(themed: theme.Theme, qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(EXAMPLE)
    window.resize(1440, 900)
    window.scene.select_names(["AI Agent"])
    inspector = window.inspector
    assert ("text",) not in inspector.builder.editors
    combo = inspector.builder.editors[("promptType",)]
    combo.setCurrentIndex(combo.findData("define"))
    combo.activated.emit(combo.currentIndex())
    qtbot.waitUntil(lambda: ("text",) in inspector.builder.editors)
    assert inspector.builder.rows[("text",)].isVisibleTo(inspector)
    if SHOTS:
        window.grab().save(str(Path(SHOTS) / f"display-options-{'dark' if themed.dark else 'light'}.png"))
    window.undo_stack.undo()
    qtbot.waitUntil(lambda: ("text",) not in inspector.builder.editors)


def test_code_tool_fields_follow_language_and_schema(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    name = window.add_node("@n8n/n8n-nodes-langchain.toolCode", (0, 0))
    window.scene.select_names([name])
    inspector = window.inspector
    editors = inspector.builder.editors
    assert ("pythonCode",) in editors and ("jsCode",) not in editors
    assert ("schemaType",) not in editors and ("jsonSchemaExample",) not in editors
    window.set_parameter(name, ("language",), "javaScript")
    window.set_parameter(name, ("specifyInputSchema",), True)
    qtbot.waitUntil(lambda: ("jsCode",) in inspector.builder.editors)
    editors = inspector.builder.editors
    assert ("pythonCode",) not in editors
    assert ("schemaType",) in editors and ("jsonSchemaExample",) in editors and ("inputSchema",) not in editors
    window.set_parameter(name, ("schemaType",), "manual")
    qtbot.waitUntil(lambda: ("inputSchema",) in inspector.builder.editors)
    assert ("jsonSchemaExample",) not in inspector.builder.editors


def bottom_ports(window, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [p.conn_type for p in window.scene.node_item(name).ports if p.side == "bottom"]


def test_output_parser_port_follows_the_switch(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(EXAMPLE)
    assert "ai_outputParser" not in bottom_ports(window, "AI Agent")
    window.scene.select_names(["AI Agent"])
    window.inspector.builder.editors[("hasOutputParser",)].setChecked(True)
    assert bottom_ports(window, "AI Agent") == ["ai_languageModel", "ai_memory", "ai_tool", "ai_outputParser"]
    # the existing links are drawn again on the rebuilt ports, and the agent stays selected
    links = {(c.key.source, c.key.type) for c in window.scene.connection_items()}
    assert {("Model", "ai_languageModel"), ("Simple Memory", "ai_memory"), ("Calculator", "ai_tool")} <= links
    assert all(c.target.node_item is window.scene.node_item(c.key.target) for c in window.scene.connection_items())
    assert window.scene.selected_names() == ["AI Agent"]
    window.undo_stack.undo()
    assert "ai_outputParser" not in bottom_ports(window, "AI Agent")


def test_a_linked_parser_port_stays_while_the_switch_is_off(qtbot, make_window, editor_env) -> None:  # type: ignore[no-untyped-def]
    import json

    data = json.loads(EXAMPLE.read_text())
    data["nodes"].append({"id": "p", "name": "Parser", "type": "@n8n/n8n-nodes-langchain.outputParserStructured",
                          "typeVersion": 1.3, "position": [600, 400], "parameters": {}})
    data["connections"]["Parser"] = {"ai_outputParser": [[{"node": "AI Agent", "type": "ai_outputParser", "index": 0}]]}
    path = editor_env / "parser.json"
    path.write_text(json.dumps(data))
    window = make_window(path)
    assert "ai_outputParser" in bottom_ports(window, "AI Agent")  # nothing linked disappears
