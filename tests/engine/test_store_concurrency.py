"""Many processes on one store: writers queue for the lock (immediate transactions, a busy
timeout) instead of failing with "database is locked", and nothing is left unresumable (on
SQLite and on PostgreSQL)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engine.store import open_store
from engine.workflow import save_workflow
from tests.builders import agent_workflow, tool_call

ROOT = Path(__file__).parents[2]
RUNS = 16


def test_16_concurrent_runs_on_one_store_all_complete(tmp_path: Path, store_target: str) -> None:
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} + 1"})]} for i in range(20)] + [{"text": "done"}]
    path = tmp_path / "wf.json"
    save_workflow(agent_workflow(replies, memory=True, agent_options={"maxIterations": 30}), path)
    children = [
        subprocess.Popen([sys.executable, "-m", "engine.cli", "run", str(path), "--message", "go", "--session", f"s{i % 4}", "-q"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(RUNS)
    ]
    outcomes = [(child.wait(300), *child.communicate()) for child in children]
    for code, out, err in outcomes:
        assert code == 0 and "answer: done" in out, out + err
        assert "locked" not in err and "Traceback" not in err, err
    store = open_store(store_target)
    listed = store.list()
    assert len(listed) == RUNS
    assert {row.status for row in listed} == {"success"}
    for row in listed:
        assert len(store.load(row.id).run_data["Calculator"]) == 20
