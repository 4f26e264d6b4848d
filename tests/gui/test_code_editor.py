"""Code parameters (the Code Tool's Python) get a code editor: monospace, line numbers, a handle
to make it taller and a larger dialog whose OK applies the code as one undo step."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QFontInfo, QMouseEvent
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from gui import theme
from gui.inspector.code_editor import MIN_LINES, CodeField

from .editor_support import editor_env, focus_out, make_window  # noqa: F401  (fixtures)
from .test_theme_contrast import themed  # noqa: F401  (fixture)

SHOTS = os.environ.get("MINI_N8N_SCREENSHOTS")
TOOL = "@n8n/n8n-nodes-langchain.toolCode"
CODE = "def double(x):\n    return 2 * x\n\nreturn str(double(len(query)))\n"


def code_field(qtbot, make_window):  # type: ignore[no-untyped-def]
    window = make_window()
    window.resize(1440, 900)
    name = window.add_node(TOOL, (0, 0))
    window.set_parameter(name, ("pythonCode",), CODE)
    window.scene.select_names([name])
    field = window.inspector.builder.editors[("pythonCode",)]
    assert isinstance(field, CodeField)
    return window, name, field


def test_code_field_is_a_code_editor(themed: theme.Theme, qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window, name, field = code_field(qtbot, make_window)
    editor = field.editor
    qtbot.waitUntil(editor.isVisible)
    assert QFontInfo(editor.font()).fixedPitch()
    assert editor.toPlainText() == CODE
    assert editor.line_numbers_shown()[:5] == [1, 2, 3, 4, 5]
    assert editor.gutter.width() > 0 and editor.viewportMargins().left() == editor.gutter.width()
    assert editor.height() >= editor.fontMetrics().lineSpacing() * MIN_LINES
    if SHOTS:
        window.grab().save(str(Path(SHOTS) / f"code-editor-{'dark' if themed.dark else 'light'}.png"))
    # the handle under it makes it taller
    before = editor.height()
    handle = field.handle
    start = handle.rect().center()
    qtbot.mousePress(handle, Qt.MouseButton.LeftButton, pos=start)
    end = handle.mapToGlobal(start) + type(start)(0, 120)
    move = QMouseEvent(QEvent.Type.MouseMove, QPointF(handle.mapFromGlobal(end)), QPointF(end),
                       Qt.MouseButton.NoButton, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(handle, move)
    qtbot.mouseRelease(handle, Qt.MouseButton.LeftButton)
    assert editor.height() == before + 120


def test_typing_commits_on_focus_out_and_tab_indents(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window, name, field = code_field(qtbot, make_window)
    field.editor.setFocus()
    qtbot.waitUntil(field.editor.hasFocus)
    field.editor.moveCursor(field.editor.textCursor().MoveOperation.End)
    qtbot.keyClick(field.editor, Qt.Key.Key_Tab)
    qtbot.keyClicks(field.editor, "# done")
    assert field.editor.hasFocus()  # Tab indents in code instead of leaving the field
    focus_out(qtbot, field.editor)
    qtbot.waitUntil(lambda: window.document.node(name).parameters["pythonCode"] == CODE + "    # done")


def test_larger_dialog_applies_on_ok_only(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window, name, field = code_field(qtbot, make_window)
    steps = window.undo_stack.count()
    qtbot.mouseClick(field.expand, Qt.MouseButton.LeftButton)
    dialog = field.dialog
    assert dialog is not None and dialog.editor.toPlainText() == CODE
    qtbot.waitExposed(dialog)
    dialog.editor.setPlainText("return 'cancelled'\n")
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Cancel).click()
    assert window.document.node(name).parameters["pythonCode"] == CODE
    field = window.inspector.builder.editors[("pythonCode",)]
    qtbot.mouseClick(field.expand, Qt.MouseButton.LeftButton)
    dialog = field.dialog
    qtbot.waitExposed(dialog)
    assert dialog.width() >= 800
    if SHOTS:
        dialog.grab().save(str(Path(SHOTS) / "code-dialog.png"))
    dialog.editor.setPlainText("return 'from the dialog'\n")
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: window.document.node(name).parameters["pythonCode"] == "return 'from the dialog'\n")
    assert window.undo_stack.count() == steps + 1
