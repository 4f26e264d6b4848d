"""The Executions panel: stored runs listed, opened read-only, copied to the editor, resumed after
the window that paused them closed, re-run from an iteration and replayed."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt

from engine.store import ExecutionStore
from engine.workflow import save_workflow
from tests.builders import agent_workflow, tool_call

ROOT = Path(__file__).parents[2]
CODE_TOOL = "@n8n/n8n-nodes-langchain.toolCode"
THREE_ITERATIONS = [
    {"toolCalls": [tool_call("Calculator", {"input": "6 * 7"}, "c1")]},
    {"toolCalls": [tool_call("Calculator", {"input": "42 + 1"}, "c2")]},
    {"text": "The answer is 43."},
]


def chat(qtbot, controller, text: str = "go"):  # type: ignore[no-untyped-def]
    controller.chat.input.setPlainText(text)
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as shown:
        qtbot.keyClick(controller.chat.input, Qt.Key.Key_Return)
    return shown.args[0]


def click(qtbot, button) -> None:  # type: ignore[no-untyped-def]
    assert button.isEnabled(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def panel_of(controller):  # type: ignore[no-untyped-def]
    panel = controller.executions.panel
    panel.refresh()
    return panel


def test_a_finished_run_is_listed_and_opens_read_only(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    outcome = chat(qtbot, controller)
    run_id = outcome.state.id
    panel = panel_of(controller)
    summary = panel.model.rows[0]
    assert (summary.id, summary.status, summary.mode, summary.workflow_name) == (run_id, "success", "manual", "test agent")
    assert panel.model.data(panel.model.index(0, 0)) == "success"
    assert panel.model.data(panel.model.index(0, 2)).endswith(" ms")

    chat(qtbot, controller, "second")  # another run replaces what the output panel shows
    panel.refresh()
    assert panel.select(run_id)
    assert not panel.resume_button.isEnabled() and panel.rerun_button.isEnabled()
    click(qtbot, panel.open_button)
    assert controller.viewed is not None and controller.viewed.id == run_id
    log = controller.output.run_log.toPlainText()
    assert f"Execution {run_id}" in log and "read-only" in log and "status: success" in log
    assert log.count("] Calculator") == 2
    rows = controller.output.steps_model.rows
    assert [(r.tool, r.observation) for r in rows] == [("Calculator", "42"), ("Calculator", "43"),
                                                        ("final answer", "The answer is 43.")]
    assert window.canvas.node_item("Calculator").runs == 2
    assert window.canvas.node_item("AI Agent").status == "success"
    assert f"Showing execution {run_id}" in panel.report.text()


def test_copy_to_editor_loads_the_workflow_that_ran(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    run_id = chat(qtbot, controller).state.id
    window.load_document(agent_workflow([{"text": "other"}], tools=[]))
    assert not window.document.has_node("Calculator")
    panel = panel_of(controller)
    panel.select(run_id)
    click(qtbot, panel.copy_button)
    assert window.document.has_node("Calculator") and window.document.name == "test agent"
    assert window.canvas.node_item("Calculator") is not None
    assert window.canvas.node_item("Calculator").status == "success"  # its statuses are shown on it
    assert len(controller.output.steps_model.rows) == 3


def test_a_paused_execution_left_by_a_closed_window_resumes_in_a_fresh_one(run_window, qtbot) -> None:
    first, controller = run_window(agent_workflow(THREE_ITERATIONS))
    controller.debug.set_agent_break("before_tool", True)
    controller.debug.breakpoints.from_iteration = 2
    controller.chat.input.setPlainText("go")
    first.activateWindow()
    qtbot.keyClick(first.canvas.viewport(), Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: controller.bridge.paused and controller.debug.pending.where is not None, timeout=5000)
    run_id = controller.bridge.state.id
    first.close()
    qtbot.waitUntil(lambda: not controller.bridge.running, timeout=5000)
    stored = ExecutionStore().load(run_id)
    assert stored.status == "paused" and stored.pause["kind"] == "before_tool" and stored.pause["iteration"] == 2

    second, fresh = run_window(agent_workflow([{"text": "unrelated"}], tools=[]))
    panel = panel_of(fresh)
    assert panel.select(run_id) and panel.selected().status == "paused"
    assert panel.resume_button.isEnabled() and not panel.replay_button.isEnabled()
    click(qtbot, panel.open_button)  # what it did, and what it was about to do when it paused
    assert [(r.tool, r.status) for r in fresh.output.steps_model.rows] == [("Calculator", "ok"), ("Calculator", "pending")]
    pending = fresh.debug.pending
    assert pending.where["kind"] == "before_tool" and pending.where["toolCallId"] == "c2" and not pending.live
    assert fresh.output.currentWidget() is pending and pending.args.isReadOnly()
    assert not pending.continue_button.isVisible() and "Resume" in pending.hint.text()
    with qtbot.waitSignal(fresh.run_shown, timeout=10_000) as shown:
        click(qtbot, panel.resume_button)
    outcome = shown.args[0]
    assert outcome.status == "success" and outcome.state.id == run_id
    assert outcome.answer == "The answer is 43."
    # the editor holds another workflow: the canvas shows the one that ran, read-only, with its states
    assert second.read_only and second.canvas.node_item("Calculator").status == "success"
    assert second.canvas.node_item("Calculator").runs == 2
    assert [(e.role, e.text) for e in fresh.chat.entries[-2:]] == [("user", "go"), ("assistant", "The answer is 43.")]
    # what it did before the pause is shown with what it did after
    assert [r.observation for r in fresh.output.steps_model.rows] == ["42", "43", "The answer is 43."]
    assert ExecutionStore().load(run_id).status == "success"
    panel.refresh()
    assert panel.selected().id == run_id and panel.selected().status == "success"


def test_rerun_from_iteration_2_and_replay_from_the_panel(run_window, qtbot) -> None:
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    run_id = chat(qtbot, controller).state.id
    panel = panel_of(controller)
    panel.select(run_id)
    click(qtbot, panel.open_button)
    steps = controller.output.steps
    steps.table.selectRow(1)  # the tool call of iteration 2
    assert panel.rerun_button.text() == "Re-run from iteration 2"

    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as shown:
        click(qtbot, panel.rerun_button)
    outcome = shown.args[0]
    assert outcome.status == "success" and outcome.state.id != run_id and outcome.state.mode == "rerun"
    models = outcome.state.run_data["Model"]
    assert [bool(t.metadata.get("replayed")) for t in models] == [True, True, False]
    tools = outcome.state.run_data["Calculator"]
    assert [bool(t.metadata.get("replayed")) for t in tools] == [True, True]
    assert f"Re-run of {run_id} from iteration 2" in panel.report.text()
    assert "reused 2 model replies and 2 tool results" in panel.report.text()

    panel.refresh()
    panel.select(run_id)
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as shown:
        click(qtbot, panel.replay_button)
    assert shown.args[0].status == "success" and shown.args[0].state.mode == "replay"
    assert panel.report.text() == f"Replay of {run_id}: no divergence — same model inputs and tool results"
    assert "no divergence" in controller.output.run_log.toPlainText()
    # a replay of a chat execution answers the same message again, in the chat as in a live run
    assert [(e.role, e.text) for e in controller.chat.entries[-2:]] == [("user", "go"), ("assistant", "The answer is 43.")]


def test_a_run_killed_mid_way_shows_as_crashed_and_resumes(run_window, qtbot, tmp_path) -> None:
    slow = [dict(r) for r in THREE_ITERATIONS]
    slow[2] = {"text": " ".join(["word"] * 100)}  # streamed at 30 ms a token: the child is killed meanwhile
    path = tmp_path / "slow.json"
    save_workflow(agent_workflow(slow, model_options={"tokenDelayMs": 30}), path)
    child = subprocess.Popen([sys.executable, "-m", "engine.cli", "run", str(path), "--message", "go"], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = ExecutionStore()
    try:  # both tool runs stored: the last model call is streaming
        qtbot.waitUntil(lambda: any(len(store.load(s.id).run_data.get("Calculator", [])) == 2 for s in store.list()),
                        timeout=30_000)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    window, controller = run_window(agent_workflow([{"text": "unrelated"}], tools=[]))
    panel = panel_of(controller)
    summary = panel.model.rows[0]
    assert summary.status == "crashed" and summary.mode == "cli"
    panel.select(summary.id)
    with qtbot.waitSignal(controller.run_shown, timeout=20_000) as shown:
        click(qtbot, panel.resume_button)
    outcome = shown.args[0]
    assert outcome.status == "success" and outcome.answer == slow[2]["text"]
    assert len(outcome.state.run_data["Calculator"]) == 2  # the tools did not run again
    assert ExecutionStore().load(summary.id).status == "success"


def test_replay_reports_where_a_changed_tool_diverges(run_window, qtbot) -> None:
    # The Code Tool's sandbox shares no state between calls: a clock makes its answer change.
    workflow = agent_workflow(
        [{"toolCalls": [tool_call("Lookup", {"query": "price"}, "k1")]}, {"text": "It costs 25."}],
        tools=[("Lookup", CODE_TOOL, {"pythonCode": "import time\nreturn str(time.time_ns())"})],
    )
    window, controller = run_window(workflow)
    first = chat(qtbot, controller).state
    run_id, before = first.id, first.run_data["Lookup"][0].data["ai_tool"][0][0]["json"]["response"]
    panel = panel_of(controller)
    panel.select(run_id)
    with qtbot.waitSignal(controller.run_shown, timeout=20_000) as shown:
        click(qtbot, panel.replay_button)
    assert shown.args[0].status == "error"
    text = panel.report.text()
    assert text.startswith('Replay diverged at iteration 1, node "Lookup": the tool returned something else')
    assert f'"{before}"' in text
    assert panel.report.isVisible() and "a1160a" in panel.report.styleSheet()


def waiting_execution(tmp_path: Path) -> str:
    """An execution left waiting at a Wait node for a webhook call, by the CLI (the store the editor reads)."""
    from tests.engine.test_wait_resume import waiting_workflow

    path = tmp_path / "wait.json"
    save_workflow(waiting_workflow({"httpMethod": "POST"}), path)
    before = {s.id for s in ExecutionStore().list()}
    subprocess.run([sys.executable, "-m", "engine.cli", "run", str(path)], cwd=ROOT, capture_output=True, timeout=60)
    (new,) = [s for s in ExecutionStore().list() if s.id not in before]
    state = ExecutionStore().load(new.id)
    assert state.status == "paused" and state.pause["kind"] == "wait"
    return state.id


def test_a_waiting_execution_resumes_with_the_request_item_the_user_gives(run_window, qtbot, monkeypatch, tmp_path) -> None:
    from PySide6.QtWidgets import QInputDialog

    waiting = waiting_execution(tmp_path)
    window, controller = run_window(agent_workflow([{"text": "unrelated"}], tools=[]))
    panel = panel_of(controller)
    panel.refresh()
    assert panel.select(waiting) and panel.resume_button.isEnabled()
    asked: list[str] = []

    def answer(_parent, _title, label, _text):  # type: ignore[no-untyped-def]
        asked.append(label)
        return '{"body": {"ok": "from the editor"}}', True

    monkeypatch.setattr(QInputDialog, "getMultiLineText", staticmethod(answer))
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as shown:
        click(qtbot, panel.resume_button)
    assert "waits for a webhook call" in asked[0]
    outcome = shown.args[0]
    assert outcome.status == "success" and outcome.state.id == waiting
    assert outcome.state.result[0]["json"] == {"got": "from the editor"}

    cancelled = waiting_execution(tmp_path)
    panel.refresh()
    assert panel.select(cancelled)
    monkeypatch.setattr(QInputDialog, "getMultiLineText", staticmethod(lambda *_args: ("", False)))
    click(qtbot, panel.resume_button)  # the user closed the dialog: nothing runs
    assert not controller.bridge.running and ExecutionStore().load(cancelled).status == "paused"


def test_a_run_the_store_cannot_write_is_said_listed_crashed_and_resumes(run_window, qtbot, monkeypatch) -> None:
    """The store failing mid-run (here: the second Calculator run cannot be written, as on a full
    disk): the window says the store's error, the execution is listed crashed with Resume, and
    once the store writes again Resume finishes it with the tool run that was lost run again."""
    from engine.store.run_records import RunRecords

    write_run = RunRecords.add_run
    calls = {"Calculator": 0}

    def full_disk(self, execution_id, event):  # type: ignore[no-untyped-def]
        if event.node == "Calculator":
            calls["Calculator"] += 1
            if calls["Calculator"] == 2:
                raise OSError(28, "No space left on device")
        write_run(self, execution_id, event)

    monkeypatch.setattr(RunRecords, "add_run", full_disk)
    window, controller = run_window(agent_workflow(THREE_ITERATIONS))
    outcome = chat(qtbot, controller)
    run_id = outcome.state.id
    assert outcome.status == "error" and outcome.error is not None
    assert "failed to write the run of node \"Calculator\"" in outcome.error.message
    assert "No space left on device" in controller.output.run_log.toPlainText()
    assert outcome.error.message.endswith("The execution is kept where it stopped: Resume in Executions continues it"
                                          " once that is mended")
    panel = panel_of(controller)
    summary = panel.model.rows[0]
    assert (summary.id, summary.status) == (run_id, "crashed")
    assert panel.select(run_id) and panel.resume_button.isEnabled()
    monkeypatch.setattr(RunRecords, "add_run", write_run)  # room on the disk again
    with qtbot.waitSignal(controller.run_shown, timeout=20_000) as shown:
        click(qtbot, panel.resume_button)
    resumed = shown.args[0]
    assert resumed.status == "success" and resumed.answer == "The answer is 43."
    stored = ExecutionStore().load(run_id)
    assert stored.status == "success" and len(stored.run_data["Calculator"]) == 2
