"""The run-state model: whatever order of pauses, continues, steps and resumes a run goes
through, it ends showing what an uninterrupted run shows; Stop never turns a node that
finished red; a stored execution opened later reads as it was shown live."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest

from engine import runs
from engine.debugger import Breakpoints, Debugger
from engine.executor import Engine, Execution
from engine.hooks import ExecutionPaused, Hooks
from engine.run_state import CANCELLED_NOTE, STOPPED_REPLY, NodeState, RunState
from engine.runs import RunOutcome
from tests.builders import agent_workflow, tool_call

THREE_ITERATIONS = [
    {"toolCalls": [tool_call("Calculator", {"input": "6 * 7"}, "c1")]},
    {"toolCalls": [tool_call("Calculator", {"input": "42 + 1"}, "c2")]},
    {"text": "The answer is 43."},
]
PAUSE_KINDS: dict[str, Breakpoints] = {
    "node": Breakpoints(nodes=["AI Agent"]),
    "before_model": Breakpoints(before_model=True),
    "after_model": Breakpoints(after_model=True),
    "before_tool": Breakpoints(before_tool=True),
    "tool_result": Breakpoints(after_tool_result=True),
    "calculator": Breakpoints(nodes=["Calculator"]),
}
FINISHED_NODES = {
    "Chat": NodeState("success", 1), "AI Agent": NodeState("success", 1), "Model": NodeState("success", 3),
    "Calculator": NodeState("success", 2),
}


@pytest.fixture
def stored_engine() -> Engine:
    return runs.open_engine()


def picture(run: RunState) -> dict[str, Any]:
    """What the editor shows of a run, without wall-clock figures."""
    return {
        "status": run.status,
        "pause": run.pause,
        "nodes": run.nodes,
        "chat": [(t.role, t.text, t.streaming, t.empty) for t in run.chat],
        "steps": [{k: v for k, v in r.to_json().items() if k not in ("toolMs", "modelMs")} for r in run.steps.rows],
        "log": [(line.node, line.status, line.depth) for line in run.lines],
    }


async def play(engine: Engine, run: RunState, execution: Execution,
               at_pause: Callable[[Execution, dict[str, Any], int], None]) -> RunOutcome:
    """Run to the end; at each pause (after the state shows it) call `at_pause(execution, where, n)`."""
    paused: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    execution.hooks.add(run.apply)
    execution.hooks.add(lambda e: paused.put_nowait(dict(e.where)) if isinstance(e, ExecutionPaused) else None)
    task = asyncio.create_task(execution.run())
    count = 0
    while True:
        waiter = asyncio.create_task(paused.get())
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done:
            waiter.cancel()
            break
        where = waiter.result()
        assert run.status == "paused" and run.pause == where
        assert run.node(where["node"]).status == "paused"
        count += 1
        at_pause(execution, where, count)
    state = await task
    outcome = RunOutcome.of(state, run.message)
    run.finish(outcome)
    return outcome


def new_run(engine: Engine, breakpoints: Breakpoints | None = None, stepping: bool = False) -> tuple[RunState, Execution]:
    execution = runs.start(engine, agent_workflow(THREE_ITERATIONS), message="go", session_id="s", hooks=Hooks())
    if breakpoints is not None or stepping:
        execution.debugger = Debugger(breakpoints, stepping=stepping)
    state = execution.state
    return RunState(state.id, workflow_name=state.workflow.name, message="go", started_at=state.started_at), execution


async def uninterrupted(engine: Engine) -> dict[str, Any]:
    run, execution = new_run(engine)
    outcome = await play(engine, run, execution, lambda *_: None)
    assert outcome.status == "success"
    return picture(run)


async def test_an_uninterrupted_run_ends_with_every_node_done(stored_engine: Engine) -> None:
    shown = await uninterrupted(stored_engine)
    assert shown["nodes"] == FINISHED_NODES
    assert shown["chat"] == [("user", "go", False, False), ("assistant", "The answer is 43.", False, False)]
    assert [(s["tool"], s["status"], s["observation"]) for s in shown["steps"]] == [
        ("Calculator", "ok", "42"), ("Calculator", "ok", "43"), ("final answer", "ok", "The answer is 43.")]
    assert shown["status"] == "success" and shown["pause"] is None


@pytest.mark.parametrize("kind", sorted(PAUSE_KINDS))
@pytest.mark.parametrize("how", ["continue", "step", "alternate"])
async def test_pausing_and_going_on_ends_as_an_uninterrupted_run(stored_engine: Engine, kind: str, how: str) -> None:
    expected = await uninterrupted(stored_engine)
    run, execution = new_run(stored_engine, PAUSE_KINDS[kind])

    def go_on(execution: Execution, _where: dict[str, Any], n: int) -> None:
        step = how == "step" or (how == "alternate" and n % 2 == 0)
        (execution.debugger.step if step else execution.debugger.continue_)(None)

    await play(stored_engine, run, execution, go_on)
    assert picture(run) == expected


async def test_stepping_through_every_pause_point_ends_as_an_uninterrupted_run(stored_engine: Engine) -> None:
    expected = await uninterrupted(stored_engine)
    run, execution = new_run(stored_engine, stepping=True)
    seen: list[str] = []

    def step(execution: Execution, where: dict[str, Any], _n: int) -> None:
        seen.append(where["kind"])
        if where["kind"] == "tool_result":  # the tool finished: it shows paused, and keeps its run
            assert run.node(where["node"]).runs >= 1
        execution.debugger.step(None)

    await play(stored_engine, run, execution, step)
    assert len(seen) == 12 and picture(run) == expected


@pytest.mark.parametrize("kind", sorted(PAUSE_KINDS))
async def test_stop_at_a_pause_turns_only_unfinished_runs_red(stored_engine: Engine, kind: str) -> None:
    run, execution = new_run(stored_engine, PAUSE_KINDS[kind])
    before: dict[str, NodeState] = {}

    def stop(execution: Execution, where: dict[str, Any], n: int) -> None:
        if n == 1:
            before.update(run.nodes)
            execution.signal.abort()

    outcome = await play(stored_engine, run, execution, stop)
    assert outcome.status == "cancelled"
    nodes = run.nodes
    assert not [n for n, s in nodes.items() if s.status in ("running", "paused")]
    for name, state in before.items():
        if state.status in ("success", "paused") and state.runs and name != "AI Agent":
            assert nodes[name] == NodeState("success", state.runs), name  # finished before the Stop: still done
    if before.get("AI Agent", NodeState()).status == "running":  # stopped inside it
        assert nodes["AI Agent"] == NodeState("error", 0, CANCELLED_NOTE)
    else:  # stopped before it ran: it never did
        assert run.node("AI Agent") == NodeState()
    assert run.chat[-1].role == "error" and run.chat[-1].text == STOPPED_REPLY
    assert all(row.status != "pending" for row in run.steps.rows)


@pytest.mark.parametrize("kind", sorted(PAUSE_KINDS))
async def test_a_run_left_paused_and_resumed_later_ends_as_an_uninterrupted_run(stored_engine: Engine, kind: str) -> None:
    expected = await uninterrupted(stored_engine)
    run, execution = new_run(stored_engine, PAUSE_KINDS[kind])
    outcome = await play(stored_engine, run, execution, lambda execution, _w, _n: execution.detach())
    assert outcome.status == "paused" and run.node(run.pause["node"]).status == "paused"
    execution_id = execution.state.id

    stored = stored_engine.store.load(execution_id)
    opened = RunState.of_stored(stored, stored_engine.store.events(execution_id))
    assert picture(opened)["nodes"] == picture(run)["nodes"]  # opened later, it reads as it was shown
    assert opened.chat[0].text == "go" and opened.pause["node"] == run.pause["node"]

    while True:  # resume, pausing again at the next point of the same kind, until it ends
        resumed = runs.resume(stored_engine, execution_id, hooks=Hooks())
        resumed.debugger = Debugger(PAUSE_KINDS[kind])
        later = RunState.of_stored(resumed.state, stored_engine.store.events(execution_id))
        outcome = await play(stored_engine, later, resumed, lambda execution, _w, _n: execution.detach())
        if outcome.status != "paused":
            break
    assert outcome.status == "success"
    assert picture(later) == expected


async def test_a_stored_execution_reads_as_the_live_run_did(stored_engine: Engine) -> None:
    expected = await uninterrupted(stored_engine)
    [summary] = stored_engine.store.list()[:1]
    stored = stored_engine.store.load(summary.id)
    opened = picture(RunState.of_stored(stored, stored_engine.store.events(summary.id)))
    assert opened == expected


async def test_a_failed_run_names_its_error_in_the_chat_and_on_the_node(stored_engine: Engine) -> None:
    workflow = agent_workflow([{"error": "the model is down"}], tools=[])
    execution = runs.start(stored_engine, workflow, message="hi", session_id="s", hooks=Hooks())
    run = RunState(execution.state.id, message="hi")
    outcome = await play(stored_engine, run, execution, lambda *_: None)
    assert outcome.status == "error"
    assert run.node("Model").status == "error" and "the model is down" in (run.node("Model").error or "")
    assert run.chat[-1].role == "error" and "the model is down" in run.chat[-1].text


async def test_an_empty_answer_is_an_empty_reply_not_a_missing_one(stored_engine: Engine) -> None:
    execution = runs.start(stored_engine, agent_workflow([{"text": ""}], tools=[]), message="hi", hooks=Hooks())
    run = RunState(execution.state.id, message="hi")
    await play(stored_engine, run, execution, lambda *_: None)
    assert [(t.role, t.text, t.empty) for t in run.chat] == [("user", "hi", False), ("assistant", "", True)]


async def test_a_pinned_node_reads_pinned_not_run(stored_engine: Engine) -> None:
    workflow = agent_workflow([{"text": "ok"}], tools=[], trigger="manual",
                              agent_params={"promptType": "define", "text": "go"})
    workflow.pinData["Start"] = [{"json": {"n": 1}}]
    execution = runs.start(stored_engine, workflow, hooks=Hooks())
    run = RunState(execution.state.id)
    outcome = await play(stored_engine, run, execution, lambda *_: None)
    assert outcome.status == "success"
    assert run.node("Start") == NodeState("pinned", 1) and run.node("AI Agent") == NodeState("success", 1)
    assert run.chat == []  # a manual run does not talk in the chat
