"""The Chat panel puts in again only the bubbles that changed, and shows what a full render shows."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QApplication

from engine.run_state import ChatTurn
from gui import theme
from gui.panels.chat_panel import ChatPanel

from .test_canvas_theme import dark_palette


def fresh(entries: list[ChatTurn]) -> ChatPanel:
    """A new panel showing `entries` in one render."""
    panel = ChatPanel()
    panel.entries = [replace(entry) for entry in entries]
    panel._render()
    return panel


def test_bubbles_change_in_place_as_a_full_render_shows_them(qtbot) -> None:
    panel = ChatPanel()
    qtbot.addWidget(panel)
    for n in range(30):
        panel.add_user(f"question {n}")
        panel.begin_reply()
        panel.stream(f"The answer is **{n * 7}**.")
        panel.end_reply(None)
    inserted: list[int] = []
    panel.view.document().contentsChange.connect(lambda _pos, _removed, added: inserted.append(added))
    panel.add_user("tell me a story")
    panel.begin_reply()
    for word in ("Once", " upon", " a", " time"):
        panel.stream(word)
    panel.stream("Twice", restart=True)  # a new model call: the reply starts again
    assert max(inserted) < 200  # each change put in the last bubble or two, never the conversation
    assert panel.view.toHtml() == fresh(panel.entries).view.toHtml()
    turns = [ChatTurn("user", "again"), ChatTurn("assistant", "a `code` reply", streaming=True)]
    panel.show_run(turns, new=True)
    panel.show_run([turns[0], ChatTurn("error", "the model server did not answer")])  # the run's turns replaced
    assert panel.view.toHtml() == fresh(panel.entries).view.toHtml()
    assert panel.view.toPlainText().rstrip().endswith("again\n\nError\nthe model server did not answer")


def test_a_theme_switch_renders_every_bubble_again(qtbot) -> None:
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.add_user("hello")
    light = panel.view.toHtml()
    before = QApplication.palette()
    try:
        QApplication.setPalette(dark_palette())
        theme.manager().refresh()  # the main window does this when the system palette changes
        assert theme.current().dark
        assert panel.view.toHtml() != light
        assert panel.view.toHtml() == fresh(panel.entries).view.toHtml()
    finally:
        QApplication.setPalette(before)
        theme.manager().refresh()
    assert panel.view.toHtml() == light
