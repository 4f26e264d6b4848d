"""What only the PostgreSQL store has: its layout versions and migration, damage reported,
a clear error for a server that is not there, and a desktop that never imports its driver."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.debugger import Breakpoints
from engine.errors import MiniN8nError
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.services import Services
from engine.store import StoreDamaged, open_memory, open_store
from engine.store.postgres_schema import SCHEMA_VERSION, connect, prepare
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call
from tests.engine.pausing import run_to_pause
from tests.store_backends import sql

ROOT = Path(__file__).parents[2]
REPLIES = [{"toolCalls": [tool_call("Calculator", {"input": "6 * 7"})]}, {"text": "42"}]


async def test_a_layout_1_database_is_migrated_and_its_executions_read_and_resume(pg_target: str) -> None:
    db = connect(pg_target)
    prepare(db, pg_target, upto=1)  # the layout before Simple Memory moved into the database
    assert db.execute("SELECT version FROM mini_n8n_schema").fetchone()[0] == 1
    assert db.execute("SELECT to_regclass('memory')").fetchone()[0] is None
    db.close()
    # the tables of layout 1 are those of layout 2 without `memory` and `stop_requested`, so a
    # paused execution stored now, with those two dropped again, is what a layout-1 database holds
    store = open_store(pg_target)
    paused = await run_to_pause(
        Engine(builtin_registry(), store=store).create(agent_workflow(REPLIES), items=[chat_item("go", "s")]),
        Breakpoints(before_tool=True))
    store.close()
    db = connect(pg_target)
    db.execute("DROP TABLE memory")
    db.execute("ALTER TABLE executions DROP COLUMN stop_requested")
    db.execute("UPDATE mini_n8n_schema SET version=1")
    db.close()
    migrated = open_store(pg_target)
    assert sql(migrated, "SELECT version FROM mini_n8n_schema") == [(SCHEMA_VERSION,)]
    engine = Engine(builtin_registry(), Services(memory=open_memory(migrated)), store=migrated)
    resumed = await engine.resume(paused.id).run()
    assert resumed.status == "success" and resumed.result == [{"json": {"output": "42"}, "pairedItem": {"item": 0}}]
    open_memory(migrated).append(("wf", "s"), [])  # the new table is there, and the new column
    assert sql(migrated, "SELECT stop_requested FROM executions WHERE id=?", paused.id) == [(False,)]
    open_store(pg_target).close()  # and it opens again as a current store


def test_a_database_of_a_newer_layout_is_refused_and_left_alone(pg_target: str) -> None:
    open_store(pg_target).close()
    db = connect(pg_target)
    db.execute("UPDATE mini_n8n_schema SET version=99")
    with pytest.raises(MiniN8nError, match=f"has layout version 99, and this mini-n8n reads version {SCHEMA_VERSION} .* a newer mini-n8n wrote it"):
        open_store(pg_target)
    assert db.execute("SELECT version FROM mini_n8n_schema").fetchone()[0] == 99
    db.close()


async def test_a_flipped_byte_in_a_stored_run_is_reported_not_decoded(pg_target: str) -> None:
    store = open_store(pg_target)
    state = await Engine(builtin_registry(), store=store).run(agent_workflow(REPLIES), items=[chat_item("go", "s")])
    sql(store, "UPDATE runs SET task = overlay(task placing '#'::bytea from 3 for 1) WHERE execution_id=? AND seq=2", state.id)
    with pytest.raises(StoreDamaged, match=f"run 2 .* of execution {state.id} .* fails its checksum"):
        store.load(state.id)
    with pytest.raises(StoreDamaged):
        store.check()


def test_an_unreachable_server_is_a_clear_error() -> None:
    with pytest.raises(MiniN8nError, match=r"cannot connect to the execution store postgresql://root:\*\*\*@127.0.0.1:1/x"):
        open_store("postgresql://root:secret@127.0.0.1:1/x?connect_timeout=2")
    cli = subprocess.run([sys.executable, "-m", "engine.cli", "executions", "list"], cwd=ROOT, capture_output=True, text=True,
                         env={**__import__("os").environ, "MINI_N8N_DB": "postgresql://root:secret@127.0.0.1:1/x?connect_timeout=2"})
    assert cli.returncode == 2 and "cannot connect to the execution store" in cli.stderr and "secret" not in cli.stderr


def test_the_desktop_store_never_imports_the_postgres_driver(tmp_path: Path) -> None:
    code = ("import sys; from engine.store import open_store; open_store(sys.argv[1]).close(); "
            "print(sorted(m for m in sys.modules if m.startswith('psycopg')))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "x.sqlite")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
