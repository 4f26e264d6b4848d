"""Files: unsupported nodes kept byte-for-byte in content, title and unsaved-changes prompt,
recent files, pasting an n8n workflow from the clipboard, and unreadable files reported."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox

from engine.workflow import load_workflow

from .editor_support import EXAMPLE, answer_next, editor_env, make_window  # noqa: F401  (fixtures)

N8N_EXPORT = {
    "id": "Yx2w8mQ1",
    "name": "Support bot from n8n",
    "active": False,
    "nodes": [
        {"parameters": {"options": {}}, "id": "a1", "name": "When chat message received",
         "type": "@n8n/n8n-nodes-langchain.chatTrigger", "typeVersion": 1.1, "position": [-200, 0],
         "webhookId": "0f0e"},
        {"parameters": {"options": {"systemMessage": "Be brief."}}, "id": "a2", "name": "AI Agent",
         "type": "@n8n/n8n-nodes-langchain.agent", "typeVersion": 3, "position": [60, 0]},
        {"parameters": {"model": "anthropic.claude-v2", "options": {"temperature": 0.2}}, "id": "a3",
         "name": "AWS Bedrock Chat Model", "type": "@n8n/n8n-nodes-langchain.lmChatAwsBedrock", "typeVersion": 1,
         "position": [0, 220], "credentials": {"aws": {"id": "k1", "name": "AWS account"}}},
        {"parameters": {"channel": "#support", "text": "={{ $json.output }}", "otherOptions": {}}, "id": "a4",
         "name": "Slack", "type": "n8n-nodes-base.slack", "typeVersion": 2.2, "position": [380, 0],
         "notesInFlow": True, "notes": "posts the answer", "onError": "continueRegularOutput",
         "credentials": {"slackApi": {"id": "s1", "name": "Slack bot"}}},
    ],
    "connections": {
        "When chat message received": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
        "AWS Bedrock Chat Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
        "AI Agent": {"main": [[{"node": "Slack", "type": "main", "index": 0}]]},
    },
    "settings": {"executionOrder": "v1", "saveManualExecutions": True},
    "pinData": {},
    "versionId": "4c1d",
    "meta": {"instanceId": "abc", "templateCredsSetupCompleted": True},
    "tags": [{"name": "support", "id": "t1"}],
}


def test_unsupported_nodes_round_trip_unchanged(qtbot, make_window, tmp_path: Path) -> None:
    source = tmp_path / "from-n8n.json"
    source.write_text(json.dumps(N8N_EXPORT, indent=2))
    window = make_window(source)
    slack = window.canvas.node_item("Slack")
    bedrock = window.canvas.node_item("AWS Bedrock Chat Model")
    assert not slack.node_type.supported and not bedrock.node_type.supported
    assert bedrock.kind == "sub"  # drawn from its ai_languageModel link, connected upward
    assert len(window.scene.connection_items()) == 3
    assert "unsupported node type" in window.statusBar().currentMessage()
    window.scene.select_names(["Slack"])
    assert window.inspector.builder is None  # no form: the parameters are shown read-only
    # an edit elsewhere, undone, then save: the file's content is what n8n wrote
    window.move_nodes({"Slack": (500, 40)})
    window.undo_stack.undo()
    target = tmp_path / "saved.json"
    assert window.save_to(target)
    assert json.loads(target.read_text()) == N8N_EXPORT
    # and after a real edit to a supported node, the unsupported ones are still untouched
    window.set_parameter("AI Agent", ("options", "maxIterations"), 4)
    assert window.save_to(target)
    saved = {n["name"]: n for n in json.loads(target.read_text())["nodes"]}
    assert saved["Slack"] == N8N_EXPORT["nodes"][3]
    assert saved["AWS Bedrock Chat Model"] == N8N_EXPORT["nodes"][2]


def test_title_shows_the_file_and_a_star_when_modified(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    assert window.windowTitle().startswith("scripted-calculator-agent.json")
    assert not window.isWindowModified()
    window.move_nodes({"Calculator": (460, 220)})
    assert window.isWindowModified()
    window.undo_stack.undo()
    assert not window.isWindowModified()


def test_closing_with_unsaved_changes_asks(qtbot, make_window, tmp_path: Path) -> None:
    window = make_window(EXAMPLE)
    window.set_parameter("Calculator", ("description",), "Adds numbers")
    answer_next(QMessageBox.StandardButton.Cancel)
    assert not window.close()
    assert window.isVisible()
    target = tmp_path / "kept.json"
    window.path = target
    answer_next(QMessageBox.StandardButton.Save)
    assert window.close()
    assert load_workflow(target).node("Calculator").parameters["description"] == "Adds numbers"


def test_recent_files_lists_opened_and_saved_files(qtbot, make_window, tmp_path: Path) -> None:
    window = make_window(EXAMPLE)
    window_opened = window.path
    other = tmp_path / "other.json"
    assert window.save_to(other)
    paths = window.recent.paths()
    assert paths[:2] == [str(other.resolve()), str(Path(window_opened).resolve())]
    window._fill_recent_menu()
    assert [a.text() for a in window.recent_menu.actions()][:2] == paths[:2]


def test_paste_an_n8n_workflow_from_the_clipboard(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    QGuiApplication.clipboard().setText(json.dumps(N8N_EXPORT))
    window.act_paste.trigger()
    names = {n.name for n in window.document.nodes}
    assert {"When chat message received1", "AI Agent1", "AWS Bedrock Chat Model", "Slack"} <= names
    links = {(s, t.node) for s, _c, _i, t in window.document.links()}
    assert ("When chat message received1", "AI Agent1") in links and ("AI Agent1", "Slack") in links
    assert set(window.scene.selected_names()) == {"When chat message received1", "AI Agent1",
                                                   "AWS Bedrock Chat Model", "Slack"}
    window.undo_stack.undo()
    assert not window.document.has_node("Slack")
    QGuiApplication.clipboard().setText("not json at all")
    window.act_paste.trigger()
    assert "Nothing to paste" in window.statusBar().currentMessage()


def test_an_unreadable_file_is_reported_and_the_document_kept(qtbot, make_window, tmp_path: Path, monkeypatch) -> None:
    window = make_window(EXAMPLE)
    bad = tmp_path / "bad.json"
    bad.write_text('{"nodes": [{"name": "A", "type": "x"}, {"name": "A", "type": "y"}]}')
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda parent, title, text: shown.append(text)))
    assert not window.open_file(bad, ask=False)
    assert shown and 'node "A": the name is used by more than one node' in shown[0]
    assert window.document.has_node("AI Agent")


def test_a_json_file_that_is_not_a_workflow_is_refused(qtbot, make_window, tmp_path: Path, monkeypatch) -> None:
    window = make_window(EXAMPLE)
    hello = tmp_path / "hello.json"
    hello.write_text('{"hello": "world"}')
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda parent, title, text: shown.append(text)))
    assert not window.open_file(hello, ask=False)
    assert shown and 'not an n8n workflow: the JSON object has no "nodes" list' in shown[0]
    assert window.document.has_node("AI Agent")


def test_a_link_to_a_missing_node_is_dropped_and_said(qtbot, make_window, tmp_path: Path) -> None:
    data = json.loads(EXAMPLE.read_text())
    data["connections"]["When chat message received"]["main"][0].append({"node": "Ghost", "type": "main", "index": 0})
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps(data))
    window = make_window()
    assert window.open_file(stale, ask=False)
    assert window.document.has_node("AI Agent")
    message = window.statusBar().currentMessage()
    assert "1 link(s) to missing nodes dropped" in message and 'target node "Ghost" does not exist' in message
    assert [(src, target.node) for src, _t, _i, target in window.document.links() if src == "When chat message received"] \
        == [("When chat message received", "AI Agent")]


def test_rename_the_workflow_from_the_file_menu(qtbot, make_window, monkeypatch) -> None:
    from PySide6.QtWidgets import QInputDialog

    window = make_window(EXAMPLE)
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("Shop assistant", True)))
    window.act_rename_workflow.trigger()
    assert window.document.name == "Shop assistant" and "Shop assistant" in window.windowTitle()
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("   ", True)))
    window.act_rename_workflow.trigger()
    assert "cannot be empty" in window.statusBar().currentMessage()
    window.undo_stack.undo()
    assert window.document.name == "Scripted calculator agent"
