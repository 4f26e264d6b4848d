"""Sub-nodes wired into the wrong port, and pinned data that is not items: clear errors, never Python's."""

from __future__ import annotations

import pytest

from engine.executor import Engine
from engine.workflow import parse_workflow
from tests.builders import MEMORY, SCRIPTED, agent_workflow

CALCULATOR = "@n8n/n8n-nodes-langchain.toolCalculator"


def workflow_with(memory_type: str | None = None, tool_type: str | None = None, pin: object = None):
    doc = agent_workflow([{"text": "hi"}], memory=True).model_dump(mode="json", by_alias=True)
    for node in doc["nodes"]:
        if node["name"] == "Memory" and memory_type:
            node["type"], node["parameters"] = memory_type, {}
        if node["name"] == "Calculator" and tool_type:
            node["type"], node["parameters"] = tool_type, {"contextWindowLength": 5}
    if pin is not None:
        doc["pinData"] = {"Chat": pin}
    return parse_workflow(doc)


async def run(engine: Engine, wf):
    return await engine.run(wf, items=[{"json": {"chatInput": "go", "sessionId": "s"}}])


@pytest.mark.parametrize(("memory_type", "tool_type", "message"), [
    (SCRIPTED, None, 'Node "Memory" is connected to the Memory input of "AI Agent", but it supplies a chat model, not a memory'),
    (CALCULATOR, None, 'Node "Memory" is connected to the Memory input of "AI Agent", but it supplies a tool, not a memory'),
    (None, MEMORY, 'Node "Calculator" is connected to the Tool input of "AI Agent", but it supplies a memory, not a tool'),
])
async def test_a_sub_node_in_the_wrong_port_is_named(engine: Engine, memory_type, tool_type, message: str) -> None:
    state = await run(engine, workflow_with(memory_type, tool_type))
    assert state.status == "error"
    assert state.error.message == message
    assert "Error" not in state.error.message and "attribute" not in state.error.message


@pytest.mark.parametrize(("pin", "message"), [
    ([{"json": None}], 'The pinned data of node "Chat" has an item 0 whose json is null, not an object'),
    ([{"json": {"chatInput": "a"}}, {"json": [1]}], 'The pinned data of node "Chat" has an item 1 whose json is list, not an object'),
    ({"json": {}}, 'The pinned data of node "Chat" is not a list of items'),
])
async def test_pinned_data_that_is_not_items_is_named(engine: Engine, pin, message: str) -> None:
    state = await run(engine, workflow_with(pin=pin))
    assert state.status == "error" and state.error.node == "Chat"
    assert state.error.message == message


async def test_pinned_plain_objects_are_items_as_in_n8n(engine: Engine) -> None:
    state = await run(engine, workflow_with(pin=[{"chatInput": "pinned", "sessionId": "s"}]))
    assert state.status == "success", state.error
