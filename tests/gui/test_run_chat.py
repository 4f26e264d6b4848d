"""Chatting with an agent from the editor: steps table, canvas statuses, run log, iteration detail."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from PySide6.QtCore import QPoint, Qt

from engine.executor import Engine
from engine.hooks import Hooks
from engine.registry import builtin_registry
from engine.run_log import RunLog
from nodes.triggers.chat_trigger import chat_item
from tests.builders import CALCULATOR, agent_workflow, tool_call

THINK = "@n8n/n8n-nodes-langchain.toolThink"
QUESTION = "A shirt costs 25 dollars. How much do 17 shirts cost?"
ANSWER = "17 shirts cost 425 dollars."

REPLIES = [
    {"text": "Let me work it out.", "toolCalls": [tool_call("Calculator", {"input": "17 * 25"}),
                                                    tool_call("Calculator", {"input": "1 / 0"})],
     "usage": {"promptTokens": 40, "completionTokens": 12}},
    {"text": "", "toolCalls": [tool_call("thinking_tool", {"input": "425 is right; the division failed"})],
     "usage": {"promptTokens": 75, "completionTokens": 9}},
    {"text": ANSWER, "usage": {"promptTokens": 96, "completionTokens": 7}},
]


def three_iteration_workflow():  # type: ignore[no-untyped-def]
    return agent_workflow(REPLIES, tools=[("Calculator", CALCULATOR, {}), ("Think", THINK, {})], memory=True)


def send(qtbot, controller, text: str):  # type: ignore[no-untyped-def]
    """Type `text` in the chat box, press Enter, wait for the run to end; returns its outcome."""
    controller.chat.input.setPlainText(text)
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as finished:
        qtbot.keyClick(controller.chat.input, Qt.Key.Key_Return)
    return finished.args[0]


def strip_time(text: str) -> str:
    return re.sub(r"^\[\s*\d+ ms\] ", "", text)


@pytest.fixture
def finished_run(run_window, qtbot):  # type: ignore[no-untyped-def]
    window, controller = run_window(three_iteration_workflow())
    outcome = send(qtbot, controller, QUESTION)
    return window, controller, outcome


def test_chat_message_fills_the_steps_table(finished_run) -> None:
    _window, controller, outcome = finished_run
    assert outcome.status == "success", outcome.error
    rows = [(r.iteration_text, r.item, r.tool, r.tool_input, r.observation, r.status, r.tokens_in, r.tokens_out)
            for r in controller.output.steps_model.rows]
    assert rows == [
        ("1", 0, "Calculator", {"input": "17 * 25"}, "425", "ok", 40, 12),
        ("1", 0, "Calculator", {"input": "1 / 0"}, "Error: division by zero", "error", 40, 12),
        ("2", 0, "thinking_tool", {"input": "425 is right; the division failed"}, "425 is right; the division failed", "ok", 75, 9),
        ("3", 0, "final answer", None, ANSWER, "ok", 96, 7),
    ]
    model = controller.output.steps_model
    assert model.index(1, 5).data() == "error"
    assert model.index(1, 0).data(Qt.ItemDataRole.BackgroundRole) is not None  # the failed call stands out
    assert model.index(0, 0).data(Qt.ItemDataRole.BackgroundRole) is None
    assert all(r.tool_ms is not None and r.tool_ms >= 0 for r in model.rows[:3])
    assert controller.output.steps.summary.text() == "3 iterations · 3 tool calls · 1 failed"


def test_chat_reply_and_canvas_statuses(finished_run) -> None:
    window, controller, _outcome = finished_run
    assert [e.role for e in controller.chat.entries] == ["user", "assistant"]
    assert controller.chat.entries[0].text == QUESTION
    assert controller.chat.reply_text() == ANSWER
    states = {name: (item.status, item.runs, item.error)
              for name in ("Chat", "AI Agent", "Model", "Memory", "Calculator", "Think")
              for item in [window.canvas.node_item(name)]}
    assert states == {
        "Chat": ("success", 1, None),
        "AI Agent": ("success", 1, None),
        "Model": ("success", 3, None),
        "Memory": ("success", 4, None),  # three loads and one save
        "Calculator": ("error", 2, "division by zero"),  # the last of its two runs failed
        "Think": ("success", 1, None),
    }
    assert controller.run_action.isEnabled() and not controller.stop_action.isEnabled()


def test_run_log_shows_the_cli_lines_with_clickable_names(finished_run, qtbot) -> None:
    window, controller, _outcome = finished_run
    session = controller.chat.session_id
    expected = RunLog()  # what `mini-n8n run` prints for the same message and session
    headless = asyncio.ensure_future(Engine(builtin_registry()).run(
        three_iteration_workflow(), start="Chat", items=[chat_item(QUESTION, session)], hooks=Hooks(expected)))
    qtbot.waitUntil(headless.done)
    view = controller.output.run_log
    assert [strip_time(line.text) for line in view.lines] == [strip_time(line.text) for line in expected.lines]
    shown = view.toPlainText().splitlines()
    assert shown[0].startswith("Run ") and shown[-1].startswith("status: success")
    assert [strip_time(s) for s in shown[1:-1]] == [strip_time(line.text) for line in expected.lines]
    assert view.link_names() == [line.node for line in expected.lines]
    calculator = [line.node for line in expected.lines].index("Calculator")
    x, y = view.link_position(calculator)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, y))
    assert window.canvas.canvas_scene.selected_names() == ["Calculator"]
    assert controller.output.currentWidget() is controller.output.node_data
    assert controller.output.node_data.run_selector.count() == 2


def test_detail_of_iteration_two(finished_run) -> None:
    _window, controller, _outcome = finished_run
    steps = controller.output.steps
    steps.select_row(2)
    detail = controller.output.detail
    assert detail.row is controller.output.steps_model.rows[2]
    text = detail.toPlainText()
    assert text.startswith("Iteration 2 · item 0 · AI Agent → thinking_tool (call_2_1)")
    assert "model" in text and "tokens in 75 / out 9" in text
    assert "Messages the model received (6)" in text
    # system, the user's question, then the scratchpad of iteration 1: both calls and both results
    order = [text.index(s) for s in ("system\nYou are a helpful assistant", f"user\n{QUESTION}",
                                     'scratchpad (assistant)\nCalling Calculator with input: {"input":"17 * 25","id":"call_1_1"}\n'
                                     '→ Calculator({"input":"17 * 25","id":"call_1_1"})  [call_1_1]',
                                     'scratchpad (tool) for call_1_1\n[{"response":"425"}]',
                                     'scratchpad (tool) for call_1_2\n{"error":"division by zero"')]
    assert order == sorted(order)
    assert "Raw reply of the model" in text and '"name": "thinking_tool"' in text
    assert "Tool thinking_tool (node Think)" in text
    assert 'input\n{\n  "input": "425 is right; the division failed"\n}' in text
    assert '"response": "425 is right; the division failed"' in text


def test_node_data_shows_every_run(finished_run) -> None:
    window, controller, _outcome = finished_run
    window.node_selected.emit("Calculator")
    view = controller.output.node_data
    assert view.run_selector.count() == 2
    assert view.run_selector.currentIndex() == 1
    assert "error" in view.run_selector.currentText()
    assert view.error.isVisibleTo(view) and "division by zero" in view.error.text()
    assert view.input_tree.value_at("ai_tool", "item 0", "input") == "1 / 0"
    view.run_selector.setCurrentIndex(0)
    assert not view.error.isVisibleTo(view)
    assert view.output_tree.value_at("ai_tool", "item 0", "response") == "425"


def test_filter_sort_copy_and_export(finished_run, tmp_path, qapp, qtbot) -> None:
    _window, controller, _outcome = finished_run
    steps = controller.output.steps
    steps.status_filter.setCurrentText("error")
    assert [r.observation for r in steps.proxy.visible_rows()] == ["Error: division by zero"]
    steps.status_filter.setCurrentText("All")
    steps.tool_filter.setCurrentText("Calculator")
    assert [r.status for r in steps.proxy.visible_rows()] == ["ok", "error"]
    steps.tool_filter.setCurrentText("All")
    steps.table.sortByColumn(7, Qt.SortOrder.DescendingOrder)  # tokens in
    assert [r.tokens_in for r in steps.proxy.visible_rows()] == [96, 75, 40, 40]
    steps.select_row(0)
    steps.table.setFocus()
    qtbot.keyClick(steps.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)  # in the window, shortcuts live
    copied = json.loads(qapp.clipboard().text())
    assert copied["tool"] == "final answer" and copied["observation"] == ANSWER
    steps.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
    steps.proxy.sort(-1)
    csv_text = steps.export(tmp_path / "steps.csv").read_text()
    lines = csv_text.splitlines()
    assert lines[0].startswith("iteration,item,agent,tool,toolCallId,toolInput,observation,status")
    assert lines[2].startswith('1,0,AI Agent,Calculator,call_1_2,"{""input"":""1 / 0""}",Error: division by zero,error')
    data = json.loads(steps.export(tmp_path / "steps.json").read_text())
    assert [d["tool"] for d in data] == ["Calculator", "Calculator", "thinking_tool", "final answer"]


def test_events_from_another_thread_reach_the_panels_on_the_loop_thread(run_window, qtbot) -> None:
    """A model running in a worker thread may emit hook events there; the bridge hands them over."""
    import threading

    from engine.hooks import TokenEvent
    from engine.run_state import RunState

    _window, controller = run_window(three_iteration_workflow())
    seen: list[int] = []
    controller.bridge.run_changed.connect(lambda changes: seen.append(threading.get_ident()))
    controller.bridge.run = RunState("x", message="hello")  # as after a run started
    controller.bridge._loop = asyncio.get_event_loop()  # noqa: SLF001 - as after a run started
    worker = threading.Thread(target=controller.bridge._on_event, args=(TokenEvent("x", "Model", "hi"),))  # noqa: SLF001
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: bool(seen), timeout=3000)
    assert seen == [threading.get_ident()]
    assert controller.bridge.run.chat[-1].text == "hi"
