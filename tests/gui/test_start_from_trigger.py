"""The editor starts a run from a chosen trigger, as `mini-n8n run --trigger/--input` does: the
trigger's context menu, a JSON item for it, its pinned data when it has some."""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog

from engine.workflow import parse_workflow
from tests.builders import MANUAL_TRIGGER, SET, link, node

TELEGRAM = "n8n-nodes-base.telegramTrigger"


def telegram_workflow(pinned: list | None = None):  # type: ignore[no-untyped-def]
    """A Telegram Trigger (a type mini-n8n does not run) and a Manual Trigger, each into a Set node."""
    assignments = {"assignments": [{"id": "t", "name": "text", "value": "={{ $json.message.text }}", "type": "string"}]}
    nodes = [node("Telegram", TELEGRAM, {}, typeVersion=1.1), node("Manual", MANUAL_TRIGGER),
             node("Edit Fields", SET, {"assignments": assignments, "includeOtherFields": False}, typeVersion=3.4)]
    connections: dict = {}
    link(connections, "Telegram", "Edit Fields")
    link(connections, "Manual", "Edit Fields")
    data = {"name": "telegram bot", "nodes": nodes, "connections": connections}
    if pinned is not None:
        data["pinData"] = {"Telegram": pinned}
    return parse_workflow(data)


def test_a_trigger_offers_to_start_from_it_and_other_nodes_do_not(run_window) -> None:
    window, _controller = run_window(telegram_workflow())
    action = window.start_from_trigger.action
    # the node context menu lists the window's actions marked nodeMenu that are visible
    assert action in window.actions() and action.property("nodeMenu")
    window.scene.select_names(["Telegram"])
    assert action.isVisible() and action.isEnabled()
    window.scene.select_names(["Edit Fields"])
    assert not action.isVisible()
    window.scene.select_names(["Telegram", "Manual"])
    assert not action.isVisible()


def test_the_json_item_is_the_triggers_output(run_window, qtbot, monkeypatch) -> None:
    window, controller = run_window(telegram_workflow())
    window.scene.select_names(["Telegram"])
    asked: list[str] = []

    def answer(_parent, _title, label, text):  # type: ignore[no-untyped-def]
        asked.append(text)
        return '{"message": {"text": "hello bot"}}', True

    monkeypatch.setattr(QInputDialog, "getMultiLineText", staticmethod(answer))
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as finished:
        window.start_from_trigger.action.trigger()
    assert asked == ['{\n  "field": "value"\n}']  # an unsupported trigger needs its item
    outcome = finished.args[0]
    assert outcome.status == "success", outcome.error
    state = controller.bridge.state
    assert state.start_node == "Telegram"
    assert state.run_data["Telegram"][0].data["main"][0][0]["json"] == {"message": {"text": "hello bot"}}
    assert state.run_data["Edit Fields"][0].data["main"][0][0]["json"] == {"text": "hello bot"}
    assert "Manual" not in state.run_data
    assert window.canvas.node_item("Edit Fields").status == "success"


def test_pinned_data_starts_the_run_when_no_json_is_given(run_window, qtbot, monkeypatch) -> None:
    window, controller = run_window(telegram_workflow([{"json": {"message": {"text": "pinned hi"}}}]))
    window.scene.select_names(["Telegram"])
    monkeypatch.setattr(QInputDialog, "getMultiLineText", staticmethod(lambda _p, _t, _l, text: (text, True)))
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as finished:
        window.start_from_trigger.action.trigger()
    assert finished.args[0].status == "success"
    assert controller.bridge.state.run_data["Edit Fields"][0].data["main"][0][0]["json"] == {"text": "pinned hi"}


def test_bad_json_or_no_item_is_said_and_nothing_runs(run_window) -> None:
    window, controller = run_window(telegram_workflow())
    problem = window.start_from_trigger.start("Telegram", '{"message": ')
    assert problem is not None and "not valid JSON" in problem
    problem = window.start_from_trigger.start("Telegram", "")
    assert problem is not None and "Telegram" in problem and "--input" in problem
    assert window.statusBar().currentMessage() == problem
    assert not controller.bridge.running and controller.bridge.state is None


def test_a_run_from_a_trigger_stops_at_the_editors_breakpoints(run_window, qtbot) -> None:
    window, controller = run_window(telegram_workflow())
    window.scene.select_names(["Edit Fields"])
    controller.debug.toggle_breakpoint()
    assert window.start_from_trigger.start("Telegram", '{"message": {"text": "hi"}}') is None
    qtbot.waitUntil(lambda: controller.bridge.paused, timeout=5000)
    assert controller.bridge.paused_at is not None and controller.bridge.paused_at.node == "Edit Fields"
    qtbot.waitUntil(lambda: window.canvas.node_item("Edit Fields").status == "paused", timeout=5000)
    assert "Edit Fields" not in controller.bridge.state.run_data
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as finished:
        controller.debug.continue_()
    assert finished.args[0].status == "success"
    assert controller.bridge.state.run_data["Edit Fields"][0].data["main"][0][0]["json"] == {"text": "hi"}


def test_without_breakpoints_a_run_from_a_trigger_does_not_pause(run_window, qtbot) -> None:
    window, controller = run_window(telegram_workflow())
    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as finished:
        assert window.start_from_trigger.start("Telegram", '{"message": {"text": "hi"}}') is None
    assert finished.args[0].status == "success" and controller.bridge.state.mode == "manual"
