"""The store file stays small while runs go on: the workflow is written once, the execution row
only when its status changes, and the WAL is folded into the file as it grows."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest

from engine.executor import Engine
from engine.hooks import Hooks, NodeAfter
from engine.registry import builtin_registry
from engine.store.sqlite_rows import stored_runs
import engine.store.journal_folder as journal_folder
from engine.store import ExecutionStore, Retention
from engine.workflow import parse_workflow, workflow_to_data
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, node, tool_call

ROUNDS = 40


def big_agent(rounds: int = ROUNDS):
    """An agent workflow carrying 200 unconnected nodes of 5 KB each (a 1 MB file)."""
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} + 1"})]} for i in range(rounds)] + [{"text": "done"}]
    data = workflow_to_data(agent_workflow(replies, agent_options={"maxIterations": rounds + 1}))
    data["nodes"] += [node(f"Note {i}", "n8n-nodes-base.stickyNote", {"content": "x" * 5000}) for i in range(200)]
    return parse_workflow(data, "big")


async def test_a_run_writes_its_workflow_once_and_its_row_only_on_status_changes(tmp_path: Path) -> None:
    store = ExecutionStore(tmp_path / "x.sqlite", retention=Retention())
    statements: list[str] = []
    store.connection.set_trace_callback(statements.append)
    state = await Engine(builtin_registry(), store=store).run(big_agent(), items=[chat_item("go", "s")])
    assert state.status == "success"
    store.flush()  # its end, journaled, folded in
    store.connection.set_trace_callback(None)
    row_writes = [s for s in statements if s.lstrip().upper().startswith(("UPDATE EXECUTIONS", "INSERT INTO EXECUTIONS"))]
    # inserted with the first fold (running, or success when that is the end), then success
    assert 1 <= len(row_writes) <= 2 and row_writes[0].lstrip().upper().startswith("INSERT")
    assert sum(s.lstrip().upper().startswith("INSERT OR IGNORE INTO WORKFLOWS") for s in statements) == 1
    first_fold = statements[:[s.strip().upper() for s in statements].index("COMMIT")]
    assert not [s for s in first_fold if "DELETE" in s.upper()]  # nothing of a new execution is stored to delete
    # a second run of the same workflow shares the stored copy
    await Engine(builtin_registry(), store=store).run(big_agent(), items=[chat_item("go", "s")])
    assert store.connection.execute("SELECT COUNT(*) FROM workflows").fetchone()[0] == 1
    # and fewer transactions than boundaries: boundaries are journaled, then folded in groups
    commits = sum(s.strip().upper() == "COMMIT" for s in statements)
    assert commits < ROUNDS


async def test_the_wal_stays_bounded_during_a_long_run(tmp_path: Path, monkeypatch) -> None:
    import engine.store.sqlite_file as sqlite_file

    monkeypatch.setattr(sqlite_file, "WAL_AUTOCHECKPOINT_PAGES", 64)  # 256 KB
    monkeypatch.setattr(sqlite_file, "WAL_SIZE_LIMIT", 512 * 1024)
    monkeypatch.setattr("engine.store.sqlite_store.FOLD_EVERY", 2)  # a transaction every other boundary
    path = tmp_path / "x.sqlite"
    store = ExecutionStore(path, retention=Retention())
    wal = Path(f"{path}-wal")
    sizes: list[int] = []

    def watch(event: object) -> None:
        if isinstance(event, NodeAfter) and wal.exists():
            sizes.append(wal.stat().st_size)

    padded = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} +{' ' * 8000}1"})]} for i in range(150)]  # 8 KB a call
    replies = padded + [{"text": "done"}]
    execution = Engine(builtin_registry(), store=store).create(
        agent_workflow(replies, memory=True, agent_options={"maxIterations": 151}), items=[chat_item("go", "s")])
    execution.hooks.add(watch)
    state = await execution.run()
    assert state.status == "success"
    written = sum(len(row[4]) for row in stored_runs(store.connection, state.id))
    assert written > 2 * 1024 * 1024  # the run wrote several times the WAL's bound
    # a transaction larger than the limit (a whole stack, every 64th boundary) passes through the
    # WAL, which is then cut back: it does not keep what the run wrote
    assert len(sizes) > 300
    # the last sample may see one transaction appended while the checkpointer copies (wal_checkpointer)
    assert sorted(sizes)[len(sizes) * 9 // 10] <= 512 * 1024 and sizes[-1] <= 2 * 512 * 1024
    store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert not os.path.exists(f"{path}-wal") or os.path.getsize(f"{path}-wal") <= 1024 * 1024



async def test_the_wal_is_folded_into_the_file_by_the_stores_thread(tmp_path: Path, monkeypatch) -> None:
    """Commits do not checkpoint on the writer's thread (in the editor, the thread that paints):
    with the writer's own automatic checkpoint out of reach, the file still receives what was
    committed, from the store's checkpoint thread after commits pause; closing folds the rest."""
    import engine.store.sqlite_file as sqlite_file

    monkeypatch.setattr(sqlite_file, "WAL_AUTOCHECKPOINT_PAGES", 1_000_000)
    path = tmp_path / "x.sqlite"
    store = ExecutionStore(path, retention=Retention())
    before = path.stat().st_size
    state = await Engine(builtin_registry(), store=store).run(big_agent(3), items=[chat_item("go", "s")])
    assert state.status == "success"
    store.flush()  # its end, journaled, folded in
    assert os.path.getsize(f"{path}-wal") > 1024 * 1024  # the 1 MB workflow went into the WAL
    deadline = time.monotonic() + 30
    while path.stat().st_size < before + 1024 * 1024:  # copied into the file: checkpointed
        assert time.monotonic() < deadline, "the WAL was not checkpointed"
        await asyncio.sleep(0.01)
    checkpointing = [thread for thread in threading.enumerate() if thread.name == "mini-n8n store checkpoint"]
    store.close()
    assert len([thread for thread in threading.enumerate() if thread.name == "mini-n8n store checkpoint"]) == len(checkpointing) - 1
    assert not os.path.exists(f"{path}-wal")  # the last connection closed folded everything in
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT status FROM executions WHERE id=?", (state.id,)).fetchone() == ("success",)


