"""Retention (as n8n's EXECUTIONS_DATA_MAX_AGE / EXECUTIONS_DATA_PRUNE_MAX_COUNT), `executions
prune`, and the indexes that keep `executions list` fast on a large store."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.errors import MiniN8nError
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.store import ExecutionStore, Retention, open_store
from engine.workflow import save_workflow
from nodes.triggers.chat_trigger import chat_item
from engine.debugger import Breakpoints
from tests.builders import agent_workflow, tool_call
from tests.engine.pausing import run_to_pause
from tests.store_backends import sql

ROOT = Path(__file__).parents[2]
REPLIES = [{"toolCalls": [tool_call("Calculator", {"input": "1 + 1"})]}, {"text": "2"}]
DAY_MS = 86400 * 1000.0


def mini_n8n(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


async def executions_aged(store, ages_days: list[float]) -> list[str]:
    """One finished execution per age (days before now), newest first, and one paused 30 days ago."""
    ids = []
    for age in ages_days:
        state = await Engine(builtin_registry(), store=store).run(agent_workflow(REPLIES), items=[chat_item("go", "s")])
        sql(store, "UPDATE executions SET started_at=? WHERE id=?", time.time() * 1000 - age * DAY_MS, state.id)
        ids.append(state.id)
    paused = await run_to_pause(
        Engine(builtin_registry(), store=store).create(agent_workflow(REPLIES), items=[chat_item("go", "p")]),
        Breakpoints(before_tool=True))
    sql(store, "UPDATE executions SET started_at=? WHERE id=?", time.time() * 1000 - 30 * DAY_MS, paused.id)
    return ids + [paused.id]


async def test_prune_by_age_and_by_count_keeps_unfinished_executions(store_target: str) -> None:
    store = open_store(store_target, retention=Retention())
    *finished, paused = await executions_aged(store, [0.1, 1.5, 3, 10, 20])
    assert store.prune(Retention(max_age_days=7)) == 2
    assert [row.id for row in store.list()] == [*finished[:3], paused]
    assert store.prune(Retention(max_count=1), vacuum=True) == 2
    assert [row.id for row in store.list()] == [finished[0], paused]
    runs = "runs" if store_target.startswith("postgres") else "(SELECT execution_id FROM runs UNION ALL SELECT execution_id FROM run_batches)"
    assert sql(store, f"SELECT COUNT(DISTINCT execution_id) FROM {runs}")[0][0] == 2
    assert sql(store, "SELECT COUNT(DISTINCT execution_id) FROM boundaries")[0][0] == 2
    assert sql(store, "SELECT COUNT(*) FROM workflows")[0][0] == 1
    resumed = await Engine(builtin_registry(), store=store).resume(paused).run()  # untouched by pruning
    assert resumed.status == "success"


def test_the_retention_setting_prunes_after_each_run_and_the_cli_prunes_on_demand(tmp_path: Path, store_target: str) -> None:
    path = tmp_path / "wf.json"
    save_workflow(agent_workflow(REPLIES), path)
    for _ in range(4):
        assert mini_n8n("run", str(path), "--message", "go", "-q", env={"MINI_N8N_PRUNE_MAX_COUNT": "2"}).returncode == 0
    listed = mini_n8n("executions", "list").stdout.splitlines()
    assert len(listed) == 2 and all(" success " in line for line in listed)
    pruned = mini_n8n("executions", "prune", "--max-count", "1")
    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout.strip() == "pruned 1 execution, " + ("database vacuumed" if store_target.startswith("postgresql:") else "file vacuumed")
    assert len(mini_n8n("executions", "list").stdout.splitlines()) == 1
    refused = mini_n8n("executions", "prune")
    assert refused.returncode == 2 and "nothing to prune by" in refused.stderr
    bad = mini_n8n("executions", "list", env={"MINI_N8N_PRUNE_MAX_AGE_DAYS": "a week"})
    assert bad.returncode == 2 and "$MINI_N8N_PRUNE_MAX_AGE_DAYS must be a number, not 'a week'" in bad.stderr
    checked = mini_n8n("executions", "check")
    assert checked.returncode == 0 and checked.stdout.strip().endswith(": ok")


def test_retention_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Retention.from_env() == Retention(None, None)
    monkeypatch.setenv("MINI_N8N_PRUNE_MAX_AGE_DAYS", "14")
    monkeypatch.setenv("MINI_N8N_PRUNE_MAX_COUNT", "10000")
    assert Retention.from_env() == Retention(14.0, 10000)
    monkeypatch.setenv("MINI_N8N_PRUNE_MAX_COUNT", "-1")
    with pytest.raises(MiniN8nError, match="MINI_N8N_PRUNE_MAX_COUNT must not be negative"):
        Retention.from_env()


def test_listing_the_newest_executions_reads_an_index_not_the_whole_table(tmp_path: Path) -> None:
    store = ExecutionStore(tmp_path / "x.sqlite")
    plan = " ".join(str(r[-1]) for r in store.connection.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM executions ORDER BY started_at DESC LIMIT 200"))
    assert "USING INDEX executions_by_start" in plan and "TEMP B-TREE" not in plan
    plan = " ".join(str(r[-1]) for r in store.connection.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM executions WHERE status IN ('running', 'new')"))
    assert "USING COVERING INDEX executions_by_status" in plan or "USING INDEX executions_by_status" in plan


async def test_any_unicode_is_stored_and_read_back_exactly(store_target: str) -> None:
    store = open_store(store_target)
    text = "lone \ud800 surrogate, 汉字, emoji 🧮, nul \x00"
    state = await Engine(builtin_registry(), store=store).run(agent_workflow([{"text": text}]), items=[chat_item(text, "s")])
    assert state.status == "success"
    loaded = store.load(state.id)
    assert loaded.result == [{"json": {"output": text}, "pairedItem": {"item": 0}}]
    assert loaded.run_data["Chat"][0].input["main"][0][0]["json"]["chatInput"] == text
