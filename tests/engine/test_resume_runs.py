"""Runs recorded after a boundary, served again on resume: which are, in what order, and what a
call that does not fit them gets."""

from __future__ import annotations

import pytest

from engine.errors import NodeOperationError
from engine.resume_runs import RecordedAhead, servable, servable_prefix, waiting_agent
from engine.run_data import TaskData

AGENT = ("AI Agent", 0)
WHERE = {"node": "AI Agent", "runIndex": 0, "iteration": 2, "itemIndex": 0}


def model_run(**metadata: object) -> dict:
    return {"startTime": 1.0, "executionTime": 0.1, "executionStatus": "success", "source": [],
            "metadata": {**WHERE, "latencyMs": 0.1, **metadata},
            "input": {"ai_languageModel": [[{"json": {"messages": [], "tools": []}}]]},
            "data": {"ai_languageModel": [[{"json": {"content": "", "toolCalls": []}}]]}}


def tool_run(call: str = "c1", **metadata: object) -> dict:
    return {"startTime": 2.0, "executionTime": 0.1, "executionStatus": "success", "source": [],
            "metadata": {**WHERE, "toolCallId": call, "toolName": "Calculator", **metadata},
            "input": {"ai_tool": [[{"json": {"input": "1 + 1"}}]]}, "data": {"ai_tool": [[{"json": {"response": "2"}}]]}}


def test_the_loop_of_the_lowest_entry_waiting_on_a_request() -> None:
    stack = [{"node": "Chat"}, {"node": "AI Agent", "runIndex": 0, "pending": {"request": {}, "responses": []}},
             {"\u2063delta": "requested", "at": 0}, {"node": "Inner", "runIndex": 3, "pending": {"request": {}}}]
    assert waiting_agent(stack) == AGENT
    assert waiting_agent([{"node": "Chat"}, {"node": "AI Agent", "pending": None}]) is None


def test_model_calls_and_tool_runs_of_the_agents_run_are_served() -> None:
    assert servable(model_run(), AGENT) and servable(tool_run(), AGENT)


@pytest.mark.parametrize("why, run", [
    ("another agent's", model_run(node="Other Agent")),
    ("another run of the agent", tool_run(runIndex=1)),
    ("an agent's nested in a tool", tool_run(parent={"node": "Outer"})),
    ("edited while paused", model_run(edits=[{"what": "reply"}])),
    ("pinned", tool_run(pinned=True)),
    ("served by a replay", tool_run(replayed=True)),
    ("failed", {**tool_run(), "executionStatus": "error", "error": {"message": "no"}}),
    ("a memory's", {**model_run(), "input": {"ai_memory": [[{"json": {"action": "loadMemoryVariables"}}]]}}),
    ("not a run", "text"),
])
def test_other_runs_are_not_served(why: str, run: object) -> None:
    assert not servable(run, AGENT), why


def test_no_run_is_served_where_no_agent_waits() -> None:
    assert not servable(model_run(), None)


def test_the_served_runs_end_at_the_first_other_one() -> None:
    runs = [(5, "Calculator", 0, tool_run()), (6, "Model", 1, model_run()), (7, "Memory", 0, {**model_run(), "input": {}}),
            (8, "Calculator", 1, tool_run("c2"))]
    assert [run[0] for run in servable_prefix(runs, AGENT)] == [5, 6]
    assert servable_prefix(runs, None) == []


def test_runs_are_served_in_order_then_none() -> None:
    tool, model = TaskData.model_validate(tool_run()), TaskData.model_validate(model_run())
    ahead = RecordedAhead([("Calculator", 0, tool), ("Model", 1, model)])
    assert ahead and ahead.next_is("Calculator") and not ahead.next_is("Model")
    assert ahead.take("Calculator", 0, {**WHERE, "toolCallId": "c1", "toolName": "Calculator"}) is tool
    assert ahead.take("Model", 1, WHERE) is model
    assert not ahead and ahead.take("Model", 2, WHERE) is None


def test_a_call_that_is_not_the_one_recorded_next_is_an_error_naming_both() -> None:
    ahead = RecordedAhead([("Calculator", 0, TaskData.model_validate(tool_run("c1")))])
    with pytest.raises(NodeOperationError) as raised:
        ahead.take("Calculator", 0, {**WHERE, "toolCallId": "c9"})
    message = raised.value.message
    assert 'node "Calculator" (run 0, node AI Agent, runIndex 0, iteration 2, itemIndex 0, toolCallId c9)' in message
    assert "toolCallId c1" in message and "cannot go on as it went" in message
    assert ahead.next_is("Calculator")  # nothing was taken