async def test_the_checkpoint_thread_wakes_again_for_commits_after_a_pause(tmp_path: Path, monkeypatch) -> None:
    """Once it has copied everything the thread sleeps; the next commit wakes it (a later burst of
    commits is copied as the first was), and commits in a burst do not each wake it."""
    import engine.store.sqlite_file as sqlite_file
    from engine.store.wal_checkpointer import WalCheckpointer

    monkeypatch.setattr(sqlite_file, "WAL_AUTOCHECKPOINT_PAGES", 1_000_000)
    monkeypatch.setattr("engine.store.sqlite_store.FOLD_EVERY", 2)  # a burst of commits in each run
    wakes: list[int] = []
    wake = WalCheckpointer.written

    def counted(self: WalCheckpointer) -> None:
        wakes.append(self._asleep)
        wake(self)

    monkeypatch.setattr(WalCheckpointer, "written", counted)
    path = tmp_path / "x.sqlite"
    store = ExecutionStore(path, retention=Retention())
    for round_ in range(2):
        before = path.stat().st_size
        workflow = big_agent(3)
        workflow.name = f"big {round_}"  # a workflow of its own: about 1 MB more for the file each time
        state = await Engine(builtin_registry(), store=store).run(workflow, items=[chat_item("go", "s")])
        assert state.status == "success"
        deadline = time.monotonic() + 30
        while path.stat().st_size < before + 512 * 1024:  # copied into the file: checkpointed
            assert time.monotonic() < deadline, f"the WAL was not checkpointed after run {round_ + 1}"
            await asyncio.sleep(0.01)
        while not store._checkpointer._asleep:
            assert time.monotonic() < deadline, "the checkpoint thread did not go to sleep"
            await asyncio.sleep(0.01)
    store.close()
    assert len(wakes) >= 4 and sum(wakes) == 1  # only the second run's first commit found it asleep


async def small_run_stored(path: Path) -> tuple[ExecutionStore, int]:
    """A store at `path`, and its file's size before the three-round agent run it then stored."""
    store = ExecutionStore(path, retention=Retention())
    before = path.stat().st_size
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} + 1"})]} for i in range(3)] + [{"text": "done"}]
    workflow = agent_workflow(replies, agent_options={"maxIterations": 4})
    state = await Engine(builtin_registry(), store=store).run(workflow, items=[chat_item("go", "s")])
    assert state.status == "success"
    return store, before


async def copied_into_the_file(path: Path, size: int) -> float:
    """When the store file grew past `size`: a checkpoint copied pages into it."""
    deadline = time.monotonic() + 30
    while path.stat().st_size <= size:
        assert time.monotonic() < deadline, "the WAL was not checkpointed"
        await asyncio.sleep(0.01)
    return time.monotonic()


async def test_a_pause_after_a_few_commits_leaves_them_in_the_wal_for_a_while(tmp_path: Path, monkeypatch) -> None:
    """Each checkpoint costs two fsyncs, and the writer's next commit one more (SQLite syncs the
    WAL header it starts over with): a pause after a run's one commit does not start one at once;
    what it wrote is copied once it has waited MAX_DELAY_S."""
    monkeypatch.setattr("engine.store.wal_checkpointer.MAX_DELAY_S", 2.0)
    path = tmp_path / "x.sqlite"
    store, before = await small_run_stored(path)
    ended = time.monotonic()
    await asyncio.sleep(0.3)  # pauses of several QUIET_S: copying at every pause would have copied
    assert path.stat().st_size == before
    assert await copied_into_the_file(path, before) - ended >= 1.0
    store.close()


