"""Inside an Agent's tool loop the store writes the boundary that first holds the Agent waiting on
a request and leaves out the next ones while every run of the loop can be served again on resume
(engine.store.loop_boundaries, engine.resume_runs)."""

from __future__ import annotations

from typing import Any

import engine.store.sqlite_store as sqlite_store
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.run_data import ExecutionState
from engine.store import open_store
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call
from tests.store_backends import is_pg

ROUNDS = 5


def replies(failing_round: int | None = None) -> list[dict[str, Any]]:
    """ROUNDS tool rounds, then an answer; in `failing_round` the Calculator is given what it cannot compute."""
    return [{"toolCalls": [tool_call("Calculator", {"input": "2 +" if i == failing_round else f"{i} * 2"}, f"c{i}")]}
            for i in range(ROUNDS)] + [{"text": "done"}]


async def boundaries_written(target: str, monkeypatch, script: list[dict[str, Any]]) -> tuple[ExecutionState, list[list[tuple[str, bool]]]]:
    """The run, and the stack of each boundary it wrote: (node, waits on a request) per entry."""
    written: list[list[tuple[str, bool]]] = []

    def seen(state: ExecutionState) -> None:
        written.append([(entry.node, entry.pending is not None) for entry in state.stack])

    if is_pg(target):
        from engine.store.postgres_store import PostgresExecutionStore

        row = PostgresExecutionStore._boundary_row
        monkeypatch.setattr(PostgresExecutionStore, "_boundary_row", lambda store, state, writer: seen(state) or row(store, state, writer))
    else:
        boundary_row = sqlite_store.boundary_row
        monkeypatch.setattr(sqlite_store, "boundary_row", lambda state, writer: seen(state) or boundary_row(state, writer))
    store = open_store(target)
    state = await Engine(builtin_registry(), store=store).run(agent_workflow(script, agent_options={"maxIterations": 10}),
                                                              items=[chat_item("go", "s")])
    store.close()
    return state, written


def agent_waiting(stacks: list[list[tuple[str, bool]]]) -> int:
    return sum(("AI Agent", True) in stack for stack in stacks)


async def test_only_the_first_boundary_of_the_loop_is_written(store_target: str, monkeypatch) -> None:
    state, written = await boundaries_written(store_target, monkeypatch, replies())
    assert state.status == "success" and len(state.run_data["Calculator"]) == ROUNDS
    assert agent_waiting(written) == 1  # of the 2 x ROUNDS boundaries the Agent waits at
    assert written[-1] == []  # the end


async def test_a_run_that_cannot_be_served_again_writes_the_next_boundary(store_target: str, monkeypatch) -> None:
    """A failed tool run is not served again on resume (engine.resume_runs.servable): the boundary
    after it is written, and the loop goes on from there as from its first."""
    state, written = await boundaries_written(store_target, monkeypatch, replies(failing_round=2))
    assert state.status == "success"
    assert state.run_data["Calculator"][2].error is not None
    assert agent_waiting(written) == 2
