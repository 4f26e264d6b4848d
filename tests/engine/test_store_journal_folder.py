"""Journals are found by the execution their start record names, not by their file's name: what a
dead process left is folded or removed by what the database says of its execution, and a resumed
execution's journal names it too."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

from engine.debugger import Breakpoints
from engine.executor import Engine
from engine.hooks import Hooks, NodeAfter
from engine.registry import builtin_registry
from engine.store import ExecutionStore, Retention
from engine.store.codec import pack
from engine.store.journal import Journal, Start, encode_record, encode_start, read_start, salt
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call
from tests.engine.pausing import run_to_pause

GONE = 999_999_999  # a pid no process has
REPLIES = [{"toolCalls": [tool_call("Calculator", {"input": "2 * 3"})]}, {"text": "six"}]


def runs_of(store: ExecutionStore, execution_id: str) -> dict[str, int]:
    return {name: len(runs) for name, runs in store.load(execution_id).run_data.items()}


def left_by_a_dead_process(store_path: Path, execution_id: str, seq: int) -> Path:
    """A journal as a killed process leaves it: its start record, then one run not in the database."""
    workflow = b'{"name":"w","nodes":[],"connections":{}}'
    start = Start(execution_id, GONE, 1, {"workflow_name": "w", "mode": "cli", "status": "running", "started_at": 1.0,
                                          "start_node": "Chat"}, "h", workflow, zlib.crc32(workflow))
    task = {"startTime": 1.0, "executionTime": 0.0, "executionStatus": "success", "source": [], "input": {},
            "data": {"main": [[{"json": {"late": True}}]]}}
    data, crc = pack(task)
    journal = Journal(Path(f"{store_path}-boundaries") / f"{GONE}.1.0.0.journal")
    journal.append(encode_start(start) + encode_record([(execution_id, seq, "Late", 0, None, data, crc)], None, salt(execution_id)))
    journal.close(remove=False)
    return journal.path


async def test_a_dead_process_journal_of_an_execution_that_ended_is_removed_and_not_folded(tmp_path: Path) -> None:
    """Killed after its execution's last fold, before the journal was emptied: everything in it is
    in the database already, and the file goes."""
    path = tmp_path / "x.sqlite"
    store = ExecutionStore(path, retention=Retention())
    state = await Engine(builtin_registry(), store=store).run(agent_workflow(REPLIES), items=[chat_item("go", "s")])
    assert state.status == "success"
    before = runs_of(store, state.id)
    store.close()
    left = left_by_a_dead_process(path, state.id, 100)
    again = ExecutionStore(path, retention=Retention())
    assert not left.exists()
    assert again.load(state.id).status == "success" and runs_of(again, state.id) == before
    again.close()


async def test_a_dead_process_journal_of_a_running_execution_is_folded_and_the_execution_crashed(tmp_path: Path, monkeypatch) -> None:
    """Its owner died after the store looked for running executions of dead processes, before it
    read the journals: the journal's start record still leads to the execution."""
    path = tmp_path / "x.sqlite"
    store = ExecutionStore(path, retention=Retention())
    state = await Engine(builtin_registry(), store=store).run(agent_workflow(REPLIES), items=[chat_item("go", "s")])
    store.flush()  # its end, journaled, folded in
    last = max(seq for seq, *_rest in store._run_rows(state.id, None))
    store.connection.execute("UPDATE executions SET status='running', owner_pid=? WHERE id=?", (GONE, state.id))
    store.close()
    left = left_by_a_dead_process(path, state.id, last + 1)
    answers = iter([True])  # alive when the rows are read, gone by the time its journal is

    def alive(pid: int, started: Any) -> bool:
        return pid == GONE and next(answers, False)

    monkeypatch.setattr("engine.store.sqlite_lease.same_process_alive", alive)
    again = ExecutionStore(path, retention=Retention())
    assert not left.exists()
    found = again.load(state.id)
    assert found.status == "crashed" and len(found.run_data["Late"]) == 1
    again.close()


async def test_a_resumed_execution_journals_into_a_file_that_names_it(tmp_path: Path) -> None:
    store = ExecutionStore(tmp_path / "x.sqlite", retention=Retention())
    engine = Engine(builtin_registry(), store=store)
    execution = engine.create(agent_workflow(REPLIES), items=[chat_item("go", "s")])
    paused = await run_to_pause(execution, Breakpoints(before_tool=True))
    assert paused.status == "paused"
    named: list[str | None] = []

    def watch(event: Any) -> None:
        start = read_start(store._writers[event.execution_id].journal.path)
        named.append(start.execution_id if start is not None else None)

    hooks = Hooks()
    hooks.add(watch, kinds=(NodeAfter,))
    resumed = await engine.resume(paused.id, hooks=hooks).run()
    assert resumed.status == "success"
    assert named and set(named) == {paused.id}
    store.close()