async def test_a_pause_after_many_commits_copies_them_at_once(tmp_path: Path, monkeypatch) -> None:
    """CHECKPOINT_COMMITS commits waiting or more: the pause starts a checkpoint, MAX_DELAY_S or not."""
    monkeypatch.setattr("engine.store.wal_checkpointer.MAX_DELAY_S", 600.0)
    monkeypatch.setattr("engine.store.wal_checkpointer.CHECKPOINT_COMMITS", 1)
    path = tmp_path / "x.sqlite"
    store, before = await small_run_stored(path)
    await copied_into_the_file(path, before)
    store.close()


def locks_held(path: Path) -> set[tuple[str, ...]]:
    """The POSIX locks this process holds on the store file and on its WAL index ("-shm"), as the
    kernel lists them: (file, kind, first byte, last byte)."""
    files = {os.stat(path).st_ino: "store", os.stat(f"{path}-shm").st_ino: "index"}
    held = set()
    with open("/proc/locks") as listed:
        for line in listed:  # "1: POSIX ADVISORY READ <pid> <major>:<minor>:<inode> <first> <last>"
            fields = line.split()
            if "->" in fields or len(fields) < 8 or fields[4] != str(os.getpid()):  # "->": a lock waited for
                continue
            inode = int(fields[5].rsplit(":", 1)[-1])
            if inode in files:
                held.add((files[inode], fields[3], fields[6], fields[7]))
    return held


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="the kernel's list of locks is Linux's")
async def test_the_process_keeps_its_sqlite_locks_through_checkpoints_checks_and_a_second_store(tmp_path: Path, monkeypatch) -> None:
    """SQLite's POSIX locks belong to the process and the file: any descriptor of the store file or
    of its WAL index opened and closed beside SQLite drops them all, and other processes then take
    the index for unused (one started it over beneath 16 processes writing at once: a damaged
    store). Through checkpoints, a full check and a second store on the same file, they stay."""
    monkeypatch.setattr("engine.store.wal_checkpointer.CHECKPOINT_COMMITS", 1)
    path = tmp_path / "x.sqlite"
    store, before = await small_run_stored(path)
    held = locks_held(path)
    assert {file for file, *_ in held} == {"store", "index"}
    await copied_into_the_file(path, before)  # the checkpoint thread has copied the WAL into the file
    store.check()
    ExecutionStore(path, retention=Retention()).close()
    assert locks_held(path) == held
    store.close()


async def test_one_journal_file_serves_the_executions_of_a_process(tmp_path: Path) -> None:
    """An ended execution's journal, once its end is folded in, is kept emptied for the next one
    under the same name (its pages are allocated already, and nothing is renamed), also by the next
    store of the process on the same file; the process's exit removes it, and a store opened later
    removes a dead process's."""
    path = tmp_path / "x.sqlite"
    store = ExecutionStore(path, retention=Retention())
    journals = Path(f"{path}-boundaries")
    engine = Engine(builtin_registry(), store=store)
    first = await engine.run(big_agent(3), items=[chat_item("go", "s")])
    store.flush()  # its end folded in (else it waits in the journal for the ends after it)
    spares = list(journals.iterdir())
    assert len(spares) == 1 and spares[0].name.startswith(f"{os.getpid()}.{store._started}.")
    name, inode = spares[0].name, spares[0].stat().st_ino
    seen: list[tuple[str, int]] = []

    def watch(event: object) -> None:
        for own in journals.iterdir():
            seen.append((own.name, own.stat().st_ino))

    hooks = Hooks()
    hooks.add(watch, kinds=(NodeAfter,))
    second = await engine.create(big_agent(3), items=[chat_item("go", "s")], hooks=hooks).run()
    assert first.status == second.status == "success"
    assert seen and set(seen) == {(name, inode)}  # the second execution wrote into the first one's file, not renamed
    assert [(p.name, p.stat().st_ino) for p in journals.iterdir()] == [(name, inode)]
    for state in (first, second):  # each execution's rows are its own
        stored = store.load(state.id)
        assert {name: len(runs) for name, runs in stored.run_data.items()} == {name: len(runs) for name, runs in state.run_data.items()}
    store.close()  # its spare is left for the next store of this process on this file
    again = ExecutionStore(path, retention=Retention())
    third = await Engine(builtin_registry(), store=again).create(big_agent(3), items=[chat_item("go", "s")], hooks=hooks).run()
    assert third.status == "success" and seen[-1] == (name, inode)
    again.close()
    journal_folder.remove_parked()  # as when the process exits
    assert list(journals.iterdir()) == []
    (journals / "999999999.1.0.0.journal").write_bytes(b"")  # a process that is gone
    (journals / "spare.999999999.1.0.journal").write_bytes(b"")  # the same, named as an older layout named spares
    (journals / "spare.x.journal").write_bytes(b"")  # not a name for a process: left alone
    ExecutionStore(path, retention=Retention()).close()
    assert [p.name for p in journals.iterdir()] == ["spare.x.journal"]


