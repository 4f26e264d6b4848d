"""An Agent's long tool loop killed again and again at moments of its own, each time resumed by a
new process, the resumes killed too: no run made before a kill is made again, and the execution
ends as the run never killed ends."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.store import open_store
from engine.workflow import save_workflow
from tests.builders import agent_workflow, tool_call

ROOT = Path(__file__).parents[2]
ROUNDS = 24
KILLS = 4


def cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "engine.cli", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def stored_runs(target: str) -> tuple[str | None, dict[tuple[str, int], float]]:
    """The newest execution's id and the start time of each run stored for it (nothing yet: None, {})."""
    try:
        store = open_store(target)
    except Exception:  # the first process has not created the store yet
        return None, {}
    try:
        listed = store.list(1)
        if not listed:
            return None, {}
        return listed[0].id, {(node, index): task.start_time for node, index, task in store.runs(listed[0].id)}
    finally:
        store.close()


def kill_after(child: subprocess.Popen[str], target: str, tools_done: int, extra_s: float) -> dict[tuple[str, int], float]:
    """SIGKILL `child` once `tools_done` Calculator runs are stored and `extra_s` more have passed
    (a moment inside a model's stream or a tool's run, or between them); what was stored then."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        _id, runs = stored_runs(target)
        if sum(node == "Calculator" for node, _index in runs) >= tools_done:
            break
        if child.poll() is not None:
            pytest.fail(f"the process ended before it was killed: {child.stdout.read()} {child.stderr.read()}")
        time.sleep(0.02)
    else:
        child.kill()
        pytest.fail(f"no {tools_done} Calculator runs stored within 60 s")
    time.sleep(extra_s)
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    return stored_runs(target)[1]


def test_kills_at_moments_of_their_own_lose_no_run_made_before_them(tmp_path: Path, store_target: str) -> None:
    replies = [{"text": "working on it step by step", "toolCalls": [tool_call("Calculator", {"input": f"{i} * 3"}, f"c{i}")]}
               for i in range(ROUNDS)]
    replies.append({"text": "all done"})
    path = tmp_path / "long-loop.json"
    # each model reply streams 6 tokens 8 ms apart: a kill lands in a stream as often as between runs
    save_workflow(agent_workflow(replies, model_options={"tokenDelayMs": 8}, agent_options={"maxIterations": ROUNDS + 5}), path)
    rng = random.Random(20261208)
    kept: dict[tuple[str, int], float] = {}  # every run stored before some kill, with its start time
    child = cli("run", str(path), "--message", "go")
    tools_done = 0
    for _kill in range(KILLS):
        tools_done += rng.randint(2, ROUNDS // (KILLS + 1))
        stored = kill_after(child, store_target, tools_done, rng.uniform(0.0, 0.06))
        assert all(stored.get(key) == started for key, started in kept.items()), "a run stored before a kill changed"
        kept.update(stored)
        execution_id = stored_runs(store_target)[0]
        assert execution_id is not None
        child = cli("resume", execution_id)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, out + err
    assert "answer: all done" in out

    store = open_store(store_target)
    try:
        final = store.load(execution_id)
    finally:
        store.close()
    assert final.status == "success"
    calculator = final.run_data["Calculator"]
    assert len(calculator) == ROUNDS and len(final.run_data["Model"]) == ROUNDS + 1
    # each tool call answered once, in the order the model asked
    assert [run.data["ai_tool"][0][0]["json"]["response"] for run in calculator] == [str(i * 3) for i in range(ROUNDS)]
    # no run stored before a kill was made again: it still has the start time it had then
    assert {key: final.run_data[key[0]][key[1]].start_time for key in kept} == kept
    assert sum(node == "Calculator" for node, _index in kept) >= tools_done
