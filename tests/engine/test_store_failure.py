"""The store failing to write what an execution did stops the execution with the store's error: a
run left out of the stored execution would make the stored one a different execution, shown as
if it had happened (and a resumed one would run from a state that never was). The store hears
the execution directly (Execution.on_record), not as a hook listener, whose failure is only logged."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from engine.errors import StoreFailed
from engine.executor import Engine
from engine.hooks import Hooks, NodeAfter, StoredEvent, WorkflowAfter
from engine.node_type import NodeType
from engine.registry import builtin_registry
from engine.store import open_store
from engine.workflow import parse_workflow, workflow_to_data
from nodes.triggers.chat_trigger import chat_item
from tests.builders import MANUAL_TRIGGER, agent_workflow, link, node, tool_call

UNSTORABLE = "tests.unstorable"


class Unstorable(NodeType):
    """Outputs an item holding bytes, which no JSON writer writes (its run cannot be stored), while
    `broken`; then an item of plain JSON."""

    type = UNSTORABLE
    display_name = "Unstorable"
    group = "Core"
    broken: ClassVar[bool] = True

    async def execute(self, ctx: Any, response: Any = None) -> list[list[dict[str, Any]]]:
        return [[{"json": {"raw": b"\x00\x01" if Unstorable.broken else "fixed"}}]]


def _unstorable_workflow(**settings: Any) -> Any:
    connections: dict[str, Any] = {}
    link(connections, "Start", "Unstorable")
    link(connections, "Unstorable", "After")
    nodes = [node("Start", MANUAL_TRIGGER), node("Unstorable", UNSTORABLE, **settings), node("After", "n8n-nodes-base.noOp")]
    return parse_workflow({"name": "unstorable", "nodes": nodes, "connections": connections})


async def test_a_run_the_store_cannot_write_stops_the_execution_with_the_stores_error(store_target: str) -> None:
    registry = builtin_registry()
    registry.register(Unstorable)
    Unstorable.broken = True
    store = open_store(store_target)
    heard: list[str] = []
    hooks = Hooks(lambda event: heard.append(event.node) if isinstance(event, NodeAfter) else None)
    execution = Engine(registry, store=store).create(_unstorable_workflow(onError="continueRegularOutput"), hooks=hooks)
    with pytest.raises(StoreFailed, match=f'the execution store failed to write the run of node "Unstorable" of execution'
                                          f' {execution.state.id}: TypeError: bytes is not JSON'):
        await execution.run()
    assert "After" not in execution.state.run_data  # nothing ran after it, On Error notwithstanding
    assert heard == ["Start"]  # the listeners hear of a run once the store has it
    # the store could still write the rest: the execution is stored as crashed there, with the store's error
    stored = store.load(execution.state.id)
    assert stored.status == "crashed" == execution.state.status
    assert stored.error is not None and stored.error.message.startswith("the execution store failed to write the run of node")
    assert stored.error.node == "Unstorable"
    assert list(stored.run_data) == ["Start"]
    assert store.list(5)[0].status == "crashed"
    # its lease is given up: once the cause is gone it resumes where it stopped (here, in a second store)
    Unstorable.broken = False
    other = open_store(store_target)
    resumed = await Engine(registry, store=other).resume(execution.state.id).run()
    assert resumed.status == "success" and resumed.result == [{"json": {"raw": "fixed"}, "pairedItem": {"item": 0}}]
    again = other.load(execution.state.id)
    assert [t.data["main"][0][0]["json"] for t in again.run_data["Unstorable"]] == [{"raw": "fixed"}]
    assert list(again.run_data) == ["Start", "Unstorable", "After"]
    other.close()
    store.close()


async def test_a_sub_node_run_the_store_cannot_write_is_not_read_as_its_parents_error() -> None:
    """A model run is recorded inside its Agent's run: the store's failure there must not become
    the Agent's error (which On Error could continue past, and which the run would store)."""
    replies = [{"toolCalls": [tool_call("Calculator", {"input": "1 + 1"})]}, {"text": "done"}]
    data = workflow_to_data(agent_workflow(replies))
    next(n for n in data["nodes"] if n["name"] == "AI Agent")["onError"] = "continueRegularOutput"
    workflow = parse_workflow(data)
    told: list[str] = []

    def record(event: StoredEvent) -> None:
        told.append(event.node if isinstance(event, NodeAfter) else type(event).__name__)
        if told.count("Model") == 2 and told[-1] == "Model":
            raise OSError(28, "No space left on device")

    ends: list[WorkflowAfter] = []
    execution = Engine(builtin_registry()).create(workflow, items=[chat_item("go", "s")], hooks=Hooks(ends.append))
    execution.on_record = record
    with pytest.raises(StoreFailed, match=f'failed to write the run of node "Model" of execution {execution.state.id}:'
                                          " OSError: .*No space left on device"):
        await execution.run()
    assert told == ["Chat", "Model", "Calculator", "Model"]
    assert "AI Agent" not in execution.state.run_data  # the Agent's run did not end, as an error or otherwise
    state = execution.state
    assert state.status == "crashed" and state.error is not None and state.error.node == "AI Agent"
    assert "No space left on device" in state.error.message
    assert [e for e in ends if isinstance(e, WorkflowAfter)] == [WorkflowAfter(state.id, "crashed", state.error)]