async def test_two_stores_of_one_process_on_one_file_keep_their_journals_apart(tmp_path: Path) -> None:
    """Each store keeps its own spare journal: an execution journals into a file no other store writes."""
    from engine.store.journal import read_journal, read_start

    path = tmp_path / "x.sqlite"
    stores = [ExecutionStore(path, retention=Retention()), ExecutionStore(path, retention=Retention())]
    journaled: list[tuple[int, Path, int]] = []  # (store, journal file, boundaries in it), as each node run ends

    def watch(event: object) -> None:
        execution_id = event.execution_id  # type: ignore[attr-defined]
        owner = next(i for i, store in enumerate(stores) if execution_id in store._writers)
        journal = stores[owner]._writers[execution_id].journal.path
        start = read_start(journal)
        assert start is not None and start.execution_id == execution_id  # the file names its execution
        journaled.append((owner, journal, len(read_journal(journal, execution_id).boundaries)))

    for store in (*stores, *stores):
        hooks = Hooks()
        hooks.add(watch, kinds=(NodeAfter,))
        state = await Engine(builtin_registry(), store=store).create(big_agent(3), items=[chat_item("go", "s")], hooks=hooks).run()
        assert state.status == "success"
        store.flush()  # its end folded in: its journal is the store's spare
        assert journaled[-1][2] > 0  # the boundaries before the last node's end are in the execution's own file
    files = [{path for who, path, _count in journaled if who == owner} for owner in range(len(stores))]
    assert [len(paths) for paths in files] == [1, 1] and files[0] != files[1]  # each store: one file of its own
    for store in stores:
        store.close()


def test_at_most_a_few_spare_journals_stay_open_after_their_stores_close(tmp_path: Path) -> None:
    from engine.store.journal import Journal

    journal_folder.remove_parked()  # what earlier tests left
    for i in range(journal_folder.PARKED_MAX + 3):
        journal = Journal(tmp_path / f"e{i}.journal")
        journal.append(b"x")
        journal.empty()
        journal_folder._park(tmp_path / f"folder{i % 2}", journal)
    assert sum(map(len, journal_folder._parked.values())) == journal_folder.PARKED_MAX
    assert len(list(tmp_path.iterdir())) == journal_folder.PARKED_MAX  # the others are closed and removed
    journal_folder.remove_parked()
    assert list(tmp_path.iterdir()) == []


def test_of_two_transactions_in_a_row_that_meet_a_checkpoint_copying_only_the_second_waits(tmp_path: Path) -> None:
    """The writer's thread (in the editor, the one that paints) does not wait for a checkpoint's
    fsyncs when the WAL has been started over since the last such meeting; the next transaction
    that meets one copying waits for it, so the WAL is not kept from starting over twice in a row.
    One that meets none clears the count."""
    from engine.store.wal_checkpointer import WalCheckpointer

    checkpointer = WalCheckpointer(tmp_path / "x.sqlite", 1.0)
    checkpointer._thread = threading.current_thread()  # as if started: wait_copied looks only at the lock
    copying = threading.Event()
    copied = threading.Event()

    def copy() -> None:  # a checkpoint holding the lock until told it is done
        with checkpointer._copying:
            copying.set()
            copied.wait()

    def meet_a_copy() -> threading.Thread:
        copying.clear()
        copied.clear()
        holder = threading.Thread(target=copy, daemon=True)  # daemons: a failing wait does not hang the suite
        holder.start()
        assert copying.wait(10)
        waiter = threading.Thread(target=checkpointer.wait_copied, daemon=True)
        waiter.start()
        return waiter

    for _ in range(2):
        first = meet_a_copy()
        first.join(10)
        assert not first.is_alive()  # went on at once, the copy still under way
        copied.set()
        second = meet_a_copy()
        second.join(0.2)
        assert second.is_alive()  # waits for the copy...
        copied.set()
        second.join(10)
        assert not second.is_alive()  # ...and goes on once it is done
    checkpointer.wait_copied()  # no copy: no wait, and the next meeting is a first again
    lone = meet_a_copy()
    lone.join(10)
    assert not lone.is_alive()
    copied.set()
