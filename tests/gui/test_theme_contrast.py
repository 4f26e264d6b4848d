"""Text stays readable in the light and the dark theme: chat bubbles, the steps table's coloured
rows and run-log links take their colours from the theme, and each
text colour stands out from the background it is drawn on (WCAG contrast of at least 4.5)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QWidget

from engine.run_log import RunLogLine
from engine.steps_table import FINAL_ANSWER, StepRow
from gui import theme
from gui.panels.chat_panel import ChatPanel, bubble_colours
from gui.panels.run_log_view import RunLogView
from gui.panels.steps_model import COLUMNS, StepsModel

from .test_canvas_theme import dark_palette

READABLE = 4.5
SHOTS = os.environ.get("MINI_N8N_SCREENSHOTS")  # a folder: each widget is saved there to look at


def shot(widget: QWidget, name: str) -> None:
    if SHOTS:
        widget.grab().save(str(Path(SHOTS) / f"{name}-{'dark' if theme.current().dark else 'light'}.png"))


@pytest.fixture(params=["light", "dark"])
def themed(request, qtbot) -> Iterator[theme.Theme]:  # type: ignore[no-untyped-def]
    """Each test runs once in the light theme and once with a dark system palette."""
    light = QApplication.palette()
    try:
        if request.param == "dark":
            QApplication.setPalette(dark_palette())
            theme.manager().refresh()  # what the main window does on a palette change
        assert theme.current().dark == (request.param == "dark")
        yield theme.current()
    finally:
        QApplication.setPalette(light)
        theme.manager().refresh()


def colours_in(widget: QWidget) -> set[str]:
    image = widget.grab().toImage()
    return {QColor(image.pixel(x, y)).name() for x in range(0, image.width(), 2) for y in range(0, image.height(), 2)}


def test_chat_bubbles_are_readable(themed: theme.Theme, qtbot) -> None:  # type: ignore[no-untyped-def]
    chat = ChatPanel()
    qtbot.addWidget(chat)
    chat.resize(420, 360)
    chat.add_user("What is 6 times 7?")
    chat.begin_reply()
    chat.end_reply("It is 42.")
    chat.show_error("The model server did not answer")
    chat.show()
    qtbot.waitExposed(chat)
    painted = colours_in(chat.view)
    html = chat.view.toHtml().replace(" ", "")
    for role in ("user", "assistant", "error"):
        name, background, text = bubble_colours(role, themed)
        assert theme.contrast(text, background) >= READABLE, role
        assert theme.contrast(name, background) >= READABLE, role
        assert background.name() in painted, role  # the bubble is drawn in the theme's colour
        assert f"color:{text.name()}" in html, role  # and its text is set, not left to the palette
    shot(chat, "chat")


def answer_and_error_rows() -> list[StepRow]:
    answer = StepRow(iterations=(2,), item=0, agent="AI Agent", tool=FINAL_ANSWER, kind="answer", status="ok",
                     observation="It is 42.")
    failed = StepRow(iterations=(1,), item=0, agent="AI Agent", tool="Calculator", kind="tool",
                     tool_input={"expression": "6 *"}, status="error", observation="Error: unexpected end")
    return [failed, answer]


def test_coloured_step_rows_are_readable(themed: theme.Theme, qtbot) -> None:  # type: ignore[no-untyped-def]
    from gui.panels.steps_view import StepsView

    view = StepsView()
    qtbot.addWidget(view)
    view.model.append_rows(answer_and_error_rows())
    model = view.model
    default_text = view.table.palette().text().color()
    for row in range(model.rowCount()):
        background = model.data(model.index(row, 0), Qt.ItemDataRole.BackgroundRole)
        assert background is not None
        for col in range(len(COLUMNS)):
            foreground = model.data(model.index(row, col), Qt.ItemDataRole.ForegroundRole)
            text = foreground.color() if foreground is not None else default_text
            assert theme.contrast(text, background.color()) >= READABLE, (row, COLUMNS[col])
    assert model.data(model.index(1, 0), Qt.ItemDataRole.BackgroundRole).color() == themed.answer_fill
    view.resize(900, 160)
    view.show()
    qtbot.waitExposed(view)
    shot(view, "steps")


def test_run_log_links_are_readable_and_follow_a_theme_switch(themed: theme.Theme, qtbot) -> None:  # type: ignore[no-untyped-def]
    log = RunLogView()
    qtbot.addWidget(log)
    log.append_lines([RunLogLine(1.0, "Chat", 0, "success", "[    1 ms] Chat       ok"),
                      RunLogLine(9.0, "Calculator", 0, "error", "[    9 ms] Calculator error: bad input")])
    log.append_note("Run failed")
    paper = log.palette().base().color()
    fragments = link_formats(log)
    assert [name for name, _ in fragments] == ["link", "error", "error", "error", "note"]
    for _name, colour in fragments:
        assert theme.contrast(colour, paper) >= READABLE
    assert fragments[0][1] == themed.link_text
    log.resize(480, 120)
    log.show()
    qtbot.waitExposed(log)
    shot(log, "run-log")
    # lines already shown take the other theme's colours when the system switches
    QApplication.setPalette(QApplication.style().standardPalette() if themed.dark else dark_palette())
    theme.manager().refresh()
    assert theme.current().dark != themed.dark
    assert link_formats(log)[0][1] == theme.current().link_text
    assert link_formats(log)[-1][1] == theme.current().muted_text


def test_the_run_log_colour_property_is_qts_first_user_property() -> None:
    """The run log names its property by number (QTextFormat is imported at its first line)."""
    from PySide6.QtGui import QTextFormat

    from gui.panels.run_log_view import COLOUR_PROPERTY

    assert COLOUR_PROPERTY == int(QTextFormat.Property.UserProperty) + 1


def link_formats(log: RunLogView) -> list[tuple[str, QColor]]:
    """(theme colour name, foreground) of every coloured fragment, in order."""
    from gui.panels.run_log_view import COLOUR_PROPERTY

    out = []
    block = log.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.stringProperty(COLOUR_PROPERTY):
                out.append((fmt.stringProperty(COLOUR_PROPERTY), fmt.foreground().color()))
            it += 1
        block = block.next()
    return out


def test_iteration_detail_labels_are_readable(themed: theme.Theme, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QPalette

    from gui.panels.iteration_detail import AMBER, role_colours

    base = QApplication.palette().color(QPalette.ColorRole.Base)
    for label, colour in {**role_colours(themed), "edited": AMBER[themed.dark], "error": themed.error_text.name()}.items():
        assert theme.contrast(QColor(colour), base) >= READABLE, (label, colour, base.name())
