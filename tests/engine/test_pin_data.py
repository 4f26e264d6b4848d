"""Pinned data (n8n's pinData): a pinned node outputs its items without running, whatever its type."""

from __future__ import annotations

from pathlib import Path

from engine.executor import Engine
from engine.pin_data import pin, pinned_items, unpin
from engine.workflow import load_workflow, parse_workflow, save_workflow
from tests.builders import MANUAL_TRIGGER, SET, link, node


def _workflow(pin_data: dict, *extra_nodes: dict) -> dict:
    connections: dict = {}
    link(connections, "Start", "Slack")
    link(connections, "Slack", "Edit Fields")
    nodes = [
        node("Start", MANUAL_TRIGGER),
        node("Slack", "n8n-nodes-base.slack", {"channel": "#x"}),
        node("Edit Fields", SET, {"assignments": {"assignments": [{"name": "seen", "value": "={{ $json.text }}", "type": "string"}]}},
             typeVersion=3.4),
        *extra_nodes,
    ]
    return {"name": "pinned", "nodes": nodes, "connections": connections, "pinData": pin_data}


async def test_a_pinned_unsupported_node_outputs_its_items_and_the_rest_runs(engine: Engine) -> None:
    wf = parse_workflow(_workflow({"Slack": [{"json": {"text": "one"}}, {"json": {"text": "two"}}]}))
    state = await engine.run(wf)
    assert state.status == "success", state.error
    slack = state.run_data["Slack"][0]
    assert slack.data["main"] == [[{"json": {"text": "one"}, "pairedItem": {"item": 0}}, {"json": {"text": "two"}, "pairedItem": {"item": 0}}]]
    assert slack.metadata["pinned"] is True
    assert [i["json"] for i in state.result] == [{"seen": "one"}, {"seen": "two"}]


async def test_unpinned_the_unsupported_node_fails_the_run(engine: Engine) -> None:
    state = await engine.run(parse_workflow(_workflow({})))
    assert state.status == "error"
    assert state.error.node == "Slack" and "does not support" in state.error.message


async def test_pinned_data_written_as_plain_objects_is_read_as_items(engine: Engine) -> None:
    state = await engine.run(parse_workflow(_workflow({"Slack": [{"text": "plain"}]})))
    assert [i["json"] for i in state.result] == [{"seen": "plain"}]


async def test_a_run_never_changes_the_pinned_items_in_the_file(engine: Engine) -> None:
    wf = parse_workflow(_workflow({"Slack": [{"json": {"text": "one", "nested": {"a": 1}}}]}))
    state = await engine.run(wf)
    state.run_data["Slack"][0].data["main"][0][0]["json"]["nested"]["a"] = 99
    assert wf.pinData["Slack"][0]["json"]["nested"] == {"a": 1}


async def test_a_pinned_trigger_of_an_unsupported_type_starts_the_run(engine: Engine) -> None:
    data = {"name": "telegram", "nodes": [
        node("Telegram Trigger", "n8n-nodes-base.telegramTrigger", {"updates": ["message"]}),
        node("Edit Fields", SET, {"assignments": {"assignments": [{"name": "text", "value": "={{ $json.message }}"}]}}, typeVersion=3.4),
    ], "connections": {}, "pinData": {"Telegram Trigger": [{"json": {"message": "hi"}}]}}
    link(data["connections"], "Telegram Trigger", "Edit Fields")
    wf = parse_workflow(data)
    start = engine.start_node(wf)
    assert start.name == "Telegram Trigger"
    state = await engine.run(wf, start=start.name)
    assert state.status == "success", state.error
    assert state.result == [{"json": {"text": "hi"}, "pairedItem": {"item": 0}}]


def test_saving_keeps_pinned_data_and_pin_unpin_edit_it(tmp_path: Path) -> None:
    wf = parse_workflow(_workflow({"Slack": [{"json": {"text": "one"}}]}))
    path = tmp_path / "wf.json"
    save_workflow(wf, path)
    again = load_workflow(path)
    assert again.pinData == {"Slack": [{"json": {"text": "one"}}]}
    pin(again, "Edit Fields", [{"json": {"seen": "x"}, "pairedItem": {"item": 0}}])
    unpin(again, "Slack")
    save_workflow(again, path)
    third = load_workflow(path)
    assert third.pinData == {"Edit Fields": [{"json": {"seen": "x"}}]}
    assert pinned_items(third, "Slack") is None
    assert pinned_items(third, "Edit Fields") == [{"json": {"seen": "x"}}]
