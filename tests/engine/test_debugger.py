"""Pause points inside the agent loop, stepping, and edit-and-continue."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from engine.debugger import Breakpoints, Debugger
from engine.executor import Engine, Execution
from engine.hooks import ExecutionPaused, Hooks
from engine.run_data import ExecutionState
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call

THREE_ITERATIONS = [
    {"toolCalls": [tool_call("Calculator", {"input": "6 * 7"}, "c1")]},
    {"toolCalls": [tool_call("Calculator", {"input": "42 + 1"}, "c2")]},
    {"text": "The answer is 43."},
]


async def drive(
    execution: Execution, decide: Callable[[dict[str, Any]], tuple[str, dict[str, Any] | None]]
) -> tuple[ExecutionState, list[dict[str, Any]]]:
    """Run the execution; at each pause call `decide(point)` -> ("step"|"continue", edit)."""
    paused: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    execution.hooks.add(lambda e: paused.put_nowait(e.where) if isinstance(e, ExecutionPaused) else None)
    task = asyncio.create_task(execution.run())
    points: list[dict[str, Any]] = []
    while True:
        waiter = asyncio.create_task(paused.get())
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if waiter in done:
            point = waiter.result()
            points.append(point)
            assert execution.state.status == "paused"
            how, edit = decide(point)
            (execution.debugger.step if how == "step" else execution.debugger.continue_)(edit)
            continue
        waiter.cancel()
        return task.result(), points


def short(point: dict[str, Any]) -> str:
    return f"{point['kind']}:{point['node']}" + (f"@{point['iteration']}" if "iteration" in point else "")


async def test_stepping_visits_every_pause_point_in_order(engine: Engine) -> None:
    execution = engine.create(agent_workflow(THREE_ITERATIONS), items=[chat_item("go", "s")])
    execution.debugger = Debugger(stepping=True)
    state, points = await drive(execution, lambda p: ("step", None))
    assert state.status == "success"
    assert [short(p) for p in points] == [
        "node:Chat", "node:AI Agent",
        "before_model:Model@1", "after_model:Model@1", "before_tool:Calculator@1", "tool_result:Calculator@1",
        "before_model:Model@2", "after_model:Model@2", "before_tool:Calculator@2", "tool_result:Calculator@2",
        "before_model:Model@3", "after_model:Model@3",
    ]
    # what is pending is shown at each point: messages, reply, arguments, observation
    assert [m["role"] for m in points[6]["payload"]["messages"]] == ["system", "user", "assistant", "tool"]
    assert points[3]["payload"]["reply"]["toolCalls"][0]["args"] == {"input": "6 * 7"}
    assert points[4]["payload"] == {"args": {"input": "6 * 7"}}
    assert points[5]["payload"] == {"observation": "42"}
    assert points[4]["toolCallId"] == "c1" and points[4]["agent"] == "AI Agent"


async def test_breakpoints_stop_only_where_set(engine: Engine) -> None:
    execution = engine.create(agent_workflow(THREE_ITERATIONS), items=[chat_item("go", "s")])
    execution.debugger = Debugger(Breakpoints(before_tool=True, from_iteration=2))
    state, points = await drive(execution, lambda p: ("continue", None))
    assert state.status == "success"
    assert [short(p) for p in points] == ["before_tool:Calculator@2"]

    execution = engine.create(agent_workflow(THREE_ITERATIONS), items=[chat_item("go", "s")])
    execution.debugger = Debugger(Breakpoints(nodes=["AI Agent", "Model"]))
    state, points = await drive(execution, lambda p: ("continue", None))
    assert [short(p) for p in points] == ["node:AI Agent", "before_model:Model@1", "before_model:Model@2", "before_model:Model@3"]


async def test_tool_error_breakpoint(engine: Engine) -> None:
    replies = [{"toolCalls": [tool_call("Calculator", {"input": "1/0"})]}, {"text": "no"}]
    execution = engine.create(agent_workflow(replies), items=[chat_item("go", "s")])
    execution.debugger = Debugger(Breakpoints(on_tool_error=True))
    state, points = await drive(execution, lambda p: ("continue", None))
    assert [short(p) for p in points] == ["tool_error:Calculator@1"]
    assert points[0]["payload"] == {"observation": "Error: division by zero"}


async def test_edited_tool_arguments_change_the_observation(engine: Engine) -> None:
    execution = engine.create(agent_workflow(THREE_ITERATIONS), items=[chat_item("go", "s")])
    execution.debugger = Debugger(Breakpoints(before_tool=True, tools=["Calculator"]))

    def edit_first(point: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        if point["toolCallId"] == "c1":
            return "continue", {"args": {"input": "6 * 8"}}
        return "continue", None

    state, _ = await drive(execution, edit_first)
    first = state.run_data["Calculator"][0]
    assert first.input["ai_tool"][0][0]["json"] == {"input": "6 * 8"}
    assert first.data["ai_tool"][0][0]["json"] == {"response": "48"}
    assert first.metadata["edits"] == [{"what": "toolInput", "original": {"input": "6 * 7"}, "new": {"input": "6 * 8"}}]
    # the model saw the edited call and its result
    messages = state.run_data["Model"][1].input["ai_languageModel"][0][0]["json"]["messages"]
    assert messages[2]["toolCalls"][0]["args"] == {"input": "6 * 8", "id": "c1"}
    assert messages[3]["content"] == '[{"response":"48"}]'


async def test_edited_observation_reaches_the_model(engine: Engine) -> None:
    execution = engine.create(agent_workflow(THREE_ITERATIONS), items=[chat_item("go", "s")])
    execution.debugger = Debugger(Breakpoints(after_tool_result=True))
    edits = iter([{"observation": "forty-two"}, None])
    state, points = await drive(execution, lambda p: ("continue", next(edits)))
    assert [p["kind"] for p in points] == ["tool_result", "tool_result"]
    messages = state.run_data["Model"][1].input["ai_languageModel"][0][0]["json"]["messages"]
    assert messages[3] == {"role": "tool", "content": '[{"response":"forty-two"}]', "toolCallId": "c1"}
    calc = state.run_data["Calculator"][0]
    assert calc.data["ai_tool"][0][0]["json"] == {"response": "42"}  # what the tool really said
    assert calc.metadata["edits"] == [{"what": "observation", "original": "42", "new": "forty-two"}]


async def test_edited_model_reply_is_what_the_agent_acts_on(engine: Engine) -> None:
    execution = engine.create(agent_workflow(THREE_ITERATIONS), items=[chat_item("go", "s")])
    execution.debugger = Debugger(Breakpoints(after_model=True))
    replaced = {"content": "", "toolCalls": [{"id": "mine", "name": "Calculator", "args": {"input": "2 ** 5"}}]}
    edits = iter([{"reply": replaced}, {"reply": {"content": "stop here", "toolCalls": []}}])
    state, points = await drive(execution, lambda p: ("continue", next(edits)))
    assert state.status == "success"
    assert state.result == [{"json": {"output": "stop here"}, "pairedItem": {"item": 0}}]
    assert state.run_data["Calculator"][0].data["ai_tool"][0][0]["json"] == {"response": "32"}
    model_runs = state.run_data["Model"]
    assert len(model_runs) == 2
    assert model_runs[0].metadata["edits"][0]["original"]["toolCalls"][0]["args"] == {"input": "6 * 7"}
    assert model_runs[0].data["ai_languageModel"][0][0]["json"]["toolCalls"][0]["id"] == "mine"


async def test_stop_while_paused_cancels_the_run(engine: Engine) -> None:
    execution = engine.create(agent_workflow(THREE_ITERATIONS), items=[chat_item("go", "s")])
    execution.debugger = Debugger(Breakpoints(before_model=True))
    paused = asyncio.Event()
    execution.hooks.add(lambda e: paused.set() if isinstance(e, ExecutionPaused) else None)
    task = asyncio.create_task(execution.run())
    await asyncio.wait_for(paused.wait(), 5)
    execution.signal.abort()
    state = await asyncio.wait_for(task, 5)
    assert state.status == "cancelled"
    assert state.error is not None and state.error.message == "Execution was cancelled"
