"""The Credentials dialog: create, edit, test against a real model server, delete; a stored key is
never shown back; a node whose credential is missing is warned about before the run."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from PySide6.QtWidgets import QLabel, QLineEdit, QListWidget, QMessageBox, QWidget

from gui import theme
from tests.peers.ollama_peer import OllamaPeer
from tests.peers.openai_peer import OpenAIPeer

from .editor_support import answer_next, editor_env, make_window  # noqa: F401  (fixtures)
from .test_theme_contrast import themed  # noqa: F401  (fixture)

SHOTS = os.environ.get("MINI_N8N_SCREENSHOTS")
KEY = "sk-proj-Abcdefghijklmnop0123456789wxyz"
OPENAI_MODEL = "@n8n/n8n-nodes-langchain.lmChatOpenAi"


def shown_texts(widget: QWidget) -> list[str]:
    """Every text a user can read in the widget: labels, fields, placeholders, list rows, title."""
    texts = [widget.windowTitle()]
    texts += [label.text() for label in widget.findChildren(QLabel)]
    texts += [t for edit in widget.findChildren(QLineEdit) for t in (edit.text(), edit.placeholderText())]
    texts += [lst.item(i).text() for lst in widget.findChildren(QListWidget) for i in range(lst.count())]
    return texts


def stored(editor_env: Path) -> list[dict]:
    return json.loads((editor_env / "home" / "credentials.json").read_text())["credentials"]


def test_create_edit_delete_with_the_key_masked(themed: theme.Theme, qtbot, make_window, editor_env,  # type: ignore[no-untyped-def]
                                                monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    window = make_window()
    dialog = window.open_credentials(new_type="openAiApi")
    qtbot.waitExposed(dialog)
    assert dialog.name_edit.text() == "OpenAI API account"
    dialog.editors["apiKey"].setText(KEY)
    dialog.editors["url"].setText("http://127.0.0.1:9/v1")
    dialog.save_current()
    [entry] = stored(editor_env)
    assert (entry["name"], entry["type"], entry["data"]) == (
        "OpenAI API account", "openAiApi", {"apiKey": KEY, "url": "http://127.0.0.1:9/v1"})
    assert dialog.list.count() == 1 and "sk-…wxyz" in dialog.list.item(0).text()
    assert dialog.editors["apiKey"].text() == "" and "sk-…wxyz" in dialog.editors["apiKey"].placeholderText()
    assert not any(KEY in t or KEY[3:-4] in t for t in shown_texts(dialog))
    assert dialog.editors["apiKey"].isVisibleTo(dialog) and dialog.name_edit.isVisibleTo(dialog)
    if SHOTS:
        dialog.grab().save(str(Path(SHOTS) / f"credentials-dialog-{'dark' if themed.dark else 'light'}.png"))
    # an edit that leaves the key empty keeps the stored key
    dialog.name_edit.setText("Work account")
    dialog.save_current()
    [entry] = stored(editor_env)
    assert entry["name"] == "Work account" and entry["data"]["apiKey"] == KEY
    # a new key replaces it
    dialog.editors["apiKey"].setText("sk-other-000011112222")
    dialog.save_current()
    assert stored(editor_env)[0]["data"]["apiKey"] == "sk-other-000011112222"
    answer_next(QMessageBox.StandardButton.Yes)
    dialog.delete_current()
    assert stored(editor_env) == [] and dialog.list.count() == 0


def test_connection_test_asks_the_model_servers(qtbot, qloop, make_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    window = make_window()
    with OpenAIPeer(api_key=KEY) as openai, OllamaPeer() as ollama:
        dialog = window.open_credentials(new_type="openAiApi")
        dialog.editors["url"].setText(openai.base_url)
        dialog.editors["apiKey"].setText(KEY)
        with qtbot.waitSignal(dialog.checked, timeout=15000) as good:
            dialog.test_connection()
        assert good.args[0] is True and "1 model" in good.args[1]
        assert openai.requests[-1].method == "GET" and openai.requests[-1].path == "/v1/models"
        assert dialog.status.text().startswith("✓")
        dialog.editors["apiKey"].setText("sk-wrong-key-0000000000")
        with qtbot.waitSignal(dialog.checked, timeout=15000) as refused:
            dialog.test_connection()
        assert refused.args[0] is False and "refused the API key (401)" in refused.args[1]
        assert "sk-wrong" not in refused.args[1]
        # a saved credential tested with its key field left empty uses the stored key
        dialog.editors["apiKey"].setText(KEY)
        dialog.save_current()
        assert dialog.editors["apiKey"].text() == ""
        with qtbot.waitSignal(dialog.checked, timeout=15000) as kept:
            dialog.test_connection()
        assert kept.args[0] is True
        dialog.start_new("ollamaApi")
        dialog.editors["baseUrl"].setText(ollama.url)
        with qtbot.waitSignal(dialog.checked, timeout=15000) as tags:
            dialog.test_connection()
        assert tags.args[0] is True and ollama.requests[-1].path == "/api/tags"
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        closed_port = free.getsockname()[1]
    dialog.editors["baseUrl"].setText(f"http://127.0.0.1:{closed_port}")
    with qtbot.waitSignal(dialog.checked, timeout=15000) as down:
        dialog.test_connection()
    assert down.args[0] is False and "cannot reach" in down.args[1]


def model_workflow(path: Path, credentials: dict | None) -> Path:
    model = {"id": "m", "name": "OpenAI", "type": OPENAI_MODEL, "typeVersion": 1.2, "position": [0, 0],
             "parameters": {"model": "peer-model", "options": {}}}
    if credentials is not None:
        model["credentials"] = credentials
    path.write_text(json.dumps({"name": "creds", "nodes": [model], "connections": {}}))
    return path


def test_missing_credential_is_warned_and_created_from_the_node(themed: theme.Theme, qtbot, make_window,  # type: ignore[no-untyped-def]
                                                               editor_env, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    window = make_window(model_workflow(editor_env / "wf.json", {"openAiApi": {"id": "gone", "name": "Old key"}}))
    window.resize(1440, 900)
    item = window.scene.node_item("OpenAI")
    assert item.problem is not None and 'credential "Old key" (openAiApi)' in item.problem
    window.scene.select_names(["OpenAI"])
    inspector = window.inspector
    assert inspector.problems.isVisibleTo(inspector) and "Old key" in inspector.problems.text()
    combo = inspector.credential_combos["openAiApi"]
    assert combo.currentText() == "Old key (not in the store)"
    box = inspector.problems
    qtbot.waitUntil(lambda: box.height() >= box.heightForWidth(box.width()))  # the wrapped warning is laid out
    if SHOTS:
        window.grab().save(str(Path(SHOTS) / f"credential-missing-{'dark' if themed.dark else 'light'}.png"))
    new_index = combo.count() - 1
    assert combo.itemText(new_index) == "+ Create new credential…"
    combo.activated.emit(new_index)
    dialog = window.findChild(QWidget, "credentialsDialog")
    qtbot.waitUntil(lambda: dialog is not None and dialog.isVisible())
    assert dialog.current_type == "openAiApi" and dialog.current_id is None
    dialog.editors["apiKey"].setText(KEY)
    dialog.save_current()
    [entry] = stored(editor_env)
    assert window.document.node("OpenAI").credentials == {"openAiApi": {"id": entry["id"], "name": entry["name"]}}
    dialog.accept()
    qtbot.waitUntil(lambda: window.scene.node_item("OpenAI").problem is None)
    qtbot.waitUntil(lambda: not inspector.problems.isVisibleTo(inspector))
    assert inspector.credential_combos["openAiApi"].currentText() == entry["name"]
    window.undo_stack.undo()  # choosing the credential was one edit
    assert window.document.node("OpenAI").credentials == {"openAiApi": {"id": "gone", "name": "Old key"}}


def test_no_credential_warns_only_where_the_node_needs_one(qtbot, make_window, editor_env, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    window = make_window(model_workflow(editor_env / "wf.json", None))
    assert "has no openAiApi credential" in window.scene.node_item("OpenAI").problem
    window.set_parameter("OpenAI", ("options", "baseURL"), "http://127.0.0.1:8080/v1")  # a local server: no key needed
    qtbot.waitUntil(lambda: window.scene.node_item("OpenAI").problem is None)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    window.unset_parameter("OpenAI", ("options", "baseURL"))
    qtbot.waitUntil(lambda: window.scene.node_item("OpenAI").problem is None)


def test_a_type_without_a_form_keeps_a_key_but_is_not_tested(qtbot, make_window, editor_env) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    dialog = window.open_credentials(new_type="groqApi")
    assert list(dialog.editors) == ["apiKey"] and not dialog.test_button.isEnabled()
    dialog.editors["apiKey"].setText("gsk_0123456789abcdefgh")
    dialog.save_current()
    [entry] = stored(editor_env)
    assert (entry["type"], entry["data"]) == ("groqApi", {"apiKey": "gsk_0123456789abcdefgh"})
    assert "gsk…efgh" in dialog.list.item(0).text()
