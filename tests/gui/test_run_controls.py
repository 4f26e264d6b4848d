"""Run controls: streaming, Stop, sessions and memory, Manual Trigger runs, errors shown in the window."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt

from tests.builders import agent_workflow, tool_call

LONG_REPLY = " ".join(f"word{i}" for i in range(60))


def start_message(qtbot, controller, text: str) -> None:  # type: ignore[no-untyped-def]
    controller.chat.input.setPlainText(text)
    qtbot.keyClick(controller.chat.input, Qt.Key.Key_Return)


def send(qtbot, controller, text: str):  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as finished:
        start_message(qtbot, controller, text)
    return finished.args[0]


def model_inputs(controller) -> list[list[dict]]:  # type: ignore[no-untyped-def]
    """The messages each model call of the last run received."""
    runs = controller.bridge.state.run_data["Model"]
    return [task.input["ai_languageModel"][0][0]["json"]["messages"] for task in runs]


def test_reply_streams_token_by_token(run_window, qtbot) -> None:
    text = "one two three four five six seven eight"
    window, controller = run_window(agent_workflow([{"text": text}], tools=[], model_options={"tokenDelayMs": 25}))
    start_message(qtbot, controller, "count")
    qtbot.waitUntil(lambda: 0 < len(controller.chat.reply_text()) < len(text), timeout=5000)
    assert controller.chat.entries[-1].streaming
    assert window.canvas.node_item("AI Agent").status == "running"
    assert window.canvas.node_item("Model").status == "running"
    assert not controller.run_action.isEnabled() and controller.stop_action.isEnabled()
    assert not controller.chat.send_button.isEnabled()
    qtbot.waitUntil(lambda: controller.settled, timeout=5000)
    assert controller.chat.reply_text() == text and not controller.chat.entries[-1].streaming
    assert window.canvas.node_item("Model").status == "success"


def test_stop_cancels_a_slow_stream_and_the_window_stays_usable(run_window, qtbot) -> None:
    workflow = agent_workflow([{"text": LONG_REPLY}], tools=[], model_options={"tokenDelayMs": 200})
    window, controller = run_window(workflow)
    start_message(qtbot, controller, "talk")
    qtbot.waitUntil(lambda: len(controller.chat.reply_text()) > 0, timeout=5000)
    with qtbot.waitSignal(controller.run_shown, timeout=2000) as finished:
        window.activateWindow()
        controller.stop_action.trigger()
        stopped_at = time.perf_counter()
    outcome = finished.args[0]
    assert outcome.status == "cancelled"
    assert controller.bridge.state.status == "cancelled"
    assert time.perf_counter() - stopped_at < 2.0  # a bound for a stuck run, not the latency target
    assert controller.run_action.isEnabled() and not controller.stop_action.isEnabled()
    assert controller.chat.send_button.isEnabled()
    assert controller.chat.entries[-1].role == "error" and "cancelled" in controller.chat.entries[-1].text
    agent = window.canvas.node_item("AI Agent")
    assert (agent.status, agent.error) == ("error", "Execution was cancelled")
    assert "status: cancelled" in controller.output.run_log.toPlainText()
    # usable: the next message runs to the end
    workflow.nodes[2].parameters["options"] = {"tokenDelayMs": 0}
    outcome = send(qtbot, controller, "again")
    assert outcome.status == "success" and controller.chat.reply_text() == LONG_REPLY


def test_escape_stops_the_run(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow([{"text": LONG_REPLY}], tools=[], model_options={"tokenDelayMs": 200}))
    start_message(qtbot, controller, "talk")
    qtbot.waitUntil(lambda: len(controller.chat.reply_text()) > 0, timeout=5000)
    with qtbot.waitSignal(controller.run_shown, timeout=2000) as finished:
        qtbot.keyClick(controller.chat.input, Qt.Key.Key_Escape)
    assert finished.args[0].status == "cancelled"


def test_memory_keeps_the_session_and_new_session_forgets(run_window, qtbot) -> None:
    workflow = agent_workflow([{"text": "Nice to meet you, Ada."}], tools=[], memory=True)
    _window, controller = run_window(workflow)
    assert send(qtbot, controller, "My name is Ada.").status == "success"
    first_session = controller.chat.session_id
    assert send(qtbot, controller, "What is my name?").status == "success"
    [messages] = model_inputs(controller)
    assert [(m["role"], m["content"]) for m in messages] == [
        ("system", "You are a helpful assistant"),
        ("user", "My name is Ada."),
        ("assistant", "Nice to meet you, Ada."),
        ("user", "What is my name?"),
    ]
    assert [e.role for e in controller.chat.entries] == ["user", "assistant", "user", "assistant"]
    controller.output.steps.select_row(0)
    detail = controller.output.detail.toPlainText()
    assert "history (user)\nMy name is Ada.\nhistory (assistant)\nNice to meet you, Ada.\nuser\nWhat is my name?" in detail
    qtbot.mouseClick(controller.chat.new_session_button, Qt.MouseButton.LeftButton)
    assert controller.chat.session_id != first_session and controller.chat.entries == []
    assert send(qtbot, controller, "What is my name?").status == "success"
    [messages] = model_inputs(controller)
    assert [m["role"] for m in messages] == ["system", "user"]


def test_shift_enter_adds_a_line_instead_of_sending(run_window, qtbot) -> None:
    _window, controller = run_window(agent_workflow([{"text": "ok"}], tools=[]))
    controller.chat.input.setPlainText("first line")
    controller.chat.input.moveCursor(controller.chat.input.textCursor().MoveOperation.End)
    qtbot.keyClick(controller.chat.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert not controller.bridge.running
    assert controller.chat.input.toPlainText() == "first line\n"


def test_manual_trigger_workflow_runs_from_ctrl_enter(run_window, qtbot) -> None:
    workflow = agent_workflow([{"text": "", "toolCalls": [tool_call("Calculator", {"input": "6 * 7"})]},
                               {"text": "42"}], trigger="manual", agent_params={"promptType": "define", "text": "6 x 7?"})
    window, controller = run_window(workflow)
    window.activateWindow()
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as finished:
        qtbot.keyClick(window.canvas, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert finished.args[0].status == "success"
    assert [(r.tool, r.observation) for r in controller.output.steps_model.rows] == [("Calculator", "42"), ("final answer", "42")]
    assert window.canvas.node_item("Start").status == "success"
    assert controller.chat.entries == []  # a manual run does not talk in the chat


def test_a_failing_run_reports_in_the_window(run_window, qtbot) -> None:
    workflow = agent_workflow([{"error": "the model is down"}], tools=[])
    window, controller = run_window(workflow)
    outcome = send(qtbot, controller, "hello")
    assert outcome.status == "error"
    assert controller.chat.entries[-1].role == "error"
    assert controller.chat.entries[-1].text == "[Model] the model is down"
    assert "the model is down" in window.statusBar().currentMessage()
    assert window.canvas.node_item("Model").error == "the model is down"
    assert [(r.tool, r.status) for r in controller.output.steps_model.rows] == [("model error", "error")]


def test_a_workflow_without_a_trigger_says_so(run_window, qtbot) -> None:
    workflow = agent_workflow([{"text": "x"}], tools=[])
    workflow.nodes.pop(0)  # no Chat Trigger any more
    window, controller = run_window(workflow)
    controller.run_action.trigger()
    assert "has no enabled trigger node" in window.statusBar().currentMessage()
    outcome = send(qtbot, controller, "hello")
    assert outcome.status == "error" and "no enabled trigger" in outcome.error.message
    assert "no enabled trigger" in controller.chat.entries[-1].text
    assert controller.run_action.isEnabled()


def test_opening_another_workflow_clears_the_run_views(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow([{"text": "hello"}], tools=[]))
    assert send(qtbot, controller, "hi").status == "success"
    old_session = controller.chat.session_id
    assert controller.output.steps_model.rowCount() == 1
    window.load_document(agent_workflow([{"text": "other"}], tools=[]))
    assert controller.output.steps_model.rowCount() == 0
    assert controller.output.run_log.toPlainText() == ""
    assert controller.chat.entries == [] and controller.chat.session_id != old_session
    assert send(qtbot, controller, "hi").status == "success"
    assert controller.chat.reply_text() == "other"


def test_a_breakpoint_shows_paused_on_the_canvas(run_window, qtbot) -> None:
    workflow = agent_workflow([{"text": "", "toolCalls": [tool_call("Calculator", {"input": "2 * 3"})]},
                               {"text": "6"}])
    window, controller = run_window(workflow)
    controller.debug.breakpoints.nodes.append("Calculator")
    controller.chat.input.setPlainText("2 x 3?")
    controller.debug.debug()
    qtbot.waitUntil(lambda: window.canvas.node_item("Calculator").status == "paused", timeout=5000)
    assert controller.bridge.paused and controller.stop_action.isEnabled()
    with qtbot.waitSignal(controller.run_shown, timeout=5000) as finished:
        controller.bridge.continue_()
    assert finished.args[0].status == "success"
    assert (window.canvas.node_item("Calculator").status, window.canvas.node_item("Calculator").runs) == ("success", 1)


def test_an_observation_edited_while_paused_shows_in_the_table(run_window, qtbot) -> None:
    workflow = agent_workflow([{"text": "", "toolCalls": [tool_call("Calculator", {"input": "2 * 3"})]},
                               {"text": "7"}])
    window, controller = run_window(workflow)
    controller.debug.set_agent_break("after_tool_result", True)
    controller.chat.input.setPlainText("2 x 3?")
    controller.debug.debug()
    qtbot.waitUntil(lambda: controller.bridge.paused, timeout=5000)
    with qtbot.waitSignal(controller.run_shown, timeout=5000):
        controller.bridge.continue_({"observation": "7"})
    [row, _answer] = controller.output.steps_model.rows
    assert (row.observation, row.edited_from) == ("7", "6")
    assert controller.output.steps_model.index(0, 4).data() == "✎ 7"
    controller.output.steps.select_row(0)
    assert "edited while paused; the tool returned\n6" in controller.output.detail.toPlainText()


def test_a_bug_in_a_run_reaches_the_window_not_only_the_console(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow([{"text": "x"}], tools=[]))
    controller.chat.add_user("hello")
    controller.chat.begin_reply()
    with qtbot.waitSignal(controller.run_shown, timeout=5000) as finished:
        controller.bridge.send_chat(None, "hello", controller.chat.session_id)  # type: ignore[arg-type]
    assert finished.args[0].status == "error"
    assert finished.args[0].error.message.startswith("AttributeError:")
    assert controller.chat.entries[-1].role == "error" and "AttributeError" in controller.chat.entries[-1].text
    assert "AttributeError" in window.statusBar().currentMessage()
    assert "error: AttributeError" in controller.output.run_log.toPlainText()
    assert controller.run_action.isEnabled() and controller.chat.send_button.isEnabled()


def test_a_fast_long_run_reaches_the_table_in_batches(run_window, qtbot, monkeypatch) -> None:
    from gui import bridge

    monkeypatch.setattr(bridge, "FLUSH_MS", 1)
    replies = [{"text": "", "toolCalls": [tool_call("Calculator", {"input": f"{n} + 1"})]} for n in range(60)]
    _window, controller = run_window(agent_workflow(replies + [{"text": "done"}], agent_options={"maxIterations": 100}))
    blocks: list[int] = []
    controller.output.steps_model.rowsInserted.connect(lambda _p, first, last: blocks.append(last - first + 1))
    order: list[str] = []
    controller.bridge.run_finished.connect(lambda _o: order.append("finished"))
    controller.run_shown.connect(lambda _o: order.append("shown"))
    outcome = send(qtbot, controller, "count")
    assert outcome.status == "success" and sorted(order) == ["finished", "shown"]
    rows = controller.output.steps_model.rows
    assert len(rows) == 61 and rows[-1].observation == "done" and all(r.status == "ok" for r in rows)
    assert sum(blocks) == 61 and len(blocks) > 3
    assert len(controller.output.run_log.lines) == 1 + 61 + 60 + 1  # trigger, model calls, tools, agent
    assert controller.chat.reply_text() == "done" and controller.settled
