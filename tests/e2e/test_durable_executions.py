"""Durable executions: paused or killed runs resume in another process; re-run and replay."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.debugger import Breakpoints, Debugger
from engine.executor import Engine
from engine.hooks import ExecutionPaused
from engine.registry import builtin_registry
from engine.replay import ReplaySource
from engine.services import Services
from engine.store import ExecutionBusy, ExecutionStore, SqliteMemoryStore, open_memory, open_store
from engine.store.journal import read_start
from engine.store.sqlite_rows import stored_runs
from engine.workflow import save_workflow
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call

ROOT = Path(__file__).parents[2]
CODE_TOOL = "@n8n/n8n-nodes-langchain.toolCode"
REPLIES = [
    {"toolCalls": [tool_call("Calculator", {"input": "17 * 25"}, "c1")]},
    {"toolCalls": [tool_call("Calculator", {"input": "425 + 75"}, "c2")]},
    {"text": "17 shirts cost 425 dollars; with the hat, 500."},
]


def mini_n8n(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def field(output: str, name: str) -> str:
    return next(line.split(": ", 1)[1] for line in output.splitlines() if line.startswith(f"{name}: "))


def stored_engine() -> Engine:
    store = ExecutionStore()
    return Engine(builtin_registry(), Services(memory=SqliteMemoryStore(store)), store=store)


def test_a_run_paused_by_one_process_is_resumed_by_another(tmp_path: Path, store_target: str) -> None:
    path = tmp_path / "wf.json"
    save_workflow(agent_workflow(REPLIES), path)
    uninterrupted = mini_n8n("run", str(path), "--message", "go")
    assert uninterrupted.returncode == 0, uninterrupted.stderr

    paused = mini_n8n("run", str(path), "--message", "go", "--break", "before_tool:Calculator", "--break", "from-iteration:2")
    assert paused.returncode == 3, paused.stdout + paused.stderr
    execution_id = field(paused.stdout, "execution")
    assert field(paused.stdout, "status") == "paused"
    assert field(paused.stdout, "paused") == 'before_tool at "Calculator", iteration 2'
    assert "Calculator in={\"input\":\"425 + 75\"}" not in paused.stdout

    resumed = mini_n8n("resume", execution_id)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert field(resumed.stdout, "answer") == field(uninterrupted.stdout, "answer")
    assert 'Calculator in={"input":"425 + 75"} out={"response":"500"}' in resumed.stdout
    shown = mini_n8n("executions", "show", execution_id)
    calc_lines = [l for l in shown.stdout.splitlines() if "] Calculator" in l]
    assert len(calc_lines) == 2, shown.stdout  # each tool ran once over both processes


async def test_paused_in_this_process_then_resumed_by_the_cli(store_target: str) -> None:
    store = open_store(store_target)
    engine = Engine(builtin_registry(), Services(memory=open_memory(store)), store=store)
    execution = engine.create(agent_workflow(REPLIES), items=[chat_item("go", "p")])
    execution.debugger = Debugger(Breakpoints(before_model=True, from_iteration=2))
    execution.hooks.add(lambda e: asyncio.get_running_loop().call_soon(execution.detach) if isinstance(e, ExecutionPaused) else None)
    state = await execution.run()
    assert state.status == "paused"
    assert state.pause is not None and state.pause["kind"] == "before_model" and state.pause["iteration"] == 2
    engine.store.close()
    del execution, engine  # nothing of this process carries on but the stored execution

    resumed = mini_n8n("resume", state.id)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert field(resumed.stdout, "answer") == REPLIES[2]["text"]
    final = open_store(store_target).load(state.id)
    assert final.status == "success"
    assert len(final.run_data["Model"]) == 3 and len(final.run_data["Calculator"]) == 2


def test_a_process_killed_mid_run_leaves_a_crashed_execution_that_resumes(tmp_path: Path, store_target: str) -> None:
    slow = [dict(r) for r in REPLIES]
    slow[2] = {"text": " ".join(["word"] * 400)}  # streamed at 20 ms a token: about 8 s
    path = tmp_path / "slow.json"
    save_workflow(agent_workflow(slow, model_options={"tokenDelayMs": 20}), path)
    child = subprocess.Popen([sys.executable, "-m", "engine.cli", "run", str(path), "--message", "go"], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    db = None
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:  # wait until both tool runs are stored, then kill mid-stream
            try:
                db = db or open_store(store_target)
                listed = db.list(1)
                done = sum(node == "Calculator" for node, _index, _task in db.runs(listed[0].id)) if listed else 0
            except Exception:  # the child has not created the store yet
                done = 0
            if done == 2:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the child never got to its second tool run")
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
        if db is not None:
            db.close()
    listed = mini_n8n("executions", "list")
    line = next(l for l in listed.stdout.splitlines() if "slow" in l or "test agent" in l)
    execution_id, status = line.split()[:2]
    assert status == "crashed"
    shown = mini_n8n("executions", "show", execution_id)
    assert shown.stdout.count("] Calculator") == 2  # nothing that was written is lost
    store = open_store(store_target)
    made = {(node, index): task.start_time for node, index, task in store.runs(execution_id)}
    store.close()
    assert sorted(made) == [("Calculator", 0), ("Calculator", 1), ("Chat", 0), ("Model", 0), ("Model", 1)]
    resumed = mini_n8n("resume", execution_id, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert field(resumed.stdout, "answer") == slow[2]["text"]
    assert "] Calculator" not in resumed.stdout  # the tools did not run again: their runs were served
    final = open_store(store_target).load(execution_id)
    assert len(final.run_data["Calculator"]) == 2 and len(final.run_data["Model"]) == 3
    # every run made before the kill is the one made then (a run made again would start later),
    # though no boundary was written inside the Agent's loop after its first request
    assert {key: final.run_data[key[0]][key[1]].start_time for key in made} == made


async def test_rerun_from_iteration_2_makes_no_model_call_for_iterations_1_and_2() -> None:
    engine = stored_engine()
    recorded = await engine.run(agent_workflow(REPLIES), items=[chat_item("go", "r")])
    assert recorded.status == "success"
    # the model of the re-run fails if asked for iterations 1 or 2
    refusing = [{"error": "called for iteration 1"}, {"error": "called for iteration 2"}, {"text": "a live third answer"}]
    execution = engine.create(agent_workflow(refusing), items=[chat_item("go", "r")], mode="rerun")
    execution.replay = ReplaySource(recorded, upto_iteration=2)
    state = await execution.run()
    assert state.status == "success", state.error
    assert state.result == [{"json": {"output": "a live third answer"}, "pairedItem": {"item": 0}}]
    models = state.run_data["Model"]
    assert [m.metadata.get("replayed", False) for m in models] == [True, True, False]
    assert [t.metadata.get("replayed", False) for t in state.run_data["Calculator"]] == [True, True]
    assert execution.replay.used_models == 2 and execution.replay.used_tools == 2


def code_agent(code: str):
    return agent_workflow(
        [{"toolCalls": [tool_call("Lookup", {"query": "price"}, "k1")]}, {"text": "It costs 25."}],
        tools=[("Lookup", CODE_TOOL, {"pythonCode": code})],
    )


async def test_replay_reports_a_divergence_when_a_tools_behaviour_changed() -> None:
    engine = stored_engine()
    recorded = await engine.run(code_agent("return '25'"), items=[chat_item("what?", "d")])
    assert recorded.status == "success"

    same = engine.create(code_agent("return '25'"), items=[chat_item("what?", "d")], mode="replay")
    same.replay = ReplaySource(recorded, compare=True)
    assert (await same.run()).status == "success"
    assert same.replay.divergence is None

    changed = engine.create(code_agent("return '30'"), items=[chat_item("what?", "d")], mode="replay")
    changed.replay = ReplaySource(recorded, compare=True)
    state = await changed.run()
    divergence = changed.replay.divergence
    assert divergence is not None
    assert (divergence.kind, divergence.node, divergence.iteration) == ("tool_output", "Lookup", 1)
    assert (divergence.expected, divergence.actual) == ({"response": "25"}, {"response": "30"})
    assert state.status == "error"
    assert state.error.message.startswith('Replay diverged at iteration 1, node "Lookup": the tool returned something else')
    assert len(state.run_data["Model"]) == 1  # it stopped at the first difference


def test_cli_replay_and_rerun(tmp_path: Path) -> None:
    path = tmp_path / "wf.json"
    save_workflow(agent_workflow(REPLIES), path)
    first = mini_n8n("run", str(path), "--message", "go")
    execution_id = field(first.stdout, "execution")
    replay = mini_n8n("replay", execution_id)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "replay: no divergence" in replay.stdout
    assert "reused: 3 model replies, 0 tool result(s)" in replay.stdout
    rerun = mini_n8n("rerun", execution_id, "--from-iteration", "1")
    assert rerun.returncode == 0
    assert "reused: 1 model reply, 1 tool result(s)" in rerun.stdout


def test_executions_list_show_delete(tmp_path: Path, store_target: str) -> None:
    path = tmp_path / "wf.json"
    save_workflow(agent_workflow(REPLIES), path)
    run = mini_n8n("run", str(path), "--message", "go")
    execution_id = field(run.stdout, "execution")
    listed = mini_n8n("executions", "list")
    assert listed.stdout.split()[:2] == [execution_id, "success"]
    shown = mini_n8n("executions", "show", execution_id)
    assert shown.returncode == 0
    assert [l.split("] ")[1].split()[0] for l in shown.stdout.splitlines() if l.startswith("[")] == [
        "Chat", "Model", "Calculator", "Model", "Calculator", "Model", "AI"]
    assert mini_n8n("executions", "delete", execution_id).returncode == 0
    assert mini_n8n("executions", "show", execution_id).returncode == 2
    if not store_target.startswith("postgresql:"):
        with sqlite3.connect(os.environ["MINI_N8N_DB"]) as db:
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_executions_show_prints_the_steps_and_the_edits() -> None:
    engine = stored_engine()
    execution = engine.create(agent_workflow(REPLIES), items=[chat_item("go", "show")])
    execution.debugger = Debugger(Breakpoints(after_tool_result=True))

    def release(event: object) -> None:
        if isinstance(event, ExecutionPaused):
            edit = {"observation": "four hundred twenty-five"} if event.where["toolCallId"] == "c1" else None
            asyncio.get_running_loop().call_soon(execution.debugger.continue_, edit)

    execution.hooks.add(release)
    state = await execution.run()
    assert state.status == "success"
    engine.store.flush()  # its end where another process reads it at once
    shown = mini_n8n("executions", "show", state.id)
    assert shown.returncode == 0, shown.stderr
    steps = shown.stdout.split("\nsteps:\n", 1)[1].splitlines()
    assert steps[0].split() == ["iter", "item", "tool", "input", "observation", "status", "tokens", "in/out"]
    assert steps[1].split()[:4] == ["1", "0", "Calculator", "✎"]
    assert "four hundred twenty-five" in steps[1]
    assert steps[3].split()[:4] == ["3", "0", "final", "answer"]
    assert "✎ 1 Calculator: Edited while paused:; observation: 425  →  four hundred twenty-five" in shown.stdout


CHILD = """
import asyncio, sys
import engine.store.sqlite_store as sqlite_store
sqlite_store.FOLD_EVERY = 10**9      # never fold into the database: every boundary stays in the journal
sqlite_store.FOLD_AFTER_S = 10**9
from engine.executor import Engine
from engine.hooks import NodeAfter
from engine.registry import builtin_registry
from engine.store import ExecutionStore
from engine.workflow import load_workflow
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call

