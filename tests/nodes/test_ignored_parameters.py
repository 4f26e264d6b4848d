"""n8n parameters a node does not use are never silent: a workflow that sets one gets a run-log
note naming the node and the parameter; one left out (or at its default) gets none."""

from __future__ import annotations

from typing import Any

import pytest

from engine.executor import Engine
from engine.workflow import parse_workflow
from nodes.ignored_parameters import parameters_set
from nodes.triggers.chat_trigger import chat_item
from tests.builders import AGENT, CHAT_TRIGGER, MANUAL_TRIGGER, SCRIPTED, agent_workflow, link, node

CHAIN = "@n8n/n8n-nodes-langchain.chainLlm"


def notes(state: Any, name: str) -> list[str]:
    return state.run_data[name][0].metadata.get("notes") or []


def test_a_parameter_counts_as_set_when_present_and_not_its_default() -> None:
    parameters = {"batching": {"batchSize": 2}, "mode": "webhook", "options": {"title": "Hi", "maxTokensFromMemory": 0}}
    names = ["batching", "mode", "public", "options.title", "options.subtitle", "options.maxTokensFromMemory"]
    assert parameters_set(parameters, names, {"options.maxTokensFromMemory": 0}) == ["batching", "mode", "options.title"]
    assert parameters_set({"options": "={{ 1 }}"}, ["options.title"]) == []


async def test_llm_chain_batching_is_noted(engine: Engine) -> None:
    connections: dict = {}
    link(connections, "Start", "Chain")
    link(connections, "Model", "Chain", "ai_languageModel")
    workflow = parse_workflow({"name": "chain", "connections": connections, "nodes": [
        node("Start", MANUAL_TRIGGER),
        node("Chain", CHAIN, {"promptType": "define", "text": "hi", "batching": {"batchSize": 2, "delayBetweenBatches": 100}}),
        node("Model", SCRIPTED, {"replies": [{"text": "a"}, {"text": "b"}]}),
    ]})
    state = await engine.run(workflow, items=[{"json": {}}, {"json": {}}])
    assert state.status == "success", state.error
    assert notes(state, "Chain") == [
        'Node "Chain" sets the parameter "batching", which mini-n8n does not implement: items are sent to the model '
        "one at a time, without its batch size or delay (a run-log note names it)"]


@pytest.mark.parametrize(("params", "noted"), [
    ({"options": {"maxTokensFromMemory": 500}}, ["options.maxTokensFromMemory"]),
    ({"options": {"maxTokensFromMemory": 0}}, []),
    ({"options": {"humanMessage": "Answer: {input}"}}, []),  # the Tools Agent has no human message in n8n either
])
async def test_agent_options_it_does_not_use_are_noted(engine: Engine, params: dict, noted: list[str]) -> None:
    workflow = agent_workflow([{"text": "ok"}], tools=[], agent_options=params["options"])
    state = await engine.run(workflow, start="Chat", items=[chat_item("hi", "s1")])
    assert state.status == "success", state.error
    assert [n.split('"')[3] for n in notes(state, "AI Agent")] == noted


async def test_the_conversational_agents_human_message_is_noted(engine: Engine) -> None:
    connections: dict = {}
    link(connections, "Start", "AI Agent")
    link(connections, "Model", "AI Agent", "ai_languageModel")
    workflow = parse_workflow({"name": "v1 agent", "connections": connections, "nodes": [
        node("Start", MANUAL_TRIGGER),
        node("AI Agent", AGENT, {"options": {"humanMessage": "Answer: {input}"}}, typeVersion=1.5),
        node("Model", SCRIPTED, {"replies": [{"text": "ok"}]}),
    ]})
    state = await engine.run(workflow, items=[{"json": {"chatInput": "hi"}}])
    assert state.status == "success", state.error
    agent_notes = notes(state, "AI Agent")
    assert len(agent_notes) == 2 and "conversationalAgent" in agent_notes[0]
    assert agent_notes[1].startswith('Node "AI Agent" sets the parameter "options.humanMessage"')


async def test_chat_trigger_settings_of_n8ns_chat_page_are_noted(engine: Engine) -> None:
    workflow = agent_workflow([{"text": "ok"}], tools=[])
    workflow.node("Chat").parameters.update(
        {"public": True, "initialMessages": "Hi!", "options": {"title": "Support", "responseMode": "lastNode",
                                                               "allowedOrigins": "https://example.com"}})
    state = await engine.run(workflow, start="Chat", items=[chat_item("hi", "s1")])
    assert state.status == "success", state.error
    noted = [n.split('"')[3] for n in notes(state, "Chat")]
    assert noted == ["initialMessages", "options.title", "options.allowedOrigins"]
    assert "hosted chat page is not served" in notes(state, "Chat")[0]
    assert "any origin" in notes(state, "Chat")[2]
