"""Light and dark: the editor follows the system palette, canvas included."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from gui import theme

from .editor_support import EXAMPLE, editor_env, make_window  # noqa: F401  (fixtures)


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in ((QPalette.ColorRole.Window, "#262626"), (QPalette.ColorRole.WindowText, "#eeeeee"),
                         (QPalette.ColorRole.Base, "#1e1e1e"), (QPalette.ColorRole.Text, "#eeeeee"),
                         (QPalette.ColorRole.Button, "#303030"), (QPalette.ColorRole.ButtonText, "#eeeeee")):
        palette.setColor(role, QColor(colour))
    return palette


def canvas_paper(window) -> QColor:  # type: ignore[no-untyped-def]
    image = window.canvas.viewport().grab().toImage()
    return QColor(image.pixel(7, 7))


def test_the_canvas_follows_a_switch_to_a_dark_system_palette(qtbot, make_window) -> None:
    window = make_window(EXAMPLE)
    light = QApplication.palette()
    assert not theme.current().dark
    assert canvas_paper(window).lightness() > 200
    try:
        QApplication.setPalette(dark_palette())
        qtbot.waitUntil(lambda: theme.current().dark)
        assert canvas_paper(window).lightness() < 60
        port = window.canvas.node_item("AI Agent").port("in", "main")
        assert port.pen().color() == theme.current().canvas  # ports restyled, not only repainted
    finally:
        QApplication.setPalette(light)
        theme.manager().refresh()
    assert not theme.current().dark
