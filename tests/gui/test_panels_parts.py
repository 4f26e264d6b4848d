"""Panel parts on their own: message labels, node data items, JSON tree, chat streaming, Ctrl+C."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from gui.panels.chat_panel import ChatPanel
from gui.panels.iteration_detail import call_line, message_parts
from gui.panels.json_tree import MAX_CHILDREN, JsonTree
from gui.panels.node_data import readable
from engine.steps_table import StepRow
from gui.panels.steps_view import StepsView


def test_messages_are_labelled_system_history_user_scratchpad() -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "earlier question"},
        {"role": "assistant", "content": "earlier answer"},
        {"role": "user", "content": "now"},
        {"role": "assistant", "content": "", "toolCalls": [{"id": "c1", "name": "calc", "args": {"e": "1"}}]},
        {"role": "tool", "content": "1", "toolCallId": "c1"},
    ]
    assert [label for label, _m in message_parts(messages)] == [
        "system", "history", "history", "user", "scratchpad", "scratchpad"]
    assert call_line(messages[4]["toolCalls"][0]) == '→ calc({"e":"1"})  [c1]'
    assert call_line({"id": "c2", "name": "calc", "args": "{broken"}) == "→ calc({broken)  [c2]"


def test_node_data_shows_items_not_wrappers() -> None:
    assert readable({"main": [[{"json": {"a": 1}}, {"json": {"a": 2}}]]}) == {
        "main": {"item 0": {"a": 1}, "item 1": {"a": 2}}}
    assert readable({"main": [[{"json": {"a": 1}}], []]}) == {
        "main": {"output 0": {"item 0": {"a": 1}}, "output 1": {}}}


def test_json_tree_shows_values_and_cuts_long_lists(qtbot) -> None:
    tree = JsonTree()
    qtbot.addWidget(tree)
    tree.set_value({"out": {"text": "two\nlines", "n": 3, "ok": True, "none": None, "list": list(range(MAX_CHILDREN + 5))}})
    assert tree.value_at("out", "text") == "two⏎ lines"
    assert [tree.value_at("out", k) for k in ("n", "ok", "none")] == ["3", "true", "null"]
    assert tree.value_at("out", "list") == f"[{MAX_CHILDREN + 5} items]"
    assert tree.value_at("out", "list", "…") == "5 more"


def test_json_tree_counts_in_singular_and_plural(qtbot) -> None:
    tree = JsonTree()
    qtbot.addWidget(tree)
    tree.set_value({"one": {"a": 1}, "two": {"a": 1, "b": 2}, "single": [1], "none": []})
    assert [tree.value_at(k) for k in ("one", "two", "single", "none")] == ["{1 key}", "{2 keys}", "[1 item]", "[0 items]"]


def test_chat_streams_and_restarts_on_a_new_model_call(qtbot) -> None:
    chat = ChatPanel()
    qtbot.addWidget(chat)
    sent: list[str] = []
    chat.send_requested.connect(sent.append)
    chat.input.setPlainText("  hello  ")
    qtbot.keyClick(chat.input, Qt.Key.Key_Return)
    assert sent == ["hello"] and chat.input.toPlainText() == ""
    chat.add_user("hello")
    chat.begin_reply()
    chat.stream("Let me ")
    chat.stream("check.")
    assert chat.reply_text() == "Let me check."
    chat.stream("The answer", restart=True)  # the agent's next iteration streams its own text
    assert chat.reply_text() == "The answer"
    chat.end_reply("The answer is 4.")
    assert [(e.role, e.text, e.streaming) for e in chat.entries] == [
        ("user", "hello", False), ("assistant", "The answer is 4.", False)]
    chat.set_busy(True)
    chat.input.setPlainText("again")
    chat.submit()
    assert sent == ["hello"] and chat.input.toPlainText() == "again"  # nothing is sent while a run goes


def test_ctrl_c_copies_the_selected_row(qtbot, qapp) -> None:
    view = StepsView()
    qtbot.addWidget(view)
    view.show()
    view.model.append_rows([StepRow(iterations=(2,), item=1, agent="A", tool="calc", kind="tool", tool_call_id="c",
                                    tool_input={"e": "1/0"}, observation="Error: division by zero", status="error")])
    view.select_row(0)
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    copied = json.loads(qapp.clipboard().text())
    assert copied["iteration"] == 2 and copied["toolInput"] == {"e": "1/0"} and copied["status"] == "error"
    assert view.summary.text() == "1 iteration · 1 tool call · 1 failed"
