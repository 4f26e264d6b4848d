"""A node's On Error, Continue On Fail and Retry On Fail settings, as n8n 1.123 runs them (the item
shapes are checked against real n8n in tests/parity/: onerror-*, retry-*); here what the parity
corpus cannot show: how often a node runs, the retry notes in the run log, the error output port."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from engine import node_settings
from engine.connection_types import MAIN, PortSpec
from engine.errors import NodeOperationError
from engine.executor import Engine
from engine.hooks import Hooks
from engine.node_type import NodeType
from engine.registry import builtin_registry
from engine.run_log import RunLog
from engine.workflow import parse_workflow
from tests.builders import MANUAL_TRIGGER, link, node

FLAKY = "tests.flaky"


class Flaky(NodeType):
    """Fails its first `fails` calls of a run, then passes its items on."""

    type = FLAKY
    display_name = "Flaky"
    group = "Core"
    calls: ClassVar[list[str]] = []
    fails: ClassVar[int] = 0

    async def execute(self, ctx: Any, response: Any = None) -> list[list[dict[str, Any]]]:
        Flaky.calls.append(ctx.node.name)
        if len(Flaky.calls) <= Flaky.fails:
            raise NodeOperationError(f"try {len(Flaky.calls)} failed", node=ctx.node.name)
        return [ctx.items]


def _engine() -> Engine:
    registry = builtin_registry()
    registry.register(Flaky)
    return Engine(registry)


def _workflow(fails: int, **settings: Any) -> Any:
    Flaky.calls, Flaky.fails = [], fails
    connections: dict[str, Any] = {}
    link(connections, "Start", "Flaky")
    link(connections, "Flaky", "After")
    nodes = [node("Start", MANUAL_TRIGGER), node("Flaky", FLAKY, **settings), node("After", "n8n-nodes-base.noOp")]
    return parse_workflow({"name": "flaky", "nodes": nodes, "connections": connections})


async def test_a_retried_node_runs_again_and_the_run_log_says_each_failed_try() -> None:
    log = RunLog()
    state = await _engine().run(_workflow(2, retryOnFail=True, maxTries=3, waitBetweenTries=1), hooks=Hooks(log))
    assert state.status == "success"
    assert Flaky.calls == ["Flaky"] * 3
    [task] = state.run_data["Flaky"]  # one run, as in n8n's run data
    assert task.execution_status == "success" and task.error is None
    assert task.metadata["notes"] == [
        'Retry On Fail: try 1 of 3 of "Flaky" failed (try 1 failed); trying again in 1 ms',
        'Retry On Fail: try 2 of 3 of "Flaky" failed (try 2 failed); trying again in 1 ms',
    ]
    flaky_line = next(line.text for line in log.lines if line.node == "Flaky")
    assert "try 1 of 3" in flaky_line and "try 2 of 3" in flaky_line
    assert [t.execution_status for t in state.run_data["After"]] == ["success"]


@pytest.mark.parametrize(("max_tries", "runs"), [(1, 2), (3, 3), (4, 4), (10, 5), (None, 3), (0, 3)])
async def test_the_tries_are_n8ns_two_to_five(max_tries: int | None, runs: int) -> None:
    settings: dict[str, Any] = {"retryOnFail": True, "waitBetweenTries": 1}
    if max_tries is not None:
        settings["maxTries"] = max_tries
    state = await _engine().run(_workflow(99, **settings))
    assert state.status == "error" and state.error is not None and state.error.message == f"try {runs} failed"
    assert len(Flaky.calls) == runs
    assert len(state.run_data["Flaky"][0].metadata["notes"]) == runs - 1


def test_the_wait_between_tries_is_n8ns() -> None:
    def retries(**settings: Any) -> tuple[int, int]:
        return node_settings.retries(parse_workflow({"nodes": [node("N", FLAKY, **settings)]}).nodes[0])

    assert retries() == (1, 0)
    assert retries(retryOnFail=False, maxTries=4) == (1, 0)
    assert retries(retryOnFail=True) == (3, 1000)
    assert retries(retryOnFail=True, waitBetweenTries=0) == (3, 1000)  # n8n's `|| 1000`
    assert retries(retryOnFail=True, waitBetweenTries=9000) == (3, 5000)


async def test_without_retry_a_node_runs_once() -> None:
    state = await _engine().run(_workflow(1))
    assert state.status == "error" and Flaky.calls == ["Flaky"]
    assert "notes" not in state.run_data["Flaky"][0].metadata


async def test_a_node_that_continues_records_its_error_and_passes_its_input_on() -> None:
    state = await _engine().run(_workflow(1, onError="continueRegularOutput"))
    assert state.status == "success"
    [task] = state.run_data["Flaky"]
    assert task.execution_status == "error" and task.error is not None and task.error.message == "try 1 failed"
    assert task.data["main"] == [[{"json": {}, "pairedItem": {"item": 0}}]]
    assert state.run_data["After"][0].data["main"][0][0]["json"] == {}


async def test_stop_workflow_overrides_nothing_but_legacy_continue_on_fail_still_continues() -> None:
    assert (await _engine().run(_workflow(1, onError="stopWorkflow"))).status == "error"
    # n8n's engine: `continueOnFail === true` goes on whatever On Error says
    assert (await _engine().run(_workflow(1, continueOnFail=True, onError="stopWorkflow"))).status == "success"


def test_the_error_output_is_a_port_of_its_own() -> None:
    registry = builtin_registry()
    wf = parse_workflow({"nodes": [
        node("Code", "n8n-nodes-base.code", onError="continueErrorOutput"),
        node("Plain", "n8n-nodes-base.code", onError="continueRegularOutput"),
        node("Switch", "n8n-nodes-base.switch", {"rules": {"values": [{"outputKey": "a"}, {"outputKey": "b"}]}},
             onError="continueErrorOutput"),
    ]})
    code, plain, switch = wf.nodes
    assert node_settings.ports_of(registry.get(code.type), code)[1] == (PortSpec(MAIN, "Success"), PortSpec(MAIN, "Error"))
    assert node_settings.ports_of(registry.get(plain.type), plain)[1] == (PortSpec(MAIN),)
    assert [p.label for p in node_settings.ports_of(registry.get(switch.type), switch)[1]] == ["a", "b", "Error"]


def test_items_made_of_an_error_move_to_the_error_output_over_their_input_item() -> None:
    inputs = [[{"json": {"name": "Ada"}}, {"json": {"name": "Alan"}}]]
    result = [[{"json": {"name": "Ada", "ok": True}, "pairedItem": {"item": 0}},
               {"json": {"error": "bad"}, "pairedItem": {"item": 1}},
               {"json": {"error": "bad", "other": 1}, "pairedItem": {"item": 1}},
               {"json": {"error": "unpaired"}}]]
    routed = node_settings.route_errors(result, inputs, 2)
    assert routed[0] == [result[0][0], result[0][2]]  # an item with more than error/message/details stays
    assert routed[1] == [{"json": {"name": "Alan", "error": "bad"}, "pairedItem": {"item": 1}}, {"json": {"error": "unpaired"}}]
    assert node_settings.route_errors([[{"json": {"x": 1}}]], inputs, 2) == [[{"json": {"x": 1}}], []]


async def test_a_tool_with_retry_on_fail_is_tried_again_before_the_agent_reads_its_error() -> None:
    from tests.builders import CALCULATOR, agent_workflow, tool_call
    from nodes.triggers.chat_trigger import chat_item

    wf = agent_workflow([{"toolCalls": [tool_call("Calculator", {"input": "6 *"}, "c1")]}, {"text": "sorry"}],
                        tools=[("Calculator", CALCULATOR, {})])
    wf.node("Calculator").__pydantic_extra__.update(retryOnFail=True, maxTries=2, waitBetweenTries=1)
    log = RunLog()
    state = await _engine().run(wf, items=[chat_item("go", "s")], hooks=Hooks(log))
    assert state.status == "success"
    [task] = state.run_data["Calculator"]
    assert task.error is not None and len(task.metadata["notes"]) == 1
    assert task.metadata["notes"][0].startswith('Retry On Fail: try 1 of 2 of "Calculator" failed (')
    assert "try 1 of 2" in next(line.text for line in log.lines if line.node == "Calculator")
