"""Nothing that matters lives in Python objects across a boundary: JSON copies resume the same run."""

from __future__ import annotations

import json

from engine.debugger import Breakpoints
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.requests import EngineRequest, EngineResponse
from nodes.agent.tools_agent import ToolsAgent
from nodes.triggers.chat_trigger import chat_item
from tests.builders import CALCULATOR, agent_workflow, items_agent_workflow, tool_call
from tests.engine.pausing import at_boundaries, run_to_pause

REPLIES = [
    {"toolCalls": [tool_call("Calculator", {"input": "17 * 25"}, "c1")]},
    {"toolCalls": [tool_call("Calculator", {"input": "425 + 1"}, "c2"), tool_call("Calculator", {"input": "2 ** 10"}, "c3")]},
    {"text": "426 and 1024"},
]


def strip_times(state_json: dict) -> dict:
    """The state without wall-clock figures and ids, for comparing two runs."""
    text = json.dumps(state_json, sort_keys=True)
    data = json.loads(text)
    data.pop("id", None)
    for key in ("startedAt", "stoppedAt"):
        data.pop(key, None)
    for runs in data.get("runData", {}).values():
        for run in runs:
            run.pop("startTime", None)
            run.pop("executionTime", None)
            for k in ("latencyMs", "modelTimeMs"):
                run.get("metadata", {}).pop(k, None)
    return data


async def test_agent_resumes_from_a_json_copy_of_the_request_metadata(engine: Engine) -> None:
    """Run the Agent one tool result at a time; between them keep only JSON text of the state."""
    wf = agent_workflow(REPLIES)
    paused_states: list[str] = []
    after_each_result = Breakpoints(after_tool_result=True)

    execution = engine.create(wf, items=[chat_item("go", "s")])
    state = await run_to_pause(execution, after_each_result)
    rounds = 0
    while state.status == "paused":
        rounds += 1
        text = json.dumps(execution.snapshot())
        paused_states.append(text)
        del execution, state  # nothing but the JSON text goes on
        fresh_engine = Engine(builtin_registry(), engine.services)
        execution = fresh_engine.restore(json.loads(text))
        state = await run_to_pause(execution, after_each_result)
    assert rounds == 3  # after c1, after c2, after c3
    assert state.status == "success"
    assert state.result == [{"json": {"output": "426 and 1024"}, "pairedItem": {"item": 0}}]
    # the request metadata stored once the second iteration's tools answered is plain JSON with the seed's fields
    snapshot = json.loads(paused_states[2])
    pending = snapshot["stack"][-1]["pending"]["request"]["metadata"]
    assert pending["iterationCount"] == 2
    assert [s["toolCallId"] for s in pending["previousRequests"]] == ["c1"]  # n8n's v3 agent: one list
    assert pending["itemIndex"] == 0 and "finishedItems" not in pending

    uninterrupted = await Engine(builtin_registry()).run(agent_workflow(REPLIES), items=[chat_item("go", "s")])
    assert strip_times(state.to_json())["runData"] == strip_times(uninterrupted.to_json())["runData"]


async def test_stopping_at_every_boundary_and_restoring_gives_the_same_run(engine: Engine) -> None:
    wf = agent_workflow(REPLIES, memory=True, tools=[("Calculator", CALCULATOR, {})])
    reference = await Engine(builtin_registry()).run(wf, items=[chat_item("go", "same")])

    execution = Engine(builtin_registry()).create(wf, items=[chat_item("go", "same")])
    stops = 0
    seen: list[dict] = []
    everywhere = at_boundaries("Chat", "AI Agent")

    state = await run_to_pause(execution, everywhere, seen)
    services = execution.engine.services
    while state.status == "paused":
        stops += 1
        execution = Engine(builtin_registry(), services).restore(json.loads(json.dumps(execution.snapshot())))
        state = await run_to_pause(execution, everywhere, seen)
    assert state.status == "success"
    # chat trigger, agent, before and after each of the 3 tool runs
    assert stops == 8
    assert [p["kind"] for p in seen] == ["node", "node", "before_tool", "tool_result", "before_tool", "tool_result",
                                         "before_tool", "tool_result"]
    assert strip_times(state.to_json())["runData"] == strip_times(reference.to_json())["runData"]
    assert state.result == reference.result


async def test_an_agent_with_several_items_restored_after_every_tool_result_gives_the_same_run() -> None:
    """n8n's v3 Agent gives each item after the first the first item's steps: in a process those
    stand on the first item's log; from JSON they are lists again. Either way, the same run."""
    wf = items_agent_workflow(3, 4)
    reference = await Engine(builtin_registry()).run(wf)
    execution = Engine(builtin_registry()).create(wf)
    state = await run_to_pause(execution, Breakpoints(after_tool_result=True))
    stops = 0
    while state.status == "paused":
        stops += 1
        execution = Engine(builtin_registry()).restore(json.loads(json.dumps(execution.snapshot())))
        state = await run_to_pause(execution, Breakpoints(after_tool_result=True))
    assert stops == 3 * 4 and state.status == "success"
    assert strip_times(state.to_json())["runData"] == strip_times(reference.to_json())["runData"]


async def test_tools_agent_execute_from_json_metadata_directly() -> None:
    """Call the Agent by hand: its second call needs nothing but the JSON of the first request."""
    engine = Engine(builtin_registry())
    wf = agent_workflow(REPLIES[:1] + [{"text": "425"}])
    execution = engine.create(wf, items=[chat_item("go", "s")])
    state = await run_to_pause(execution, Breakpoints(after_tool_result=True))
    entry = state.stack[-1]
    request_json = json.dumps(entry.pending.request.model_dump(by_alias=True))
    responses_json = json.dumps([r.model_dump(by_alias=True) for r in entry.pending.responses])
    request = EngineRequest.model_validate(json.loads(request_json))
    assert request.actions[0].node_name == "Calculator"
    response = EngineResponse.model_validate({"actionResponses": json.loads(responses_json), "metadata": request.metadata})
    from engine.context import NodeContext

    ctx = NodeContext(execution, wf.node("AI Agent"), entry.input, run_index=0, entry=entry, iteration=2)
    result = await ToolsAgent().execute(ctx, response)
    assert result == [[{"json": {"output": "425"}}]]
