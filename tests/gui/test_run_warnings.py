"""Warnings the engine and nodes log reach the editor: a red line in the run log and a
"⚠ N warnings" button in the output panel's tab bar, whichever thread logged them."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from PySide6.QtWidgets import QComboBox

from engine.credentials import FileCredentialStore
from gui.panels.output_panel import TAB_LOG
from nodes.tools.code_tool import warn_missing

from .editor_support import editor_env, make_window  # noqa: F401  (fixtures)


def test_a_credential_file_others_can_read_is_a_warning_in_the_editor(qtbot, make_window, editor_env: Path) -> None:
    path = editor_env / "home" / "credentials.json"
    FileCredentialStore(path).save("openAiApi", "Work key", {"apiKey": "sk-test-key"})
    os.chmod(path, 0o644)
    window = make_window()
    panel = window.run_controller.output
    name = window.add_node_at_centre("@n8n/n8n-nodes-langchain.lmChatOpenAi")
    assert name is not None
    window.scene.select_names([name])  # the inspector's credential picker reads the file
    combos = [c for c in window.inspector.findChildren(QComboBox) if c.itemText(0) == "— none —"]
    assert combos and "Work key" in [combos[0].itemText(i) for i in range(combos[0].count())]
    qtbot.waitUntil(lambda: not panel.warnings.isHidden())
    assert panel.warnings.text() == "⚠ 1 warning"
    [said] = panel.warnings.texts
    assert str(path) in said and "mode 0644" in said and f"chmod 600 {path}" in said
    assert panel.run_log.toPlainText().endswith(f"Warning: {said}")
    assert "sk-test-key" not in panel.run_log.toPlainText() + panel.warnings.toolTip()


def test_a_warning_logged_on_another_thread_shows_and_can_be_dismissed(qtbot, make_window, tmp_path: Path) -> None:
    window = make_window()
    panel = window.run_controller.output
    node = f"Code {tmp_path.name}"  # said once per process and node: a name of this test's own
    worker = threading.Thread(target=warn_missing, args=(node, ["network isolation (no user namespaces)"]))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: any(node in t for t in panel.warnings.texts))
    said = f'Code Tool "{node}" ran without: network isolation (no user namespaces)'
    assert said in panel.run_log.toPlainText()
    entries = [a.text() for a in panel.warnings.menu().actions()]
    assert said in entries and entries[-2:] == ["Show the run log", "Dismiss these warnings"]
    panel.setCurrentIndex(0)
    panel.warnings.menu().actions()[-2].trigger()
    assert panel.currentIndex() == TAB_LOG
    panel.warnings.menu().actions()[-1].trigger()
    assert panel.warnings.isHidden() and panel.warnings.texts == []
    assert said in panel.run_log.toPlainText()  # the run log keeps what was said
