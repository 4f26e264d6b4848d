"""The palette's selected node row stays readable in light and dark: its name and description are
drawn in theme colours on the theme's selection fill, never the style's white on white."""

from __future__ import annotations

from PySide6.QtGui import QColor

from engine.registry import builtin_registry
from gui import theme
from gui.palette import Palette, row_colours

from .test_theme_contrast import READABLE, shot, themed  # noqa: F401  (fixture)


def test_the_palettes_selected_row_is_readable(themed: theme.Theme, qtbot) -> None:  # type: ignore[no-untyped-def]
    palette = Palette(builtin_registry())
    palette.populate()
    qtbot.addWidget(palette)
    palette.setStyleSheet(theme.style_sheet())  # the editor's item style, under which Fusion drew white on white
    palette.resize(280, 400)
    palette.show()
    qtbot.waitExposed(palette)
    group = palette.model.index(0, 0)
    node_row = palette.model.index(0, 0, group)
    assert node_row.isValid() and node_row.parent() == group
    palette.tree.setCurrentIndex(node_row)
    assert palette.tree.selectionModel().isSelected(node_row)
    name, description, fill = row_colours(themed)
    assert theme.contrast(name, fill) >= READABLE
    assert theme.contrast(description, palette.tree.palette().base().color()) >= READABLE
    rect = palette.tree.visualRect(node_row)
    image = palette.tree.viewport().grab().toImage()
    assert QColor(image.pixel(rect.right() - 12, rect.center().y())).name() == fill.name()
    shot(palette, "palette")

