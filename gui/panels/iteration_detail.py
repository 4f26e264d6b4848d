"""The Iteration detail tab: one step in full — what the model read, what it answered, what the tool did."""

from __future__ import annotations

import html
import json
from typing import Any

from PySide6.QtWidgets import QTextBrowser, QWidget

from engine.connection_types import AI_LANGUAGE_MODEL, AI_TOOL
from engine.run_log import compact
from engine.steps_table import StepRow
from gui import theme

PURPLE = {False: "#6b4fbb", True: "#b49cff"}  # the system prompt, light or dark
AMBER = {False: "#b06000", True: "#f5a524"}  # the agent's scratchpad and edits made while paused


def role_colours(t: theme.Theme) -> dict[str, str]:
    """The label colour of each kind of message, from the theme (readable on light and dark)."""
    return {"system": PURPLE[t.dark], "history": t.muted_text.name(), "user": t.user_name.name(),
            "scratchpad": AMBER[t.dark], "reply": t.agent_name.name(), "tool": AMBER[t.dark]}


def pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def message_parts(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Label each message as system, history, user (the prompt) or scratchpad (this run's tool steps)."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    parts: list[tuple[str, dict[str, Any]]] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "system" and i == 0:
            label = "system"
        elif i < last_user:
            label = "history"
        elif i == last_user:
            label = "user"
        else:
            label = "scratchpad"
        parts.append((label, message))
    return parts


def call_line(call: dict[str, Any]) -> str:
    """A tool call on one line: `→ name({"arg":1})  [id]`."""
    args = call.get("args")
    rendered = args if isinstance(args, str) else compact(args)
    return f"→ {call.get('name', '')}({rendered})  [{call.get('id', '')}]"


def _first_json(outputs: dict[str, Any], conn: str) -> Any:
    lists = outputs.get(conn) or [[]]
    items = lists[0] if lists else []
    values = [item.get("json", {}) for item in items]
    return values[0] if len(values) == 1 else values


def _pre(text: str) -> str:
    return f"<pre style='margin:2px 0 8px 12px; white-space:pre-wrap'>{html.escape(text)}</pre>"


def _heading(text: str) -> str:
    return f"<h3 style='margin:10px 0 4px 0'>{html.escape(text)}</h3>"


def messages_html(messages: list[dict[str, Any]], tools: list[Any] | None = None) -> str:
    """Messages as the model gets them, each labelled system, history, user or scratchpad."""
    out: list[str] = []
    t = theme.current()
    colours, muted = role_colours(t), t.muted_text.name()
    for label, message in message_parts(messages):
        colour = colours.get(label, muted)
        role = message.get("role", "")
        head = f"<span style='color:{colour}; font-weight:bold'>{label}</span>"
        if label != role:
            head += f" <span style='color:{muted}'>({html.escape(str(role))})</span>"
        body = str(message.get("content", ""))
        for call in message.get("toolCalls") or []:
            body += ("\n" if body else "") + call_line(call)
        if message.get("toolCallId"):
            head += f" <span style='color:{muted}'>for {html.escape(str(message['toolCallId']))}</span>"
        out.append(f"<div>{head}</div>" + _pre(body or "(empty)"))
    if tools:
        out.append(f"<p style='color:{muted}'>tools offered: {html.escape(', '.join(map(str, tools)))}</p>")
    return "\n".join(out)


def detail_html(row: StepRow) -> str:
    """The whole iteration of `row` as HTML for the detail browser."""
    out: list[str] = []
    title = f"Iteration {row.iteration_text} · item {row.item} · {row.agent}"
    if row.kind == "tool":
        title += f" → {row.tool}" + (f" ({row.tool_call_id})" if row.tool_call_id else "")
    else:
        title += f" → {row.tool}"
    out.append(f"<h2 style='margin:2px 0'>{html.escape(title)}</h2>")
    facts = [f"status <b>{html.escape(row.status)}</b>"]
    if row.model_ms is not None:
        facts.append(f"model {row.model_ms:.1f} ms")
    if row.tokens_in is not None or row.tokens_out is not None:
        facts.append(f"tokens in {row.tokens_in if row.tokens_in is not None else '?'} / out "
                     f"{row.tokens_out if row.tokens_out is not None else '?'}")
    if row.tool_ms is not None:
        facts.append(f"tool {row.tool_ms:.1f} ms")
    out.append("<p>" + " · ".join(facts) + "</p>")

    task = row.model_task
    if task is not None:
        request = _first_json(task.input, AI_LANGUAGE_MODEL) or {}
        messages = request.get("messages", []) if isinstance(request, dict) else []
        out.append(_heading(f"Messages the model received ({len(messages)})"))
        out.append(messages_html(messages, request.get("tools") if isinstance(request, dict) else None))
        out.append(_heading("Raw reply of the model"))
        if task.error is not None:
            out.append(f"<p style='color:{theme.current().error_text.name()}'>error: {html.escape(task.error.message)}</p>")
        else:
            reply = _first_json(task.data, AI_LANGUAGE_MODEL) or {}
            content = reply.get("content", "") if isinstance(reply, dict) else ""
            out.append("<div><b>text</b></div>" + _pre(content or "(no text)"))
            calls = reply.get("toolCalls") if isinstance(reply, dict) else None
            if calls:
                out.append("<div><b>tool calls</b></div>" + _pre(pretty(calls)))
            if isinstance(reply, dict) and reply.get("usage"):
                out.append("<div><b>usage</b></div>" + _pre(pretty(reply["usage"])))

    if row.kind == "tool":
        out.append(_heading(f"Tool {row.tool}" + (f" (node {row.tool_node})" if row.tool_node else "")))
        tool = row.tool_task
        tool_input = _first_json(tool.input, AI_TOOL) if tool is not None else row.tool_input
        out.append("<div><b>input</b></div>" + _pre(pretty(tool_input)))
        if tool is not None and tool.error is not None:
            text = tool.error.message + (f"\n{tool.error.description}" if tool.error.description else "")
            out.append(f"<div style='color:{theme.current().error_text.name()}'><b>error</b></div>" + _pre(text))
        elif tool is not None:
            out.append("<div><b>output</b></div>" + _pre(pretty(_first_json(tool.data, AI_TOOL))))
        out.append("<div><b>observation (what the model reads next)</b></div>" + _pre(row.observation or "(none yet)"))
        if row.edited_from is not None:
            out.append(f"<div style='color:{AMBER[theme.current().dark]}'><b>edited while paused; the tool returned</b></div>"
                       + _pre(row.edited_from))
    elif row.kind != "answer":
        out.append(_heading("Error") + _pre(row.observation))
    return "\n".join(out)


class IterationDetail(QTextBrowser):
    """Shows `detail_html` of the selected row; a hint when nothing is selected."""

    EMPTY = "Select a row in Intermediate steps to see that iteration in full."

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.row: StepRow | None = None
        self.show_row(None)

    def show_row(self, row: StepRow | None) -> None:
        self.row = row
        if row is None:
            self.setHtml(f"<p style='color:{theme.current().muted_text.name()}'>{self.EMPTY}</p>")
        else:
            self.setHtml(detail_html(row))
