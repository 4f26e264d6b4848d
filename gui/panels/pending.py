"""The Pending tab: while a debug run is paused, what is about to happen, editable before it does.

Before a model call it shows the exact messages; after the reply, the reply's text and tool
calls; before a tool call, the tool's arguments; after a tool result, the observation the model
will read. `edit()` turns what the user typed into the edit the engine applies on Continue/Step.
"""

from __future__ import annotations

import html
import json
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from .iteration_detail import messages_html

TITLES = {
    "node": "before node",
    "before_model": "before the model call",
    "after_model": "after the model replied",
    "before_tool": "before the tool call",
    "tool_result": "after the tool result",
    "tool_error": "after a tool error",
}
HINTS = {
    "node": "The node runs with the input below.",
    "before_model": "These are the exact messages about to go to the model.",
    "after_model": "The agent acts on this reply next: change the text or the tool calls, then Continue or Step.",
    "before_tool": "The tool runs with these arguments next: change them, then Continue or Step.",
    "tool_result": "The model reads this observation next: change it, then Continue or Step.",
    "tool_error": "The model reads this error next: change it, then Continue or Step.",
}


class EditProblem(ValueError):
    """What the user typed cannot be applied; the message says what and where."""


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _parse_json(text: str, what: str) -> Any:
    """`text` decoded; `what` names the field in a message ("the arguments")."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise EditProblem(f"Not valid JSON in {what}: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None


def _editor(read_only: bool = False, mono: bool = True) -> QPlainTextEdit:
    editor = QPlainTextEdit()
    editor.setReadOnly(read_only)
    editor.setTabChangesFocus(True)
    if mono:
        editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return editor


def _labelled(label: str, widget: QWidget) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    caption = QLabel(label)
    caption.setObjectName("pendingCaption")
    layout.addWidget(caption)
    layout.addWidget(widget)
    return box


class PendingView(QWidget):
    """Shows a pause point (`show_point`) and builds the user's edit of it (`edit`)."""

    continue_requested = Signal()
    step_requested = Signal()
    stop_requested = Signal()

    EMPTY = ("Nothing is pending. Debug run (F5) stops at breakpoints: F9 on a node, or the agent-loop "
             "breakpoints in the Debug menu. Step (F10) stops at every model call and tool call.")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.where: dict[str, Any] | None = None
        self.live = True
        self.title = QLabel()
        self.title.setObjectName("pendingTitle")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.hint.setObjectName("pendingHint")
        self.problem = QLabel()
        self.problem.setObjectName("pendingProblem")
        self.problem.setStyleSheet("color:#a1160a")
        self.problem.setWordWrap(True)
        self.problem.hide()

        self.messages = QTextBrowser()  # before_model: read only
        self.messages.setOpenLinks(False)
        self.args = _editor()  # before_tool
        self.observation = _editor(mono=False)  # tool_result / tool_error
        self.reply_text = _editor(mono=False)  # after_model
        self.reply_calls = _editor()
        self.node_input = _editor(read_only=True)  # node
        reply = QSplitter(Qt.Orientation.Horizontal)
        reply.addWidget(_labelled("Reply text", self.reply_text))
        reply.addWidget(_labelled("Tool calls (JSON list of {name, args, id})", self.reply_calls))
        self.args_box = _labelled("Arguments (JSON)", self.args)
        self.observation_box = _labelled("Observation", self.observation)
        self.placeholder = QLabel(self.EMPTY)
        self.placeholder.setWordWrap(True)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setObjectName("placeholder")
        self.pages = QStackedWidget()
        for page in (self.placeholder, self.messages, self.args_box, self.observation_box, reply,
                     _labelled("Input items", self.node_input)):
            self.pages.addWidget(page)
        self._page_of = {None: 0, "before_model": 1, "before_tool": 2, "tool_result": 3, "tool_error": 3,
                         "after_model": 4, "node": 5}

        self.continue_button = QPushButton("Continue (F5)")
        self.continue_button.setDefault(True)
        self.step_button = QPushButton("Step (F10)")
        self.stop_button = QPushButton("Stop (Shift+F5)")
        self.revert_button = QPushButton("Undo my edits")
        self.continue_button.clicked.connect(self.continue_requested)
        self.step_button.clicked.connect(self.step_requested)
        self.stop_button.clicked.connect(self.stop_requested)
        self.revert_button.clicked.connect(self._fill)
        buttons = QHBoxLayout()
        buttons.addWidget(self.continue_button)
        buttons.addWidget(self.step_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        buttons.addWidget(self.revert_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.hint)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.problem)
        layout.addLayout(buttons)
        self.show_point(None)

    # ----- showing -------------------------------------------------------------------------------
    @property
    def kind(self) -> str | None:
        return None if self.where is None else str(self.where.get("kind"))

    def show_point(self, where: dict[str, Any] | None, live: bool = True) -> None:
        """Show the pause point `where` (ExecutionPaused.where, with its payload); None: nothing pending.
        `live` False: a stored execution's pause, shown read-only (Resume continues it)."""
        self.where = where
        self.live = live
        self.problem.hide()
        self.pages.setCurrentIndex(self._page_of.get(self.kind, 0))
        for button in (self.continue_button, self.step_button, self.stop_button, self.revert_button):
            button.setVisible(where is not None and live)
        self.revert_button.setVisible(live and self.kind in ("before_tool", "tool_result", "tool_error", "after_model"))
        for editor in (self.args, self.observation, self.reply_text, self.reply_calls):
            editor.setReadOnly(not live)
        if where is None:
            self.title.setText("<b>Not paused</b>")
            self.hint.setText("")
            self.hint.hide()
            return
        self.hint.show()
        self.title.setText(self._title_html(where))
        self.hint.setText(HINTS.get(self.kind or "", "") if live else
                          "This execution is stored paused here: Resume in the Executions panel continues it.")
        self._fill()

    @staticmethod
    def _title_html(where: dict[str, Any]) -> str:
        kind = str(where.get("kind"))
        node = html.escape(str(where.get("node", "")))
        facts = []
        if where.get("agent"):
            facts.append(html.escape(str(where["agent"])))
        if where.get("iteration") is not None:
            facts.append(f"iteration {where['iteration']}")
        if where.get("toolCallId"):
            facts.append(f"call {html.escape(str(where['toolCallId']))}")
        tail = f" <span style='color:#777'>· {' · '.join(facts)}</span>" if facts else ""
        return (f"<span style='color:#b06000; font-weight:bold'>❚❚ Paused {TITLES.get(kind, kind)}</span>"
                f" &nbsp;<b>{node}</b>{tail}")

    def _fill(self) -> None:
        """Put the pending values in the fields (again: Undo my edits)."""
        self.problem.hide()
        payload = (self.where or {}).get("payload") or {}
        kind = self.kind
        if kind == "before_model":
            messages = payload.get("messages") or []
            self.messages.setHtml(messages_html(messages, payload.get("tools")))
            if self.live:
                self.hint.setText(f"These are the exact {len(messages)} messages about to go to the model "
                                  "(the newest at the bottom).")
            bar = self.messages.verticalScrollBar()
            bar.setValue(bar.maximum())
        elif kind == "before_tool":
            self.args.setPlainText(_pretty(payload.get("args", {})))
        elif kind in ("tool_result", "tool_error"):
            self.observation.setPlainText(str(payload.get("observation", "")))
        elif kind == "after_model":
            reply = payload.get("reply") or {}
            self.reply_text.setPlainText(str(reply.get("content") or ""))
            self.reply_calls.setPlainText(_pretty(reply.get("toolCalls") or []))
        elif kind == "node":
            self.node_input.setPlainText(_pretty(payload.get("input", [])))

    def focus_editor(self) -> None:
        editor = {"before_tool": self.args, "tool_result": self.observation, "tool_error": self.observation,
                  "after_model": self.reply_text}.get(self.kind or "")
        if editor is not None:
            editor.setFocus()

    # ----- editing -------------------------------------------------------------------------------
    def edit(self) -> dict[str, Any] | None:
        """The edit of the pending payload the user made, or None when nothing changed.
        Raises EditProblem (and shows it) when what was typed cannot be applied."""
        try:
            edit = self._edit()
        except EditProblem as exc:
            self.problem.setText(str(exc))
            self.problem.show()
            raise
        self.problem.hide()
        return edit

    def _edit(self) -> dict[str, Any] | None:
        payload = (self.where or {}).get("payload") or {}
        kind = self.kind
        if kind == "before_tool":
            args = _parse_json(self.args.toPlainText(), "the arguments")
            if not isinstance(args, dict):
                raise EditProblem("The arguments must be a JSON object, like {\"input\": \"6 * 7\"}")
            return None if args == payload.get("args") else {"args": args}
        if kind in ("tool_result", "tool_error"):
            text = self.observation.toPlainText()
            return None if text == str(payload.get("observation", "")) else {"observation": text}
        if kind == "after_model":
            original = payload.get("reply") or {}
            content = self.reply_text.toPlainText()
            calls = self._tool_calls(original.get("toolCalls") or [])
            if content == str(original.get("content") or "") and calls == (original.get("toolCalls") or []):
                return None
            return {"reply": {"content": content, "toolCalls": calls}}
        return None

    def _tool_calls(self, original: list[dict[str, Any]]) -> list[dict[str, Any]]:
        calls = _parse_json(self.reply_calls.toPlainText() or "[]", "the tool calls")
        if not isinstance(calls, list):
            raise EditProblem("The tool calls must be a JSON list (use [] for none)")
        used = {str(c.get("id")) for c in original if isinstance(c, dict)}
        out: list[dict[str, Any]] = []
        for n, call in enumerate(calls, start=1):
            if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
                raise EditProblem(f"Tool call {n} needs a \"name\" (the tool to call)")
            args = call.get("args", {})
            if not isinstance(args, (dict, str)):
                raise EditProblem(f"Tool call {n}: \"args\" must be a JSON object")
            call_id = str(call.get("id") or "")
            if not call_id:
                call_id = next(f"edited-{k}" for k in range(n, n + len(calls) + len(used) + 1) if f"edited-{k}" not in used)
                used.add(call_id)
            out.append({"id": call_id, "name": call["name"], "args": args})
        return out
