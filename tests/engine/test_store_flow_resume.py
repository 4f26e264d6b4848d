"""A run of flow nodes stopped before any node and resumed from the store ends as the run that was
never stopped: what a Merge holds of the inputs that came (its waiting runs, an entry with several
inputs) and what Loop Over Items keeps between its runs (the node context) are in every boundary."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine.debugger import Breakpoints, Debugger
from engine.executor import Engine
from engine.hooks import ExecutionPaused
from engine.registry import builtin_registry
from engine.store import open_store
from engine.workflow import parse_workflow
from tests.store_backends import outputs

WORKFLOWS = Path(__file__).parents[1] / "parity" / "workflows"


@pytest.mark.parametrize("stop_at", ["every node", "every third node"])
@pytest.mark.parametrize("name", ["merge-append", "merge-then-set", "merge-missing-input", "merge-by-position",
                                  "loop-over-items-batches", "loop-over-items-branches"])
async def test_stopped_before_nodes_and_resumed_from_the_store_ends_as_the_run_never_stopped(
        store_target: str, name: str, stop_at: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped before every node, or (the boundaries between folded in groups of two, each
    group's row a delta from the group's before) before every third."""
    if stop_at == "every third node":
        monkeypatch.setattr("engine.store.sqlite_store.FOLD_EVERY", 2)
    workflow = parse_workflow(json.loads((WORKFLOWS / f"{name}.json").read_text(encoding="utf-8")))
    store = open_store(store_target)
    try:
        whole = await Engine(builtin_registry(), store=store).run(workflow, mode="cli")
        assert whole.status == "success", whole.error

        names = [node.name for node in workflow.nodes]
        every_node = Breakpoints(nodes=names if stop_at == "every node" else names[::3])
        execution = Engine(builtin_registry(), store=store).create(workflow, mode="cli")
        stops = 0
        while True:
            execution.debugger = Debugger(every_node)
            loop = asyncio.get_running_loop()
            execution.hooks.add(lambda e, x=execution: loop.call_soon(x.detach) if isinstance(e, ExecutionPaused) else None)
            state = await execution.run()
            if state.status != "paused":
                break
            stops += 1
            assert stops < 200
            # nothing of this execution carries on but what the store holds
            execution_id = state.id
            del execution, state
            execution = Engine(builtin_registry(), store=store).resume(execution_id)
            execution.debugger = Debugger(Breakpoints())  # the pause it stopped at is passed at once

        assert stops >= (len(names) // 2 if stop_at == "every node" else 1)
        assert state.status == "success", state.error
        assert outputs(state) == outputs(whole)
        assert outputs(store.load(state.id)) == outputs(whole)
    finally:
        store.close()
