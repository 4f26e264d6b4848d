"""Think tool: named thinking_tool, hands the thought back, description editable."""

from __future__ import annotations

from engine.executor import Engine
from tests.builders import agent_workflow, tool_call
from tests.nodes.tools.agent_runs import observation, run_tool_once

THINK = "@n8n/n8n-nodes-langchain.toolThink"


async def test_think_returns_the_thought(engine: Engine) -> None:
    state = await run_tool_once(engine, THINK, {}, {"input": "17 shirts, 25 each: multiply"}, name="Think", tool="thinking_tool")
    assert observation(state) == "17 shirts, 25 each: multiply"
    run = state.run_data["Think"][0]
    assert run.data["ai_tool"][0][0]["json"] == {"response": "17 shirts, 25 each: multiply"}
    assert run.metadata["toolCallId"] == "call_1"


async def test_think_tool_spec_uses_fixed_name_and_edited_description(engine: Engine) -> None:
    wf = agent_workflow([{"text": "ok"}], tools=[("My Thoughts", THINK, {"description": "Plan before acting"})])
    state = await engine.run(wf, items=[{"json": {"chatInput": "hi"}}])
    assert state.status == "success"
    model_input = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]
    assert model_input["tools"] == ["thinking_tool"]


async def test_think_without_input_is_a_tool_error(engine: Engine) -> None:
    state = await run_tool_once(engine, THINK, {}, {"thought": 3}, name="Think", tool="thinking_tool")
    assert observation(state).startswith("Error:")
