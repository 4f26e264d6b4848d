"""Debugging in the editor: F9 breakpoints, F5 debug/continue, F10 stepping, edit-and-continue
through the Pending tab, Shift+F5 stop — driven with keys and buttons through qtbot."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from tests.builders import agent_workflow, tool_call

THREE_ITERATIONS = [
    {"toolCalls": [tool_call("Calculator", {"input": "6 * 7"}, "c1")]},
    {"toolCalls": [tool_call("Calculator", {"input": "42 + 1"}, "c2")]},
    {"text": "The answer is 43."},
]


def is_breakpoint_red(colour: QColor) -> bool:
    return colour.red() > 200 and colour.green() < 110 and colour.blue() < 110


def short(where: dict[str, Any]) -> str:
    return f"{where['kind']}:{where['node']}" + (f"@{where['iteration']}" if "iteration" in where else "")


def key(qtbot, window, key: Qt.Key, modifier=Qt.KeyboardModifier.NoModifier) -> None:  # type: ignore[no-untyped-def]
    window.activateWindow()
    qtbot.keyClick(window.canvas.viewport(), key, modifier)


def wait_pause(qtbot, controller, after: str | None = None) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Wait until the Pending tab shows a pause point other than `after` (a point's key)."""
    pending = controller.debug.pending
    qtbot.waitUntil(lambda: controller.bridge.paused and pending.where is not None
                    and pending.where.get("key") != after, timeout=5000)
    return pending.where


def start(qtbot, window, controller, how: Qt.Key) -> None:  # type: ignore[no-untyped-def]
    controller.chat.input.setPlainText("go")
    key(qtbot, window, how)


