"""A node with several main inputs waits for all of them, and the wait survives a pause and a
restore from JSON (the parity corpus checks what the Merge node makes of its inputs)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from engine.debugger import Breakpoints
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.workflow import load_workflow
from tests.engine.pausing import run_to_pause

CORPUS = Path(__file__).parents[1] / "parity" / "workflows"


def test_a_merge_waits_across_a_pause_and_a_restore() -> None:
    workflow = load_workflow(CORPUS / "merge-then-set.json")
    engine = Engine(builtin_registry())
    execution = engine.create(workflow)
    state = asyncio.run(run_to_pause(execution, Breakpoints(nodes=["Input B"])))
    assert state.status == "paused"
    assert [e.node for e in state.waiting] == ["Merge"] and state.waiting[0].inputs[1] is None
    snapshot = json.loads(json.dumps(execution.snapshot()))
    finished = asyncio.run(engine.restore(snapshot).run())
    assert finished.status == "success" and not finished.waiting
    merge = finished.run_data["Merge"][0]
    assert [s.previous_node for s in merge.source] == ["Input A", "Input B"]
    assert len(merge.input["main"]) == 2
    assert [i["json"]["from"] for i in finished.run_data["After"][0].data["main"][0]] == [
        "Alan-88", "Alan-90", "Alan again-88", "Alan again-90"]


def test_a_run_with_a_missing_input_starts_when_nothing_else_can_run() -> None:
    workflow = load_workflow(CORPUS / "merge-missing-input.json")
    state = asyncio.run(Engine(builtin_registry()).run(workflow))
    assert state.status == "success"
    assert "Choose" not in state.run_data  # choose branch needs both inputs, as in n8n
    append = state.run_data["Append"][0]
    assert len(append.data["main"][0]) == 4 and append.input["main"][1] == []
