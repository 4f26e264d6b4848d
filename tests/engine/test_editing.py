"""The headless document API: names, renames, connections, parameters, paste, exact inverses."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.editing import DocumentEditor, EditError, Link, unique_name
from engine.registry import Registry
from engine.workflow import Workflow, load_workflow, workflow_to_data

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "scripted-calculator-agent.json"
AGENT = "@n8n/n8n-nodes-langchain.agent"
SCRIPTED = "mini-n8n.lmChatScripted"
CALCULATOR = "@n8n/n8n-nodes-langchain.toolCalculator"


@pytest.fixture
def example() -> Workflow:
    return load_workflow(EXAMPLE)


def test_unique_name_appends_the_smallest_free_number() -> None:
    assert unique_name("Calculator", set()) == "Calculator"
    assert unique_name("Calculator", {"Calculator"}) == "Calculator1"
    assert unique_name("Calculator", {"Calculator", "Calculator1"}) == "Calculator2"
    assert unique_name("Calculator1", {"Calculator1"}) == "Calculator2"


def test_new_nodes_get_unique_default_names_and_the_type_version(registry: Registry) -> None:
    editor = DocumentEditor(Workflow(), registry)
    first = editor.add_node(editor.new_node(AGENT, (10.4, 20.6)))
    second = editor.add_node(editor.new_node(AGENT, (0, 0)))
    assert (first.name, second.name) == ("AI Agent", "AI Agent1")
    assert first.typeVersion == 3 and first.position == (10, 21)
    with pytest.raises(EditError, match="exists already"):
        editor.add_node(editor.new_node(AGENT, (0, 0), name="x").model_copy(update={"name": "AI Agent"}))


def test_rename_carries_connections_as_source_keys_and_targets(example: Workflow, registry: Registry) -> None:
    editor = DocumentEditor(example, registry)
    editor.rename("AI Agent", "Support Agent")
    editor.rename("Model", "Scripted Model")
    links = {(l.source, l.type, l.target) for l in editor_links(example)}
    assert ("When chat message received", "main", "Support Agent") in links
    assert ("Scripted Model", "ai_languageModel", "Support Agent") in links
    assert not any("AI Agent" in (s, t) or s == "Model" for s, _c, t in links)
    assert list(example.connections)[1] == "Scripted Model"  # key order kept
    with pytest.raises(EditError, match="exists already"):
        editor.rename("Calculator", "Simple Memory")
    with pytest.raises(EditError, match="empty"):
        editor.rename("Calculator", "  ")


def editor_links(wf: Workflow) -> list[Link]:
    return [Link.of(s, c, i, t) for s, c, i, t in wf.links()]


def test_connect_follows_the_engine_rules(example: Workflow, registry: Registry) -> None:
    editor = DocumentEditor(example, registry)
    second_model = editor.add_node(editor.new_node(SCRIPTED, (0, 300)))
    with pytest.raises(EditError, match='"AI Agent" takes only 1 Chat Model; "Model" is connected already'):
        editor.connect(second_model.name, "ai_languageModel", "AI Agent")
    with pytest.raises(EditError, match="has no Tool output"):
        editor.connect(second_model.name, "ai_tool", "AI Agent")
    tool = editor.add_node(editor.new_node(CALCULATOR, (0, 400)))
    link = editor.connect(tool.name, "ai_tool", "AI Agent")
    assert link in editor_links(example)


def test_remove_takes_nodes_with_their_connections(example: Workflow, registry: Registry) -> None:
    editor = DocumentEditor(example, registry)
    editor.remove_nodes(["AI Agent", "Calculator"])
    assert not any(l.target == "AI Agent" or l.source == "Calculator" for l in editor_links(example))
    assert [n.name for n in example.nodes] == ["When chat message received", "Model", "Simple Memory", "About this workflow"]


def test_disconnect_removes_one_connection(example: Workflow, registry: Registry) -> None:
    editor = DocumentEditor(example, registry)
    editor.disconnect(Link("Simple Memory", "ai_memory", 0, "AI Agent", 0))
    assert all(l.source != "Simple Memory" for l in editor_links(example))
    with pytest.raises(EditError, match="not connected"):
        editor.disconnect(Link("Simple Memory", "ai_memory", 0, "AI Agent", 0))
    assert any(l.source == "Model" for l in editor_links(example))


def test_set_and_unset_parameters_by_path(example: Workflow, registry: Registry) -> None:
    editor = DocumentEditor(example, registry)
    before = editor.set_parameter("AI Agent", ("options", "maxIterations"), 7)
    assert example.node("AI Agent").parameters["options"]["maxIterations"] == 7
    assert before["options"]["maxIterations"] == 5
    editor.set_parameter("Model", ("replies", 2), {"text": "third"})
    editor.set_parameter("Model", ("replies", 2, "toolCalls", 0), {"name": "Calculator", "args": {}})
    assert example.node("Model").parameters["replies"][2]["toolCalls"][0]["name"] == "Calculator"
    editor.unset_parameter("AI Agent", ("options", "systemMessage"))
    assert "systemMessage" not in example.node("AI Agent").parameters["options"]
    with pytest.raises(EditError, match="does not exist"):
        editor.set_parameter("Model", ("replies", 9, "text"), "x")


def test_paste_gives_fresh_ids_unique_names_and_inner_connections(example: Workflow, registry: Registry) -> None:
    editor = DocumentEditor(example, registry)
    fragment = editor.fragment(["AI Agent", "Model", "When chat message received"])
    assert set(fragment["connections"]) == {"When chat message received", "Model"}
    added = editor.paste(fragment, (0, 400))
    assert added == ["When chat message received1", "AI Agent1", "Model1"]
    ids = [n.id for n in example.nodes]
    assert len(ids) == len(set(ids))
    links = {(l.source, l.type, l.target) for l in editor_links(example)}
    assert ("Model1", "ai_languageModel", "AI Agent1") in links
    assert ("When chat message received1", "main", "AI Agent1") in links
    assert example.node("AI Agent1").position == (260, 400)


def test_disable_and_restore_keeps_unset_fields_unset(example: Workflow, registry: Registry) -> None:
    editor = DocumentEditor(example, registry)
    before = workflow_to_data(example)
    old = editor.set_disabled(["Calculator"], True)
    assert example.node("Calculator").is_disabled
    editor.restore_disabled(old)
    assert workflow_to_data(example) == before


def test_rename_updates_expressions_that_name_the_node(example: Workflow, registry: Registry) -> None:
    editor = DocumentEditor(example, registry)
    editor.set_parameter("AI Agent", ("text",), "={{ $('Model').item.json.x }} and {{ $node[\"Model\"].json.y }}")
    before = example.node("AI Agent").parameters
    changed = editor.rename("Model", "Brain")
    assert example.node("AI Agent").parameters["text"] == "={{ $('Brain').item.json.x }} and {{ $node[\"Brain\"].json.y }}"
    assert changed == {"AI Agent": before}
    assert editor.rename("Calculator", "Maths") == {}
