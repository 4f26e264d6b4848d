"""Tool names must be unique per agent; a clash stops the run with n8n's message, naming the tool."""

from __future__ import annotations

import pytest

from engine.executor import Engine
from engine.workflow import Workflow
from tests.builders import CALCULATOR, agent_workflow

THINK = "@n8n/n8n-nodes-langchain.toolThink"
CODE = "@n8n/n8n-nodes-langchain.toolCode"


def with_named_code_tools(tools: list) -> Workflow:
    """The agent workflow, its Code Tools of v1.1 (whose `name` parameter names the tool; later the node's name does)."""
    workflow = agent_workflow([{"text": "fine"}], tools=tools)
    for name, type_, _params in tools:
        if type_ == CODE:
            workflow.node(name).typeVersion = 1.1
    return workflow


@pytest.mark.parametrize(
    ("tools", "clash"),
    [
        ([("Think", THINK, {}), ("Think again", THINK, {})], "thinking_tool"),
        ([("Get Price", CALCULATOR, {}), ("Get_Price", CALCULATOR, {})], "Get_Price"),
        ([("Calculator", CALCULATOR, {}), ("Math", CODE, {"name": "Calculator"})], "Calculator"),
    ],
)
async def test_same_tool_name_twice_is_refused(engine: Engine, tools: list, clash: str) -> None:
    state = await engine.run(with_named_code_tools(tools), items=[{"json": {"chatInput": "hi"}}])
    assert state.status == "error"
    assert state.error.message == (
        f"You have multiple tools with the same name: '{clash}', please rename them to avoid conflicts"
    )
    assert "Model" not in state.run_data  # refused before the model was asked


async def test_distinct_names_run(engine: Engine) -> None:
    tools = [("Think", THINK, {}), ("Calculator", CALCULATOR, {}), ("Math", CODE, {"name": "math_code"})]
    state = await engine.run(with_named_code_tools(tools), items=[{"json": {"chatInput": "hi"}}])
    assert state.status == "success"
    assert state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["tools"] == ["thinking_tool", "Calculator", "math_code"]


async def test_from_v1_2_a_code_tool_and_a_think_tool_of_v1_1_are_named_after_their_node(engine: Engine) -> None:
    workflow = agent_workflow([{"text": "fine"}], tools=[("Math", CODE, {"name": "math_code"}), ("My Think", THINK, {})])
    workflow.node("My Think").typeVersion = 1.1
    state = await engine.run(workflow, items=[{"json": {"chatInput": "hi"}}])
    assert state.status == "success"
    assert state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["tools"] == ["Math", "My_Think"]
