"""The Executions panel on a server: a real `mini-n8n serve` on loopback (its REST API) ran a chat
execution; the editor adds the server (URL and API key, the key kept like a credential and never
shown back), lists its executions, opens one read-only, copies it to the editor and replays it
here as a new local execution."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

import httpx
from PySide6.QtCore import Qt
import pytest

from gui.panels.executions import LOCAL
from tests.serve_harness import API_KEY, Cluster

ROUNDS = 2


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Cluster]:
    cluster = Cluster(tmp_path, str(tmp_path / "server.sqlite"), mode="regular", rounds=ROUNDS)
    try:
        with httpx.Client() as client:
            assert cluster.chat(client, "prod").json() == {"output": "answer to prod"}
        yield cluster
    finally:
        cluster.close()


def add_server(qtbot, controller, monkeypatch, url: str, key: str):  # type: ignore[no-untyped-def]
    """Fill and save the Add server dialog as a user would."""
    import gui.executions_controller as module

    class Filled(module.ServerDialog):
        def exec(self) -> int:  # type: ignore[override]
            self.name.setText("Production")
            self.url.setText(url)
            self.key.setText(key)
            self.accept()
            return int(self.result())

    monkeypatch.setattr(module, "ServerDialog", Filled)
    return controller.executions.add_server()


def look_light_and_dark(qtbot, window, folder: Path) -> None:  # type: ignore[no-untyped-def]
    """Screenshots of the window, light and dark, to look at (never committed)."""
    from PySide6.QtWidgets import QApplication

    from gui import theme
    from tests.gui.test_canvas_theme import dark_palette

    folder.mkdir()
    window.grab().save(str(folder / "server-execution-light.png"))
    light = QApplication.palette()
    try:
        QApplication.setPalette(dark_palette())
        qtbot.waitUntil(lambda: theme.current().dark)
        window.grab().save(str(folder / "server-execution-dark.png"))
    finally:
        QApplication.setPalette(light)
        theme.manager().refresh()
    print(f"screenshots in {folder}")


def test_a_servers_executions_open_copy_and_replay_here(run_window, qtbot, served, monkeypatch, tmp_path) -> None:
    from tests.builders import agent_workflow

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the workflow's model, when run here
    window, controller = run_window(agent_workflow([{"text": "local"}], tools=[]))
    executions = controller.executions
    panel = executions.panel
    assert add_server(qtbot, controller, monkeypatch, served.url, API_KEY)

    # kept as n8n's API credential, shown by URL with the key masked
    stored = json.loads(Path(os.environ["MINI_N8N_CREDENTIALS"]).read_text())["credentials"]
    assert [(c["type"], c["name"], c["data"]) for c in stored] == [
        ("n8nApi", "Production", {"baseUrl": served.url + "/api/v1", "apiKey": API_KEY})]
    assert panel.remote and panel.source_box.currentText() == f"Production — {served.url}"
    tip = panel.source_box.itemData(panel.source_box.currentIndex(), Qt.ItemDataRole.ToolTipRole)
    assert API_KEY not in tip and API_KEY[-4:] in tip

    qtbot.waitUntil(lambda: len(panel.model.rows) == 1, timeout=10_000)
    remote = panel.model.rows[0]
    assert (remote.status, remote.mode, remote.workflow_name) == ("success", "webhook", "served agent")
    panel.select(remote.id)
    assert panel.open_button.isEnabled() and panel.replay_button.isEnabled()
    assert not panel.delete_button.isEnabled() and not panel.resume_button.isEnabled()

    # open read-only: the server's run on the canvas, in the run log and the steps table
    qtbot.mouseClick(panel.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: controller.viewed is not None and controller.viewed.id == remote.id, timeout=10_000)
    assert window.read_only_bar.isVisible() and served.url in window.read_only_label.text()
    assert window.canvas.node_item("Lookup").runs == ROUNDS
    rows = controller.output.steps_model.rows
    assert [r.tool for r in rows] == ["Lookup"] * ROUNDS + ["final answer"]
    assert rows[-1].observation == "answer to prod"
    look_light_and_dark(qtbot, window, tmp_path / "shots")

    # copy to the editor: the workflow as it ran on the server becomes the document
    qtbot.mouseClick(panel.copy_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.read_only_bar.isVisible(), timeout=10_000)
    assert window.document.has_node("Lookup") and window.document.name == "served agent"

    # replay here: a new local execution on the server's recorded model replies, tools live
    panel.select(remote.id)
    with qtbot.waitSignal(controller.run_shown, timeout=30_000) as shown:
        qtbot.mouseClick(panel.replay_button, Qt.MouseButton.LeftButton)
    outcome = shown.args[0]
    assert outcome.status == "success" and outcome.state.id != remote.id
    assert panel.source == LOCAL and panel.model.rows[0].id == outcome.state.id and panel.model.rows[0].mode == "replay"
    assert "no divergence" in panel.report.text()
    assert served.model.requests and len(served.model.requests) == ROUNDS + 1  # the model was not asked again


def test_a_wrong_key_or_a_gone_server_is_said_in_the_panel(run_window, qtbot, served, monkeypatch) -> None:
    from tests.builders import agent_workflow

    window, controller = run_window(agent_workflow([{"text": "local"}], tools=[]))
    panel = controller.executions.panel
    assert add_server(qtbot, controller, monkeypatch, served.url, "not-the-key")
    qtbot.waitUntil(lambda: "answered 401" in panel.report.text(), timeout=10_000)
    assert "does not hold a valid API key" in panel.report.text() and panel.model.rows == []
    assert "not-the-key" not in panel.source_box.currentText()

    panel.forget_server_button.click()
    assert not panel.remote and panel.source_box.count() == 1
    served.kill(served.server)  # type: ignore[arg-type]
    assert add_server(qtbot, controller, monkeypatch, served.url, API_KEY)
    qtbot.waitUntil(lambda: "cannot reach the server" in panel.report.text(), timeout=20_000)


def test_servers_are_read_when_the_source_list_opens_not_at_start(run_window, qtbot, served) -> None:
    """The credential file is not read while the editor starts; a server saved meanwhile (another
    window) is offered when the list opens."""
    from engine.credentials import default_credential_store
    from engine.remote import ServerBook
    from tests.builders import agent_workflow

    window, controller = run_window(agent_workflow([{"text": "local"}], tools=[]))
    panel = controller.executions.panel
    assert panel.source_box.count() == 1 and not panel.remote
    ServerBook(default_credential_store()).save("Staging", served.url, API_KEY)
    panel.source_box.showPopup()
    try:
        assert [panel.source_box.itemText(i) for i in range(panel.source_box.count())] == [
            "This computer", f"Staging — {served.url}"]
        assert not panel.remote  # offered, not chosen
    finally:
        panel.source_box.hidePopup()