async def main():
    store = ExecutionStore()
    # an execution before it: the one killed writes into the file this one's journal was (emptied, with its old records)
    warm = agent_workflow([{"toolCalls": [tool_call("Calculator", {"input": f"{i} + 1"})]} for i in range(30)] + [{"text": "warm"}],
                          agent_options={"maxIterations": 40})
    assert (await Engine(builtin_registry(), store=store).run(warm, items=[chat_item("warm", "w")])).status == "success"
    store.flush()  # its end folded in: its journal is the spare the next execution takes
    execution = Engine(builtin_registry(), store=store).create(load_workflow(sys.argv[1]), items=[chat_item("go", "j")])
    calculator_runs = 0
    def on_event(event):
        nonlocal calculator_runs
        if isinstance(event, NodeAfter) and event.node == "Calculator":
            calculator_runs += 1
            if calculator_runs == 2:
                print(execution.state.id, flush=True)
    execution.hooks.add(on_event)
    await execution.run()

asyncio.run(main())
"""


SLOW_ANSWER = " ".join(["word"] * 400)  # streamed at 20 ms a token: about 8 s


def start_slow_child(tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    """CHILD running the agent whose last answer streams slowly; returns it and its execution id
    once its second tool run is done."""
    slow = [*REPLIES[:2], {"text": SLOW_ANSWER}]
    path = tmp_path / "slow.json"
    save_workflow(agent_workflow(slow, model_options={"tokenDelayMs": 20}), path)
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    execution_id = child.stdout.readline().strip() if child.stdout is not None else ""
    if not execution_id:
        child.kill()
        raise AssertionError(child.communicate()[1])
    return child, execution_id


def test_boundaries_only_in_the_journal_survive_a_kill(tmp_path: Path) -> None:
    child, execution_id = start_slow_child(tmp_path)
    try:
        time.sleep(0.3)  # the boundary after the second tool run is journaled, and the model streams
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    with sqlite3.connect(os.environ["MINI_N8N_DB"]) as db:  # the database alone has not got them, nor the execution's row
        assert [row for row in stored_runs(db, execution_id) if row[1] == "Calculator"] == []
        assert db.execute("SELECT COUNT(*) FROM executions WHERE id=?", (execution_id,)).fetchone() == (0,)
    store = ExecutionStore()  # opening it folds the dead process's journal in
    assert store.list()[0].status == "crashed"
    assert len(store.load(execution_id).run_data["Calculator"]) == 2
    assert list(Path(f"{os.environ['MINI_N8N_DB']}-boundaries").iterdir()) == []  # and removes its spare journal
    store.close()
    resumed = mini_n8n("resume", execution_id, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    final = ExecutionStore().load(execution_id)
    assert len(final.run_data["Calculator"]) == 2  # the tools did not run again
    assert len(final.run_data["Model"]) == 3 and final.result == [{"json": {"output": SLOW_ANSWER}, "pairedItem": {"item": 0}}]


def test_an_execution_only_in_its_journal_belongs_to_its_live_process(tmp_path: Path) -> None:
    """Before its first fold a new execution is its journal alone: while its process lives, another
    process neither takes it over nor deletes it; once that process is killed it is crashed and
    resumes."""
    child, execution_id = start_slow_child(tmp_path)
    try:
        store = ExecutionStore()
        assert store.mark_crashed() == [] and execution_id not in [e.id for e in store.list()]
        with pytest.raises(ExecutionBusy, match=f"execution {execution_id} is already running in process {child.pid}"):
            store.prepare_resume(execution_id)
        assert store.delete(execution_id) is False
        starts = [read_start(path) for path in Path(f"{os.environ['MINI_N8N_DB']}-boundaries").iterdir()]
        assert [start.execution_id for start in starts if start is not None] == [execution_id]  # its journal is still there
        store.close()
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    store = ExecutionStore()
    state, served = store.prepare_resume(execution_id)  # taken in as crashed, then claimed
    calculator_runs = len(state.run_data.get("Calculator", [])) + [node for node, _index, _task in served].count("Calculator")
    assert state.status == "crashed" and calculator_runs == 2  # as of its last boundary, or served again
    store.release(state)
    store.close()
    done = mini_n8n("resume", execution_id, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    final = ExecutionStore().load(execution_id)
    assert final.status == "success" and len(final.run_data["Calculator"]) == 2 and len(final.run_data["Model"]) == 3


FOLDING_CHILD = """
import asyncio, sys
import engine.store.boundary_rows as boundary_rows
import engine.store.sqlite_store as sqlite_store
sqlite_store.FOLD_EVERY = 3          # groups of 3 boundaries folded, each as its last boundary only
boundary_rows.DELTAS_PER_WHOLE = 2   # and whole and delta rows both in the database
sqlite_store.FOLD_AFTER_S = 10**9
from engine.executor import Engine
from engine.hooks import NodeAfter
from engine.registry import builtin_registry
from engine.store import ExecutionStore
from engine.workflow import load_workflow
from nodes.triggers.chat_trigger import chat_item

