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


def test_connections_switching_a_new_store_to_wal_at_the_same_moment_all_do(tmp_path: Path) -> None:
    """Every process opening the store switches the file to WAL (open_store_file); SQLite refuses
    all but one of the connections that try at the same moment at once, its busy timeout not
    applying there: they wait and try again."""
    import sqlite3
    import threading

    from engine.store.sqlite_file import BUSY_TIMEOUT_S, _use_wal

    failures: list[BaseException] = []
    for attempt in range(50):
        path = tmp_path / f"store{attempt}.sqlite"
        connections = [sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S)
                       for _ in range(8)]
        ready = threading.Barrier(len(connections))

        def switch(db: sqlite3.Connection) -> None:
            ready.wait()
            try:
                _use_wal(db)
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=switch, args=(db,)) for db in connections]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [db.execute("PRAGMA journal_mode").fetchone()[0] for db in connections] == ["wal"] * len(connections)
        for db in connections:
            db.close()
    assert failures == []
