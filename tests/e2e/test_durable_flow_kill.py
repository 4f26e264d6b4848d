"""A process killed while a Merge waits for its other input, or in the middle of a Loop Over Items,
with every boundary only in its journal: the execution resumes from what the journal kept and ends
as the run never killed (the node that was running runs again; nothing before it is lost)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from engine.executor import Engine
from engine.registry import builtin_registry
from engine.store import ExecutionStore
from engine.workflow import parse_workflow
from tests.store_backends import outputs

ROOT = Path(__file__).parents[2]
WORKFLOWS = ROOT / "tests" / "parity" / "workflows"

CHILD = """
import asyncio, json, os, signal, sys
import engine.store.sqlite_store as sqlite_store
sqlite_store.FOLD_EVERY = 10**9      # never fold into the database: every boundary stays in the journal
sqlite_store.FOLD_AFTER_S = 10**9
from engine.executor import Engine
from engine.hooks import NodeAfter
from engine.registry import builtin_registry
from engine.store import ExecutionStore
from engine.workflow import parse_workflow

async def main():
    workflow = parse_workflow(json.loads(open(sys.argv[1], encoding="utf-8").read()))
    node, run_index = sys.argv[2], int(sys.argv[3])
    execution = Engine(builtin_registry(), store=ExecutionStore(sys.argv[4])).create(workflow, mode="cli")
    def on_event(event):
        if isinstance(event, NodeAfter) and event.node == node and event.run_index == run_index:
            print(execution.state.id, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)  # as the node ends, before its run is journaled
    execution.hooks.add(on_event)
    await execution.run()

asyncio.run(main())
"""


@pytest.mark.parametrize(("name", "node", "run_index"), [
    ("merge-append", "Input B", 0),  # the Merges hold Input A's items, waiting for Input B's
    ("loop-over-items-batches", "Body", 1),  # the loop has handed out two batches
    ("loop-over-items-branches", "Mark", 0),
])
async def test_killed_with_its_boundaries_in_the_journal_resumes_to_the_run_never_killed(
        tmp_path: Path, name: str, node: str, run_index: int) -> None:
    path = WORKFLOWS / f"{name}.json"
    workflow = parse_workflow(json.loads(path.read_text(encoding="utf-8")))
    whole_store = ExecutionStore(tmp_path / "whole.sqlite")
    whole = await Engine(builtin_registry(), store=whole_store).run(workflow, mode="cli")
    whole_store.close()
    assert whole.status == "success", whole.error

    db = tmp_path / "killed.sqlite"
    child = subprocess.run([sys.executable, "-c", CHILD, str(path), node, str(run_index), str(db)], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr
    execution_id = child.stdout.strip()

    store = ExecutionStore(db)  # opening it folds the dead process's journal in
    try:
        assert store.load(execution_id).status == "crashed"
        assert len(store.load(execution_id).run_data.get(node, [])) == run_index  # the running node's run is lost
        execution = Engine(builtin_registry(), store=store).resume(execution_id)
        state = await execution.run()
        assert state.status == "success", state.error
        assert outputs(state) == outputs(whole)
        assert outputs(store.load(execution_id)) == outputs(whole)
    finally:
        store.close()
