"""Where a run starts: any trigger, with its item given or pinned; clear errors naming the trigger
and its type; every unsupported node on the run's path listed at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.executor import Engine
from engine.start import StartError, read_input, unsupported_message, unsupported_on_path
from engine.workflow import parse_workflow
from tests.builders import AGENT, MANUAL_TRIGGER, SCRIPTED, SET, link, node

FIELDS = {"assignments": {"assignments": [{"name": "got", "value": "={{ $json.text }}", "type": "string"}]}}


def telegram_workflow(pin: dict | None = None) -> dict:
    connections: dict = {}
    link(connections, "Telegram Trigger", "Edit Fields")
    return {"name": "bot", "nodes": [
        node("Telegram Trigger", "n8n-nodes-base.telegramTrigger", {"updates": ["message"]}, typeVersion=1.1),
        node("Edit Fields", SET, FIELDS, typeVersion=3.4),
    ], "connections": connections, "pinData": pin or {}}


def test_an_unsupported_trigger_names_itself_its_type_and_the_ways_to_start(engine: Engine) -> None:
    wf = parse_workflow(telegram_workflow())
    with pytest.raises(StartError) as caught:
        engine.start_node(wf)
    message = str(caught.value)
    assert '"Telegram Trigger" (n8n-nodes-base.telegramTrigger)' in message
    assert "--trigger" in message and "--input" in message and "pin" in message


async def test_a_given_item_starts_the_run_from_an_unsupported_trigger(engine: Engine) -> None:
    wf = parse_workflow(telegram_workflow())
    start = engine.start_node(wf, trigger="Telegram Trigger", injected=True)
    state = await engine.run(wf, start=start.name, items=[{"json": {"text": "hello"}}])
    assert state.status == "success", state.error
    assert state.run_data["Telegram Trigger"][0].data["main"] == [[{"json": {"text": "hello"}, "pairedItem": {"item": 0}}]]
    assert state.result == [{"json": {"got": "hello"}, "pairedItem": {"item": 0}}]


def test_naming_a_trigger_checks_it(engine: Engine) -> None:
    wf = parse_workflow(telegram_workflow())
    with pytest.raises(StartError, match='no node "Nope"'):
        engine.start_node(wf, trigger="Nope")
    with pytest.raises(StartError, match="is not a trigger node"):
        engine.start_node(wf, trigger="Edit Fields")
    with pytest.raises(StartError, match="give its output item with --input"):
        engine.start_node(wf, trigger="Telegram Trigger")
    pinned = parse_workflow(telegram_workflow({"Telegram Trigger": [{"json": {"text": "pinned"}}]}))
    assert engine.start_node(pinned, trigger="Telegram Trigger").name == "Telegram Trigger"


def test_a_workflow_without_triggers_still_says_so(engine: Engine) -> None:
    wf = parse_workflow({"name": "none", "nodes": [node("Edit Fields", SET, FIELDS)], "connections": {}})
    with pytest.raises(StartError, match="has no enabled trigger node to start from"):
        engine.start_node(wf)


def test_every_unsupported_node_on_the_path_is_listed(engine: Engine) -> None:
    connections: dict = {}
    link(connections, "Start", "Sheets")
    link(connections, "Sheets", "AI Agent")
    link(connections, "AI Agent", "Slack")
    link(connections, "AI Agent", "Pinned Mail")
    link(connections, "Model", "AI Agent", "ai_languageModel")
    link(connections, "Vector Store", "AI Agent", "ai_tool")
    wf = parse_workflow({"name": "many", "nodes": [
        node("Start", MANUAL_TRIGGER),
        node("Sheets", "n8n-nodes-base.googleSheets"),
        node("AI Agent", AGENT, {"options": {}}),
        node("Model", SCRIPTED, {"replies": []}),
        node("Vector Store", "@n8n/n8n-nodes-langchain.toolVectorStore"),
        node("Slack", "n8n-nodes-base.slack"),
        node("Pinned Mail", "n8n-nodes-base.gmail"),
        node("Off Path", "n8n-nodes-base.notion"),
    ], "connections": connections, "pinData": {"Pinned Mail": [{"json": {}}]}})
    blocked = unsupported_on_path(wf, engine.registry, "Start")
    # a tool of a type we do not run does not block: each of its calls is an error observation
    assert [n.name for n in blocked] == ["Sheets", "Slack"]
    message = unsupported_message(blocked)
    assert message.startswith("2 nodes on the run's path have types mini-n8n does not support")
    assert '"Sheets" (n8n-nodes-base.googleSheets)' in message


def test_input_is_json_text_or_a_file(tmp_path: Path) -> None:
    assert read_input('{"a": 1}') == [{"json": {"a": 1}}]
    assert read_input('[{"a": 1}, {"json": {"b": 2}}]') == [{"json": {"a": 1}}, {"json": {"b": 2}}]
    path = tmp_path / "item.json"
    path.write_text(json.dumps({"message": {"text": "hi"}}))
    assert read_input(f"@{path}") == [{"json": {"message": {"text": "hi"}}}]
    with pytest.raises(StartError, match="not valid JSON"):
        read_input("{nope")
    with pytest.raises(StartError, match="--input .*missing.json"):
        read_input(f"@{tmp_path / 'missing.json'}")
    with pytest.raises(StartError, match="item 0 that is int"):
        read_input("[1]")
