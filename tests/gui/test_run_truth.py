"""The editor shows only what happened: node states after pauses, steps and stops, and stored
executions shown read-only (banner, no edits, their own conversation, Output beside Executions)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt

from tests.builders import agent_workflow, tool_call

THREE_ITERATIONS = [
    {"toolCalls": [tool_call("Calculator", {"input": "6 * 7"}, "c1")]},
    {"toolCalls": [tool_call("Calculator", {"input": "42 + 1"}, "c2")]},
    {"text": "The answer is 43."},
]


def debug_chat(qtbot, controller, text: str = "go") -> None:  # type: ignore[no-untyped-def]
    controller.chat.input.setPlainText(text)
    controller.debug.debug()
    qtbot.waitUntil(lambda: controller.bridge.paused and controller.debug.pending.where is not None, timeout=5000)


def canvas_states(window) -> dict[str, tuple[str | None, int, str | None]]:  # type: ignore[no-untyped-def]
    items = {n.name: window.canvas.node_item(n.name) for n in window.document.nodes}
    return {name: (item.status, item.runs, item.error) for name, item in items.items()}


FINISHED = {"Chat": ("success", 1, None), "AI Agent": ("success", 1, None), "Model": ("success", 3, None),
            "Calculator": ("success", 2, None)}


def test_continue_after_a_pause_at_a_tool_result_leaves_the_tool_done(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    controller.debug.set_agent_break("after_tool_result", True)
    debug_chat(qtbot, controller)
    assert window.canvas.node_item("Calculator").status == "paused"
    assert window.canvas.node_item("Calculator").runs == 1  # it ran; the run stands after its result
    controller.debug.continue_()
    qtbot.waitUntil(lambda: controller.debug.pending.where is not None
                    and controller.debug.pending.where.get("toolCallId") == "c2" and controller.bridge.paused)
    assert window.canvas.node_item("Calculator").status == "paused"
    with qtbot.waitSignal(controller.run_shown, timeout=5000):
        controller.debug.continue_()
    assert canvas_states(window) == FINISHED


def test_stepping_past_a_tool_result_leaves_no_node_running(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    controller.debug.set_agent_break("after_tool_result", True)
    debug_chat(qtbot, controller)
    with qtbot.waitSignal(controller.run_shown, timeout=10_000):
        while True:
            where = controller.debug.pending.where
            controller.debug.step()
            qtbot.waitUntil(lambda: not controller.bridge.running or (
                controller.bridge.paused and controller.debug.pending.where is not None
                and controller.debug.pending.where != where), timeout=5000)
            if not controller.bridge.running:
                break
    assert canvas_states(window) == FINISHED


def test_stop_at_a_tool_result_keeps_the_finished_tool_green(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    controller.debug.set_agent_break("after_tool_result", True)
    debug_chat(qtbot, controller)
    with qtbot.waitSignal(controller.run_shown, timeout=5000) as shown:
        controller.debug.stop()
    assert shown.args[0].status == "cancelled"
    states = canvas_states(window)
    assert states["Calculator"] == ("success", 1, None)
    assert states["Model"] == ("success", 1, None)
    assert states["AI Agent"] == ("error", 0, "Execution was cancelled")
    assert controller.chat.entries[-1].role == "error" and "cancelled" in controller.chat.entries[-1].text


def open_stored(qtbot, window, controller):  # type: ignore[no-untyped-def]
    controller.chat.input.setPlainText("go")
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as shown:
        qtbot.keyClick(controller.chat.input, Qt.Key.Key_Return)
    run_id = shown.args[0].state.id
    window.load_document(agent_workflow([{"text": "other"}], tools=[]))  # the editor moved on
    controller.chat.input.setPlainText("hello")
    with qtbot.waitSignal(controller.run_shown, timeout=10_000):
        qtbot.keyClick(controller.chat.input, Qt.Key.Key_Return)
    panel = controller.executions.panel
    panel.refresh()
    assert panel.select(run_id)
    qtbot.mouseClick(panel.open_button, Qt.MouseButton.LeftButton)
    return run_id


def test_a_stored_execution_opens_read_only_under_a_banner(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    run_id = open_stored(qtbot, window, controller)
    assert window.read_only and window.read_only_bar.isVisible()
    assert window.read_only_label.text().strip() == f"Execution {run_id} — read-only"
    assert window.act_copy_to_editor.isEnabled()
    # the workflow that ran is shown, with its statuses
    assert window.canvas.node_item("Calculator") is not None
    assert canvas_states(window) == FINISHED
    # its own conversation, not the session's
    assert [(e.role, e.text) for e in controller.chat.entries] == [("user", "go"), ("assistant", "The answer is 43.")]
    assert controller.chat.stored_label.isVisible() and not controller.chat.send_button.isEnabled()
    # Output beside Executions, not behind it
    executions_dock = controller.executions.dock
    assert executions_dock.isVisible() and controller.output_dock.isVisible()
    assert executions_dock not in window.tabifiedDockWidgets(controller.output_dock)
    assert executions_dock.geometry().left() >= controller.output_dock.geometry().right()


def test_a_stored_execution_cannot_be_edited(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    open_stored(qtbot, window, controller)
    item = window.canvas.node_item("Calculator")
    before = item.pos()
    start = window.canvas.mapFromScene(item.mapToScene(item.body_rect().center()))
    qtbot.mousePress(window.canvas.viewport(), Qt.MouseButton.LeftButton, pos=start)
    for step in range(1, 6):
        qtbot.mouseMove(window.canvas.viewport(), start + QPoint(20 * step, 10 * step))
    qtbot.mouseRelease(window.canvas.viewport(), Qt.MouseButton.LeftButton, pos=start + QPoint(100, 50))
    assert window.canvas.node_item("Calculator").pos() == before
    assert window.undo_stack.count() == 0 or not window.undo_stack.canUndo() or not window.act_undo.isEnabled()
    assert not window.act_undo.isEnabled() and not window.tool_undo.isEnabled()
    assert not window.act_delete.isEnabled() and not window.act_paste.isEnabled()
    assert not window.palette_panel.isEnabled() and not window.inspector.isEnabled()
    window.scene.select_names(["Calculator"])
    window.act_delete.trigger()  # disabled: nothing happens
    window.canvas.search_typed.emit("c")  # typing on the canvas adds nothing either
    window.canvas.type_dropped.emit("@n8n/n8n-nodes-langchain.toolCalculator", QPointF(0, 0))
    assert window.document.has_node("Calculator") and len(window.document.nodes) == 4
    assert window.undo_stack.count() == 0


def test_leaving_a_stored_execution_gives_back_the_workflow_and_its_undo(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    controller.chat.input.setPlainText("go")
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as shown:
        qtbot.keyClick(controller.chat.input, Qt.Key.Key_Return)
    run_id = shown.args[0].state.id
    window.rename_workflow("my edits")
    assert window.undo_stack.canUndo()
    assert controller.executions.open_execution(run_id)
    assert window.document.name == "test agent" and not window.act_undo.isEnabled()
    window.act_leave_read_only.trigger()
    assert not window.read_only and not window.read_only_bar.isVisible()
    assert window.document.name == "my edits" and window.isWindowModified()
    assert window.act_undo.isEnabled() and window.undo_stack.canUndo()
    assert controller.viewed is None and not controller.chat.stored_label.isVisible()
    assert controller.chat.send_button.isEnabled()
    assert [e.role for e in controller.chat.entries] == ["user", "assistant"]  # the session's chat is back


def test_copy_to_editor_from_the_banner(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    run_id = open_stored(qtbot, window, controller)
    window.act_copy_to_editor.trigger()
    assert not window.read_only and window.document.has_node("Calculator")
    assert window.canvas.node_item("Calculator").status == "success"
    assert f"execution {run_id}" in window.statusBar().currentMessage()
