"""Colours and fonts of the editor, light or dark after the system palette.

Canvas items read the current `Theme` when they paint, so switching the system colour scheme
repaints everything without rebuilding items.
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QFont, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

from mini_n8n_resources import ICONS, STYLE_SHEET

# n8n's sticky note colours 1..7 (yellow, orange, red, green, blue, purple, grey).
STICKY_LIGHT = ["#fff5d6", "#fde9d9", "#fbdadd", "#e3f0e0", "#dceaf7", "#e7e1f6", "#eeeeee"]
STICKY_DARK = ["#4a4128", "#4d3a2c", "#4d2f33", "#2f4231", "#2c3c4d", "#3b3450", "#3a3a3a"]
STICKY_BORDER = ["#f1c75a", "#f0a46c", "#ec8a93", "#8cc283", "#7eb0e0", "#a890e3", "#bdbdbd"]

PORT_COLOURS = {
    "main": "#8d939e",
    "ai_languageModel": "#7b61ff",
    "ai_memory": "#e0882c",
    "ai_tool": "#2aa876",
    "ai_outputParser": "#d14d8a",
}

STATUS_COLOURS = {
    "running": "#ff9b26",
    "success": "#2fb36d",
    "error": "#e5484d",
    "paused": "#3b82f6",
}


class Theme(NamedTuple):
    dark: bool
    canvas: QColor
    grid: QColor
    node_fill: QColor
    node_border: QColor
    node_text: QColor
    muted_text: QColor
    accent: QColor
    selection: QColor
    link: QColor
    disabled_fill: QColor
    unsupported: QColor
    # panels: backgrounds under node_text, and coloured text on the panel's paper (canvas-like)
    user_fill: QColor
    user_name: QColor
    agent_fill: QColor
    agent_name: QColor
    error_fill: QColor
    error_text: QColor
    answer_fill: QColor
    link_text: QColor
    row_selected: QColor

    def sticky_fill(self, colour: int) -> QColor:
        palette = STICKY_DARK if self.dark else STICKY_LIGHT
        return QColor(palette[(max(1, min(7, colour)) - 1)])

    def sticky_border(self, colour: int) -> QColor:
        return QColor(STICKY_BORDER[(max(1, min(7, colour)) - 1)])

    @staticmethod
    def port_colour(conn_type: str) -> QColor:
        return QColor(PORT_COLOURS.get(conn_type, "#8d939e"))

    @staticmethod
    def status_colour(status: str) -> QColor:
        return QColor(STATUS_COLOURS.get(status, "#8d939e"))


LIGHT = Theme(
    dark=False,
    canvas=QColor("#f4f5f8"),
    grid=QColor("#c9ccd3"),
    node_fill=QColor("#ffffff"),
    node_border=QColor("#c3c7cf"),
    node_text=QColor("#1f2430"),
    muted_text=QColor("#6b7280"),
    accent=QColor("#ff6d5a"),
    selection=QColor("#5c6370"),  # grey as n8n's: no state (error red, paused blue) looks like it
    link=QColor("#9aa0ab"),
    disabled_fill=QColor("#eceef2"),
    unsupported=QColor("#d97706"),
    user_fill=QColor("#e8f0fb"),
    user_name=QColor("#1a5fb4"),
    agent_fill=QColor("#eef6ef"),
    agent_name=QColor("#1e7b34"),
    error_fill=QColor("#fde2e1"),
    error_text=QColor("#a1160a"),
    answer_fill=QColor("#e6f4ea"),
    link_text=QColor("#1a5fb4"),
    row_selected=QColor("#ffe1dc"),
)

DARK = Theme(
    dark=True,
    canvas=QColor("#1d1f24"),
    grid=QColor("#3a3e47"),
    node_fill=QColor("#2b2e35"),
    node_border=QColor("#4a4f5a"),
    node_text=QColor("#eceef2"),
    muted_text=QColor("#9ba1ad"),
    accent=QColor("#ff7a66"),
    selection=QColor("#b8bec9"),
    link=QColor("#7c828e"),
    disabled_fill=QColor("#25272c"),
    unsupported=QColor("#f59e0b"),
    user_fill=QColor("#1f3047"),
    user_name=QColor("#8cb8ff"),
    agent_fill=QColor("#1f3326"),
    agent_name=QColor("#7fd49a"),
    error_fill=QColor("#4a2325"),
    error_text=QColor("#ff9d94"),
    answer_fill=QColor("#1f3a2a"),
    link_text=QColor("#8cb8ff"),
    row_selected=QColor("#4a302c"),
)


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two colours (1 to 21; body text wants at least 4.5)."""

    def luminance(c: QColor) -> float:
        def channel(v: float) -> float:
            return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def system_is_dark() -> bool:
    app = QGuiApplication.instance()
    if app is None:
        return False
    window = QGuiApplication.palette().color(QPalette.ColorRole.Window)
    return window.lightness() < 128


class ThemeManager(QObject):
    """Holds the current theme; emits `changed` when the system palette switches light/dark."""

    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.theme = DARK if system_is_dark() else LIGHT
        hints = QGuiApplication.styleHints() if QGuiApplication.instance() else None
        if hints is not None and hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(lambda *_: self.refresh())

    def refresh(self) -> None:
        theme = DARK if system_is_dark() else LIGHT
        if theme is not self.theme:
            self.theme = theme
            self.changed.emit()


_manager: ThemeManager | None = None


def manager() -> ThemeManager:
    global _manager
    if _manager is None:
        _manager = ThemeManager()
    return _manager


def current() -> Theme:
    return manager().theme


# ----- icons and fonts ----------------------------------------------------------------------
_renderers: dict[str, QSvgRenderer] = {}


def icon_renderer(name: str) -> QSvgRenderer:
    """The SVG renderer of a node-type icon; the `unsupported` icon when the file is missing."""
    if name not in _renderers:
        path = ICONS / f"{name}.svg"
        if not path.exists():
            path = ICONS / "unsupported.svg"
        _renderers[name] = QSvgRenderer(str(path))
    return _renderers[name]


def icon(name: str, size: int = 32) -> QIcon:
    pixmap = QPixmap(size * 2, size * 2)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    icon_renderer(name).render(painter)
    painter.end()
    pixmap.setDevicePixelRatio(2.0)
    return QIcon(pixmap)


def ui_font(point_size: float = 9.5, bold: bool = False) -> QFont:
    font = QFont(QGuiApplication.font())
    font.setPointSizeF(point_size)
    font.setBold(bold)
    return font


def style_sheet() -> str:
    path = STYLE_SHEET
    if not path.exists():
        return ""
    text = path.read_text(encoding="utf-8")
    theme = current()
    return (
        text.replace("@accent", theme.accent.name())
        .replace("@muted", theme.muted_text.name())
        .replace("@disabled", theme.link.name())
        .replace("@border", theme.node_border.name())
        .replace("@error", STATUS_COLOURS["error"])
    )