async def main():
    execution = Engine(builtin_registry(), store=ExecutionStore()).create(load_workflow(sys.argv[1]), items=[chat_item("go", "f")])
    def on_event(event):
        if isinstance(event, NodeAfter) and event.node == "Calculator" and event.run_index == 6:
            print(execution.state.id, flush=True)
    execution.hooks.add(on_event)
    await execution.run()

asyncio.run(main())
"""


def test_a_kill_after_folded_groups_resumes_from_the_last_boundary(tmp_path: Path) -> None:
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} + 1"}, f"f{i}")]} for i in range(7)]
    replies.append({"text": " ".join(["word"] * 400)})  # streamed at 20 ms a token: killed while it streams
    path = tmp_path / "folding.json"
    save_workflow(agent_workflow(replies, model_options={"tokenDelayMs": 20}, agent_options={"maxIterations": 10}), path)
    child = subprocess.Popen([sys.executable, "-c", FOLDING_CHILD, str(path)], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        execution_id = child.stdout.readline().strip()
        assert execution_id, child.stderr.read()
        time.sleep(0.3)  # the last tool run's boundary is written, and the model streams
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    with sqlite3.connect(os.environ["MINI_N8N_DB"]) as db:  # some groups folded before the kill, the rest journaled
        bases = [row[0] for row in db.execute("SELECT base FROM boundaries WHERE execution_id=? ORDER BY seq", (execution_id,))]
        folded = sum(row[1] == "Calculator" for row in stored_runs(db, execution_id))
        assert bases and bases[0] is None and 0 < folded < 7
    store = ExecutionStore()
    assert store.list()[0].status == "crashed"
    assert len(store.load(execution_id).run_data["Calculator"]) == 7
    store.close()
    resumed = mini_n8n("resume", execution_id, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    final = ExecutionStore().load(execution_id)
    assert len(final.run_data["Calculator"]) == 7  # no tool ran again
    assert final.status == "success" and final.result == [{"json": {"output": replies[-1]["text"]}, "pairedItem": {"item": 0}}]
