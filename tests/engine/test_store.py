"""The execution store gives back exactly what ran, though it writes long runs as deltas."""

from __future__ import annotations

import json
from pathlib import Path

from engine.debugger import Breakpoints
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.store import ExecutionStore, open_store
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, items_agent_workflow, tool_call
from tests.engine.pausing import run_to_pause
from tests.store_backends import sql

ROUNDS = 150


def long_agent():
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} + 1"})]} for i in range(ROUNDS)]
    return agent_workflow(replies + [{"text": "done"}], memory=True, agent_options={"maxIterations": ROUNDS + 1})


def as_json(value) -> str:
    return json.dumps(value, sort_keys=True)


async def test_a_long_run_is_stored_small_and_read_back_exactly(store_target: str) -> None:
    store = open_store(store_target)
    state = await Engine(builtin_registry(), store=store).run(long_agent(), items=[chat_item("go", "s")])
    assert state.status == "success"
    assert_read_back(store, state)
    last_model_input = state.run_data["Model"][-1].to_json()["input"]
    assert len(last_model_input["ai_languageModel"][0][0]["json"]["messages"]) == 2 * ROUNDS + 2
    # the repeated messages were not written again and again
    assert run_bytes(store) < whole_json_bytes(state) / 10


def assert_read_back(store, state) -> None:
    """The stored execution's runs are the runs that ran."""
    loaded = store.load(state.id)
    assert as_json({k: [t.to_json() for t in v] for k, v in loaded.run_data.items()}) == as_json(
        {k: [t.to_json() for t in v] for k, v in state.run_data.items()}
    )


def run_bytes(store) -> int:
    """What the store wrote of an execution's runs: its run rows (and SQLite's batch rows)."""
    written = sum(len(r[0]) for r in sql(store, "SELECT task FROM runs"))
    if isinstance(store, ExecutionStore):
        written += sum(len(r[0]) for r in sql(store, "SELECT runs FROM run_batches"))
    return written


def whole_json_bytes(state) -> int:
    return sum(len(json.dumps(t.to_json())) for runs in state.run_data.values() for t in runs)


async def test_an_agent_with_several_items_writes_each_conversation_as_it_grows(store_target: str) -> None:
    """An Agent runs its items' conversations side by side, its model called for each in turn: a
    model run is written as a delta from the run before it in the same conversation, not from
    the node's run before (another item's), which would write every conversation whole again:
    what is written grows with the rounds, not with their square."""
    items, written = 4, {}
    for rounds in (15, 45):
        store = open_store(store_target)
        state = await Engine(builtin_registry(), store=store).run(items_agent_workflow(items, rounds))
        assert state.status == "success" and len(state.run_data["Model"]) == items * (rounds + 1)
        assert_read_back(store, state)
        written[rounds] = run_bytes(store)
        store.delete(state.id)
        store.close()
    assert written[45] < 3 * 1.25 * written[15]


async def test_the_stack_of_a_paused_run_is_read_back_exactly(store_target: str) -> None:
    store = open_store(store_target)
    execution = Engine(builtin_registry(), store=store).create(long_agent(), items=[chat_item("go", "s")])
    state = await run_to_pause(execution, Breakpoints(after_tool_result=True, from_iteration=100))
    assert state.status == "paused"
    loaded = store.load(state.id, for_resume=True)
    assert as_json([e.to_json() for e in loaded.stack]) == as_json([e.to_json() for e in state.stack])
    steps = loaded.stack[-1].pending.request.metadata["previousRequests"]  # a v3 agent: one list for every item
    assert len(steps) == 99
    # and the stored execution resumes to the same end
    resumed = await Engine(builtin_registry(), store=store).resume(state.id).run()
    assert resumed.status == "success" and resumed.result == [{"json": {"output": "done"}, "pairedItem": {"item": 0}}]
    assert len(store.load(state.id).run_data["Calculator"]) == ROUNDS


def test_a_store_file_of_another_layout_is_refused_and_left_alone(tmp_path: Path) -> None:
    import sqlite3

    import pytest

    from engine.errors import MiniN8nError

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE executions (id TEXT PRIMARY KEY, stack TEXT NOT NULL)")
        db.execute("INSERT INTO executions VALUES ('x', '[]')")
    before = path.read_bytes()
    with pytest.raises(MiniN8nError, match="has layout version 0, and this mini-n8n reads version 3 .and migrates versions 1 and 2. — it is not a layout mini-n8n wrote; move the file away"):
        ExecutionStore(path)
    assert path.read_bytes() == before
    ExecutionStore(tmp_path / "new.sqlite").close()
    ExecutionStore(tmp_path / "new.sqlite").close()  # a file it wrote itself opens again


def test_a_workflow_is_packed_as_its_dump_would_be() -> None:
    """The store packs a workflow without dumping it to a dict first: the bytes (its hash, which
    shares one stored copy between runs and builds) are those of packing the dict."""
    from engine.store.codec import pack, pack_workflow, unpack
    from engine.workflow import parse_workflow, workflow_to_data

    workflow = agent_workflow([{"text": "é ✓ 😀"}])
    workflow.settings.update({"float": 0.1, "big": 1e300, "nan": float("nan"), "negative": -0.0, "nested": {"a": [1, None, True]}})
    workflow.nodes[0].parameters["note"] = "ünïcode\n\t\"quoted\""
    assert pack_workflow(workflow) == pack(workflow_to_data(workflow))
    odd = parse_workflow({"name": "lone \udc80 surrogate", "nodes": [], "connections": {}}, "odd")
    data, crc = pack_workflow(odd)
    assert unpack(data, crc, "odd") == workflow_to_data(odd)


async def test_a_workflow_edited_in_place_between_runs_is_stored_as_edited(tmp_path: Path) -> None:
    """The editor runs the workflow object it edits: each run stores the workflow as it is then."""
    from engine.store import Retention
    from engine.workflow import workflow_to_data

    store = ExecutionStore(tmp_path / "x.sqlite", retention=Retention())
    engine = Engine(builtin_registry(), store=store)
    workflow = agent_workflow([{"text": "done"}])
    first = await engine.run(workflow, items=[chat_item("go", "s")])
    workflow.nodes[0].parameters["note"] = "edited"
    second = await engine.run(workflow, items=[chat_item("go", "s")])
    third = await engine.run(workflow, items=[chat_item("go", "s")])
    stored = [workflow_to_data(store.load(state.id).workflow) for state in (first, second, third)]
    assert "note" not in stored[0]["nodes"][0]["parameters"]
    assert stored[1] == stored[2] == workflow_to_data(workflow)
    assert store.connection.execute("SELECT COUNT(*) FROM workflows").fetchone()[0] == 2
    store.close()


async def test_conversations_past_those_kept_are_still_read_back_exactly(store_target: str, monkeypatch) -> None:
    """A writer keeps the latest run of a bounded number of conversations; a run whose
    conversation was dropped is written from its node's latest run instead, and reads back the same."""
    monkeypatch.setattr("engine.store.run_records.CONVERSATIONS_KEPT", 2)
    store = open_store(store_target)
    state = await Engine(builtin_registry(), store=store).run(items_agent_workflow(4, 6))
    assert state.status == "success"
    assert_read_back(store, state)