async def test_a_store_that_cannot_keep_the_end_either_leaves_the_first_error_raised() -> None:
    def record(event: StoredEvent) -> None:
        raise OSError(5, "Input/output error")

    registry = builtin_registry()
    registry.register(Unstorable)
    execution = Engine(registry).create(_unstorable_workflow())
    execution.on_record = record
    with pytest.raises(StoreFailed, match='failed to write the run of node "Start"'):
        await execution.run()
    assert execution.state.status == "crashed"


async def test_an_end_the_store_fails_after_keeping_it_is_raised_and_heard_once() -> None:
    """The store failing at the end after its last checkpoint (which stored how the run ended):
    the state stays as the run ended, the store's error is raised, and the hooks hear the end once."""
    told: list[str] = []

    def record(event: StoredEvent) -> None:
        told.append(type(event).__name__)
        if isinstance(event, WorkflowAfter):
            raise OSError(5, "Input/output error")

    ends: list[WorkflowAfter] = []
    execution = Engine(builtin_registry()).create(agent_workflow([{"text": "done"}]), items=[chat_item("go", "s")],
                                                  hooks=Hooks(lambda e: ends.append(e) if isinstance(e, WorkflowAfter) else None))
    execution.on_record = record
    with pytest.raises(StoreFailed, match=f"failed to write the end of execution {execution.state.id}: OSError: .*Input/output error"):
        await execution.run()
    state = execution.state
    assert state.status == "success" and state.error is None
    assert told == ["NodeAfter", "NodeAfter", "NodeAfter", "WorkflowAfter"]
    assert ends == [WorkflowAfter(state.id, "success", None)]


async def test_the_cli_says_how_to_go_on_after_a_store_failure_in_a_run() -> None:
    """`mini-n8n run` or `resume` stopped by the store: its error says the execution is kept and how
    to continue it (it is stored crashed there, or found so once the process has ended)."""
    from engine.cli import drive
    from engine.terminal import Output

    def record(event: StoredEvent) -> None:
        if isinstance(event, NodeAfter) and event.node == "Model":
            raise OSError(28, "No space left on device")

    execution = Engine(builtin_registry()).create(agent_workflow([{"text": "done"}]), items=[chat_item("go", "s")])
    execution.on_record = record
    eid = execution.state.id
    with pytest.raises(StoreFailed) as raised:
        await drive(execution, True, Output(), lambda: None)
    assert str(raised.value).splitlines() == [
        f'the execution store failed to write the run of node "Model" of execution {eid}: OSError: [Errno 28] No space left on device',
        f"  execution {eid} is kept where it stopped: `mini-n8n resume {eid}` continues it once that is mended",
    ]
