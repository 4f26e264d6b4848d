"""An answer without text is shown as an empty reply in the Agent's bubble, never dropped."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QApplication

from gui import theme
from gui.panels.chat_panel import EMPTY_REPLY
from tests.builders import agent_workflow

from .test_canvas_theme import dark_palette
from .test_run_chat import send

SHOTS = os.environ.get("MINI_N8N_SCREENSHOTS")  # a folder: the chat panel is saved there to look at


def shot(widget, name: str) -> None:  # type: ignore[no-untyped-def]
    if SHOTS:
        widget.grab().save(str(Path(SHOTS) / name))


def test_an_empty_answer_keeps_its_bubble_with_a_notice(run_window, qtbot) -> None:
    _window, controller = run_window(agent_workflow([{"text": ""}], tools=[]))
    outcome = send(qtbot, controller, "Say nothing.")
    assert outcome.status == "success", outcome.error
    chat = controller.chat
    assert [(e.role, e.text, e.empty) for e in chat.entries] == [("user", "Say nothing.", False), ("assistant", "", True)]
    assert EMPTY_REPLY in chat.view.toPlainText()
    assert chat.view.toPlainText().index("Agent") < chat.view.toPlainText().index(EMPTY_REPLY)
    assert f"color:{theme.current().muted_text.name()}" in chat.view.toHtml().replace(" ", "")
    shot(chat, "chat-empty-reply-light.png")
    light = QApplication.palette()
    try:
        QApplication.setPalette(dark_palette())
        qtbot.waitUntil(lambda: theme.current().dark)
        qtbot.waitUntil(lambda: f"color:{theme.DARK.muted_text.name()}" in chat.view.toHtml().replace(" ", ""))
        shot(chat, "chat-empty-reply-dark.png")
    finally:
        QApplication.setPalette(light)
        theme.manager().refresh()


def test_a_reply_with_text_has_no_notice(run_window, qtbot) -> None:
    _window, controller = run_window(agent_workflow([{"text": "Hello."}], tools=[]))
    assert send(qtbot, controller, "Hi").status == "success"
    assert [e.empty for e in controller.chat.entries] == [False, False]
    assert EMPTY_REPLY not in controller.chat.view.toPlainText()