def test_f9_sets_a_node_breakpoint_and_f5_stops_there(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    debug = controller.debug
    window.scene.select_names(["Calculator"])
    item = window.canvas.node_item("Calculator")
    dot = window.canvas.mapFromScene(item.mapToScene(item.breakpoint_centre()))  # where the breakpoint is drawn
    assert not is_breakpoint_red(window.canvas.viewport().grab().toImage().pixelColor(dot))
    key(qtbot, window, Qt.Key.Key_F9)
    assert item.breakpoint and debug.breakpoints.nodes == ["Calculator"]
    qtbot.waitUntil(lambda: is_breakpoint_red(window.canvas.viewport().grab().toImage().pixelColor(dot)))
    assert debug.breakpoint_action.property("nodeMenu")  # offered in the node's context menu too

    start(qtbot, window, controller, Qt.Key.Key_F5)
    where = wait_pause(qtbot, controller)
    assert short(where) == "before_tool:Calculator@1"
    assert item.status == "paused"
    assert controller.output.currentWidget() is debug.pending
    assert debug.pending.args.toPlainText().replace("\n", "").replace(" ", "") == '{"input":"6*7"}'
    assert debug.debug_action.text() == "Continue"
    assert "Paused before the tool call “Calculator”, iteration 1" in window.statusBar().currentMessage()

    key(qtbot, window, Qt.Key.Key_F5)
    where = wait_pause(qtbot, controller, where["key"])
    assert short(where) == "before_tool:Calculator@2"
    with qtbot.waitSignal(controller.run_shown, timeout=5000) as shown:
        key(qtbot, window, Qt.Key.Key_F5)
    assert shown.args[0].status == "success" and shown.args[0].answer == "The answer is 43."
    assert debug.pending.where is None and debug.debug_action.text() == "Debug"

    key(qtbot, window, Qt.Key.Key_F9)  # off again
    assert not item.breakpoint and debug.breakpoints.nodes == []


def test_f10_steps_through_every_pause_point_in_order(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    seen: list[str] = []
    payloads: list[dict[str, Any]] = []
    start(qtbot, window, controller, Qt.Key.Key_F10)
    last = None
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as shown:
        while True:
            qtbot.waitUntil(lambda: not controller.bridge.running or (
                controller.bridge.paused and (controller.debug.pending.where or {}).get("key") != last), timeout=5000)
            if not controller.bridge.running:
                break
            where = controller.debug.pending.where
            seen.append(short(where))
            payloads.append(where["payload"])
            last = where["key"]
            key(qtbot, window, Qt.Key.Key_F10)
    assert shown.args[0].status == "success"
    assert seen == [
        "node:Chat", "node:AI Agent",
        "before_model:Model@1", "after_model:Model@1", "before_tool:Calculator@1", "tool_result:Calculator@1",
        "before_model:Model@2", "after_model:Model@2", "before_tool:Calculator@2", "tool_result:Calculator@2",
        "before_model:Model@3", "after_model:Model@3",
    ]
    assert [m["role"] for m in payloads[6]["messages"]] == ["system", "user", "assistant", "tool"]
    assert payloads[5] == {"observation": "42"}


def test_edited_tool_argument_changes_the_observation_in_the_steps_table(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    debug = controller.debug
    debug.set_agent_break("before_tool", True)
    assert debug.breakpoints.before_tool
    start(qtbot, window, controller, Qt.Key.Key_F5)
    where = wait_pause(qtbot, controller)
    assert where["toolCallId"] == "c1"

    debug.pending.args.setPlainText('{"input": 6 *')  # broken JSON: said, and the run stays paused
    qtbot.mouseClick(debug.pending.continue_button, Qt.MouseButton.LeftButton)
    assert controller.bridge.paused and debug.pending.problem.isVisible()
    assert "Not valid JSON in the arguments:" in debug.pending.problem.text()

    debug.pending.args.setPlainText('{"input": "6 * 8"}')
    qtbot.mouseClick(debug.pending.continue_button, Qt.MouseButton.LeftButton)
    where = wait_pause(qtbot, controller, where["key"])
    assert where["toolCallId"] == "c2"
    with qtbot.waitSignal(controller.run_shown, timeout=5000):
        key(qtbot, window, Qt.Key.Key_F5)
    model = controller.output.steps_model
    first = model.rows[0]
    assert first.tool_input == {"input": "6 * 8"} and first.observation == "48"
    assert model.data(model.index(0, 3)).startswith("✎ ")
    hover = model.data(model.index(0, 3), Qt.ItemDataRole.ToolTipRole)
    assert "tool input" in hover and '"6 * 7"' in hover and '"6 * 8"' in hover
    messages = controller.bridge.state.run_data["Model"][1].input["ai_languageModel"][0][0]["json"]["messages"]
    assert messages[3]["content"] == '[{"response":"48"}]'  # n8n's v3 agent: the tool's items as JSON


def test_edited_observation_reaches_the_next_model_call(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    debug = controller.debug
    debug.set_agent_break("after_tool_result", True)
    start(qtbot, window, controller, Qt.Key.Key_F5)
    where = wait_pause(qtbot, controller)
    assert short(where) == "tool_result:Calculator@1"
    assert debug.pending.observation.toPlainText() == "42"
    debug.pending.observation.setPlainText("forty-two")
    key(qtbot, window, Qt.Key.Key_F5)
    wait_pause(qtbot, controller, where["key"])
    with qtbot.waitSignal(controller.run_shown, timeout=5000):
        key(qtbot, window, Qt.Key.Key_F5)
    messages = controller.bridge.state.run_data["Model"][1].input["ai_languageModel"][0][0]["json"]["messages"]
    assert messages[3] == {"role": "tool", "content": '[{"response":"forty-two"}]', "toolCallId": "c1"}
    model = controller.output.steps_model
    assert model.rows[0].observation == "forty-two" and model.rows[0].edited_from == "42"
    assert model.data(model.index(0, 4)) == "✎ forty-two"
    hover = model.data(model.index(0, 4), Qt.ItemDataRole.ToolTipRole)
    assert "observation: 42  →  forty-two" in hover


def test_edited_reply_replaces_the_tool_calls(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    debug = controller.debug
    debug.set_agent_break("after_model", True)
    start(qtbot, window, controller, Qt.Key.Key_F5)
    where = wait_pause(qtbot, controller)
    assert short(where) == "after_model:Model@1"
    rows = controller.output.steps_model.rows
    qtbot.waitUntil(lambda: len(rows) == 1)  # the reply as the model gave it is in the table
    assert rows[0].tool == "Calculator" and rows[0].status == "pending"
    debug.pending.reply_text.setPlainText("Enough: 99.")
    debug.pending.reply_calls.setPlainText("[]")
    with qtbot.waitSignal(controller.run_shown, timeout=5000) as shown:
        key(qtbot, window, Qt.Key.Key_F5)
    assert shown.args[0].answer == "Enough: 99."
    assert [(r.tool, r.status) for r in rows] == [("Calculator", "replaced"), ("final answer", "ok")]
    assert "model reply" in rows[1].edits_text() and "Enough: 99." in rows[1].edits_text()


def test_stop_while_paused_cancels_and_the_window_stays_usable(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    debug = controller.debug
    debug.set_agent_break("before_model", True)
    start(qtbot, window, controller, Qt.Key.Key_F5)
    wait_pause(qtbot, controller)
    with qtbot.waitSignal(controller.run_shown, timeout=5000) as shown:
        key(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)
    assert shown.args[0].status == "cancelled"
    assert debug.pending.where is None and not controller.bridge.debugging
    assert controller.run_action.isEnabled() and debug.debug_action.isEnabled()
    # usable: a plain run does not stop at the breakpoints, and goes to the end
    controller.chat.input.setPlainText("again")
    with qtbot.waitSignal(controller.run_shown, timeout=5000) as shown:
        qtbot.keyClick(controller.chat.input, Qt.Key.Key_Return)
    assert shown.args[0].status == "success" and shown.args[0].answer == "The answer is 43."


def test_the_node_context_menu_toggles_a_breakpoint(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    item = window.canvas.node_item("AI Agent")
    where = window.canvas.mapFromScene(item.mapToScene(item.body_rect().center()))
    offered: list[str] = []

    def choose() -> None:  # runs inside the menu's own loop
        menu = QApplication.activePopupWidget()
        if menu is None:
            QTimer.singleShot(5, choose)
            return
        offered.extend(a.text() for a in menu.actions())
        chosen = next(a for a in menu.actions() if a.text() == "Toggle Breakpoint")
        menu.close()
        chosen.trigger()

    QTimer.singleShot(0, choose)
    window.canvas.customContextMenuRequested.emit(where)
    assert "Toggle Breakpoint" in offered
    assert item.breakpoint and controller.debug.breakpoints.nodes == ["AI Agent"]
