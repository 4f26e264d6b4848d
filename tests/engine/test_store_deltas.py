"""What the store writes per boundary is exact: every journaled stack reads back as the stack was
at that boundary, every run as it finished, and the hand-written JSON of entries and runs is
what pydantic's dump of them is."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest

from engine.debugger import Breakpoints, Debugger
from engine.executor import Engine
from engine.json_delta import KEYS, MARK, decode
from engine.registry import builtin_registry
from engine.run_data import ExecutionState, StackEntry, TaskData
from engine.shared_log import plain
import engine.store.sqlite_store as sqlite_store
from engine.store import ExecutionStore
from engine.store.boundary_rows import boundary_row
from engine.store.boundary_state import decode_boundary
from engine.store.codec import StoreDamaged, unpack
from engine.store.deltas import model_item, resolve_references
from engine.store.run_records import RunRecords
from engine.store.sqlite_rows import stored_runs
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call
from tests.engine.test_debugger import drive

REPLIES = [
    {"toolCalls": [tool_call("Calculator", {"input": "6 * 7"}, "c1"), tool_call("Calculator", {"input": "1 +"}, "c2")]},
    *({"toolCalls": [tool_call("Calculator", {"input": f"{i} + 1"}, f"d{i}")]} for i in range(8)),
    {"text": "done"},
]


def entry_reference(entry: StackEntry) -> dict[str, Any]:
    """StackEntry.to_json as pydantic dumps it (the hand-written one must match)."""
    out = entry.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"input", "pending"})
    out["input"] = entry.input
    if entry.pending is not None:
        request = entry.pending.request
        out["pending"] = {
            "request": {"actions": [a.model_dump(mode="json", by_alias=True) for a in request.actions],
                        "metadata": plain(request.metadata)},
            "responses": [{"action": r.action.model_dump(mode="json", by_alias=True), "data": r.data}
                          for r in entry.pending.responses],
        }
    return out


def task_reference(task: TaskData) -> dict[str, Any]:
    out = task.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"input", "data"})
    out["input"] = plain(task.input)
    out["data"] = task.data
    return out


def as_json(value: Any) -> Any:
    return orjson.loads(orjson.dumps(value, default=plain))


async def test_every_journaled_boundary_reads_back_as_the_stack_was(tmp_path: Path, monkeypatch) -> None:
    rows: list[Any] = []  # every boundary row made: journaled, or folded at once with a status change
    original = sqlite_store.boundary_row
    monkeypatch.setattr(sqlite_store, "boundary_row", lambda state, writer: rows.append(original(state, writer)) or rows[-1])
    store = ExecutionStore(tmp_path / "x.sqlite")
    execution = Engine(builtin_registry(), store=store).create(agent_workflow(REPLIES, memory=True), items=[chat_item("go", "s")])
    execution.debugger = Debugger(Breakpoints(after_tool_result=True))  # edits of observations, runs rewritten
    stacks: list[Any] = [as_json([entry.to_json() for entry in execution.state.stack])]  # written when attached
    runs: list[Any] = []
    forward = execution.on_checkpoint
    assert forward is not None

    def checkpoint(state: ExecutionState, at_boundary: bool) -> None:
        for entry in state.stack:
            assert entry.to_json() == entry_reference(entry)
        if at_boundary:
            stacks.append(as_json([entry.to_json() for entry in state.stack]))
        forward(state, at_boundary)

    execution.on_checkpoint = checkpoint
    execution.hooks.add(lambda event: runs.append(as_json(event.task.to_json())) if type(event).__name__ == "NodeAfter" else None)
    edits = iter([{"observation": "forty-two"}] + [None] * 20)
    state, _points = await drive(execution, lambda p: ("continue", next(edits)))
    assert state.status == "success"
    store.flush()  # its end, journaled, into the database read below
    for runs_of_node in state.run_data.values():
        for task in runs_of_node:
            assert task.to_json() == task_reference(task)

    decoded: dict[int, Any] = {}
    read_runs = []
    for seq, _node, _index, base, data, crc in stored_runs(store.connection, state.id):
        value = unpack(data, crc, "run")
        decoded[seq] = value if base is None else decode(value, decoded[base])
        read_runs.append(decoded[seq])
    stack: Any = None
    read_stacks = []
    for _eid, _seq, _runs, _last, base, data, crc in rows:
        value = unpack(data, crc, "boundary")
        stack = value if base is None else decode_boundary(value, stack)
        # answers written as references to their runs, as those runs were then (seq n is the n-th run)
        read_stacks.append(resolve_references(stack, lambda seq: runs[seq - 1]))
    assert read_stacks == stacks
    edited = [as_json(t.to_json()) for t in state.run_data["Calculator"] if "edits" in t.metadata]
    assert len(edited) == 1 and edited[0] in read_runs  # rewritten with its edit
    assert [r for r in read_runs if r not in edited] == [r for r in runs if r["metadata"].get("toolCallId") != "c1"]
    store.close()


def write_every_boundary(monkeypatch) -> None:
    """Boundaries inside an Agent's loop written too, as they are where the loop pauses or a run in
    it cannot be served again on resume (engine.store.loop_boundaries): their deltas are tested on
    every one."""
    monkeypatch.setattr(RunRecords, "may_leave_out_boundary", lambda _records, _fields: False)


async def written_boundaries(tmp_path: Path, monkeypatch) -> tuple[ExecutionStore, ExecutionState, list[tuple[int | None, Any]]]:
    """An agent run of REPLIES with a store: the store, the run, and each boundary row it made
    (journaled, or folded at once with a status change) as its base and its value. Every boundary
    is written, those inside the Agent's loop too (write_every_boundary)."""
    write_every_boundary(monkeypatch)
    rows: list[Any] = []
    original = sqlite_store.boundary_row
    monkeypatch.setattr(sqlite_store, "boundary_row", lambda state, writer: rows.append(original(state, writer)) or rows[-1])
    store = ExecutionStore(tmp_path / "x.sqlite")
    state = await Engine(builtin_registry(), store=store).run(agent_workflow(REPLIES), items=[chat_item("go", "s")])
    assert state.status == "success"
    return store, state, [(base, unpack(data, crc, "boundary")) for *_head, base, data, crc in rows]


async def test_the_boundary_after_a_tool_answers_holds_the_answer_alone(tmp_path: Path, monkeypatch) -> None:
    """After each answer the waiting agent's entry changed only by it: the boundary's delta of that
    entry is the answer (json_delta.changed_keys), not the entry's fields again."""
    store, state, written = await written_boundaries(tmp_path, monkeypatch)
    store.flush()  # its end, journaled, into the database read below
    answered = []
    for base, value in written:
        if base is not None:
            answered += [entry for entry in value if type(entry) is dict and entry.get(MARK) == KEYS
                         and entry["pending"]["request"] == {MARK: "same"}]  # (a new request: the next test)
    calls = sum(len(reply.get("toolCalls", [])) for reply in REPLIES)
    assert len(answered) == calls and calls > 1
    calculator_runs = [row[0] for row in stored_runs(store.connection, state.id) if row[1] == "Calculator"]
    answers = []
    for entry in answered:
        assert set(entry) == {MARK, "pending"} and set(entry["pending"]) == {"request", "responses"}
        assert len(entry["pending"]["responses"]["then"]) == 1
        answers += entry["pending"]["responses"]["then"]
    # each answer is its tool run's seq and its action's place in the request, not the run again
    assert [answer["data"] for answer in answers] == [{MARK: "run", "seq": seq} for seq in calculator_runs]
    places = [at for reply in REPLIES for at, _call in enumerate(reply.get("toolCalls", []))]
    assert [answer["action"] for answer in answers] == [{MARK: "action", "at": at} for at in places]
    store.close()


async def test_an_agent_back_for_its_next_round_is_written_as_what_the_round_changed(tmp_path: Path, monkeypatch) -> None:
    """An Agent's entry back on the stack with its next request: its delta is the round, its model
    usage and the new request (json_delta.changed_keys, engine.store.entry_changes), not its
    node, sources, items and flags again; the first test reads every boundary back whole."""
    store, _state, written = await written_boundaries(tmp_path, monkeypatch)
    rounds = []
    for base, value in written:
        if base is not None:
            rounds += [entry for entry in value if type(entry) is dict and entry.get(MARK) == KEYS
                       and entry["pending"]["request"] != {MARK: "same"}]
    # every request after the first (made with the entry whole) comes as the round's changes
    assert len(rounds) == len([reply for reply in REPLIES if reply.get("toolCalls")]) - 1 > 1
    for entry in rounds:
        assert set(entry) == {MARK, "round", "modelUsage", "pending"} and set(entry["pending"]) == {"request", "responses"}
        assert entry["pending"]["responses"] == []
    store.close()


async def test_a_tool_entry_as_pushed_is_written_as_its_request_action(tmp_path: Path, monkeypatch) -> None:
    """The entries the engine pushes for a request's tool calls are written as the place of their
    action in the request (deltas.requested_entry), not as the action, its input and the agent's
    fields again; they read back whole (the first test reads every boundary back)."""
    store, _state, rows = await written_boundaries(tmp_path, monkeypatch)
    written = [value for _base, value in rows]
    references = [entry for value in written for entry in value if type(entry) is dict and entry.get(MARK) == "requested"]
    # each tool call once, where it was pushed (the first call on top: last); later boundaries keep it as it was (SAME)
    pushed = [at for reply in REPLIES for at in reversed(range(len(reply.get("toolCalls", []))))]
    assert [entry["at"] for entry in references] == pushed and len(pushed) > 1
    assert not [entry for value in written for entry in value if type(entry) is dict and entry.get("mode") == "tool"]
    store.close()


async def test_a_folded_group_keeps_only_its_last_boundary_and_resumes_from_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("engine.store.sqlite_store.FOLD_EVERY", 3)
    monkeypatch.setattr("engine.store.boundary_rows.DELTAS_PER_WHOLE", 4)
    store = ExecutionStore(tmp_path / "x.sqlite")
    execution = Engine(builtin_registry(), store=store).create(agent_workflow(REPLIES), items=[chat_item("go", "s")])
    execution.debugger = Debugger(Breakpoints(before_tool=True))
    seen: list[Any] = []
    forward = execution.on_checkpoint
    assert forward is not None

    def checkpoint(state: ExecutionState, at_boundary: bool) -> None:
        if at_boundary:
            seen.append(copy.deepcopy(as_json([e.to_json() for e in state.stack])))
        forward(state, at_boundary)

    execution.on_checkpoint = checkpoint
    stored: list[tuple[Any, Any]] = []

    def at_pause(point: dict[str, Any]) -> tuple[str, None]:  # each pause folds what was journaled
        stored.append((as_json([e.to_json() for e in store.load(execution.state.id).stack]), seen[-1]))
        return "continue", None

    state, points = await drive(execution, at_pause)
    assert state.status == "success" and len(points) == 10
    assert all(read == expected for read, expected in stored)
    rows = store.connection.execute("SELECT base FROM boundaries WHERE execution_id=? ORDER BY seq", (state.id,)).fetchall()
    assert rows[0][0] is None and len(rows) <= 4  # a whole row, then at most DELTAS_PER_WHOLE - 1 deltas
    store.close()


async def test_edited_tool_arguments_are_in_the_next_boundary_of_the_waiting_agent_too(tmp_path: Path) -> None:
    """An edit at a before_tool pause changes the tool's entry and the action in the agent's
    request (the same Action): the stack stored at the next boundary holds the edit in both
    (checked against the stack made whole, as at every boundary in tests)."""
    store = ExecutionStore(tmp_path / "x.sqlite")
    execution = Engine(builtin_registry(), store=store).create(agent_workflow(REPLIES), items=[chat_item("go", "s")])
    execution.debugger = Debugger(Breakpoints(before_tool=True))

    def at_pause(point: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        return "continue", {"args": {"input": "100 + 1"}} if point.get("toolCallId") == "d3" else None

    state, _points = await drive(execution, at_pause)
    assert state.status == "success"
    assert state.run_data["Calculator"][5].data["ai_tool"][0][0]["json"] == {"response": "101"}
    store.close()


def test_a_stack_entry_changed_without_touch_is_caught(tmp_path: Path) -> None:
    """The store writes an unchanged entry's JSON again only when its revision moved; tests check
    every boundary against the stack made whole, and a change made without touch() fails it."""
    from engine.store.journal import Journal
    from engine.store.sqlite_rows import WriterState
    from engine.workflow import parse_workflow

    store = ExecutionStore(tmp_path / "x.sqlite")
    state = ExecutionState(workflow=parse_workflow({"name": "w", "nodes": [], "connections": {}}, "w"),
                           stack=[StackEntry(node="A"), StackEntry(node="B")])
    writer = WriterState(journal=Journal(tmp_path / "j"), run_seq=0)
    boundary_row(state, writer)
    row = boundary_row(state, writer)
    assert unpack(row[5], row[6], "boundary") == [{"\u2063delta": "same"}] * 2  # nothing changed: nothing rewritten
    state.stack[1].round = 3
    state.stack[1].touch()
    row = boundary_row(state, writer)
    assert decode_boundary(unpack(row[5], row[6], "boundary"), as_json(writer.stack))[1]["round"] == 3
    state.stack[0].round = 5  # no touch()
    try:
        boundary_row(state, writer)
    except AssertionError as exc:
        assert "touch" in str(exc)
    else:
        raise AssertionError("an untouched change was not caught")
    store.close()


async def test_a_journal_left_by_a_killed_process_reads_back_as_the_stack_at_its_last_boundary(tmp_path: Path, monkeypatch) -> None:
    """Whoever opens the file after its owner was killed folds the journal in: the execution reads
    back with the stack of its last journaled boundary and resumes to the same result. A
    journal already folded when its owner died (not yet emptied) is folded again harmlessly."""
    import shutil
    import sqlite3

    monkeypatch.setattr("engine.store.sqlite_store.FOLD_AFTER_S", 1e9)  # nothing folded while it runs
    write_every_boundary(monkeypatch)  # the agent's loop's too: the stack is read back at each
    store = ExecutionStore(tmp_path / "x.sqlite")
    execution = Engine(builtin_registry(), store=store).create(agent_workflow(REPLIES), items=[chat_item("go", "s")])
    forward = execution.on_checkpoint
    assert forward is not None
    boundaries: list[Any] = []
    snapshots: list[tuple[Path, Any]] = []

    def snapshot(name: str, stack: Any) -> None:  # the file and journal as a SIGKILL would leave them
        copy_path = tmp_path / name / "x.sqlite"
        (copy_path.parent / "x.sqlite-boundaries").mkdir(parents=True)
        with sqlite3.connect(copy_path) as target:
            store.connection.backup(target)
        journal = store._writers[execution.state.id].journal.path
        shutil.copy(journal, copy_path.parent / "x.sqlite-boundaries" / journal.name)
        snapshots.append((copy_path, stack))

    def checkpoint(state: ExecutionState, at_boundary: bool) -> None:
        forward(state, at_boundary)
        if at_boundary:
            boundaries.append(as_json([e.to_json() for e in state.stack]))
            if len(boundaries) == 7:  # a tool answered: its answer names the run journaled with it
                snapshot("killed", boundaries[-1])
            if len(boundaries) == 9:
                writer = store._writers[state.id]
                journal = writer.journal.path.read_bytes()
                store._fold(writer)
                snapshot("folded", boundaries[-1])
                writer.journal.path.write_bytes(journal)  # killed before the journal was emptied
                shutil.copy(writer.journal.path, snapshots[-1][0].parent / "x.sqlite-boundaries")
                writer.journal.empty(writer.head)

    execution.on_checkpoint = checkpoint
    state = await execution.run()
    assert state.status == "success"
    store.close()
    # its owner is gone: this process, named as the owner by the row (the folded copy) or by the
    # journal's start record alone (the killed copy: nothing of it folded yet)
    for module in ("sqlite_store", "sqlite_lease", "journal_folder"):
        monkeypatch.setattr(f"engine.store.{module}.same_process_alive", lambda pid, started: False)
    for copy_path, expected in snapshots:
        with sqlite3.connect(copy_path) as db:
            assert db.execute("SELECT COUNT(*) FROM executions WHERE id=?", (state.id,)).fetchone()[0] == (copy_path.parent.name == "folded")
        found = ExecutionStore(copy_path)
        assert found.mark_crashed() == [] and found.load(state.id).status == "crashed"  # marked when opened
        assert as_json([e.to_json() for e in found.load(state.id).stack]) == expected
        resumed = await Engine(builtin_registry(), store=found).resume(state.id).run()
        assert resumed.status == "success" and resumed.result == state.result
        found.close()


async def test_an_answer_edited_after_its_boundary_resumes_as_it_was_given(tmp_path: Path, monkeypatch) -> None:
    """A boundary writes a tool's answer as a reference to the tool's run. The observation edited
    at the pause after that boundary rewrites the run: the stored boundary is written again with
    the run as it was, so an execution killed before its next boundary resumes with the answer
    the agent was given, and the run reads back edited."""
    store = ExecutionStore(tmp_path / "x.sqlite")
    loaded: list[ExecutionState] = []
    update = ExecutionStore._update_run

    def updated(self: ExecutionStore, execution_id: str, writer: Any, event: Any) -> None:
        update(self, execution_id, writer, event)
        loaded.append(self.load(execution_id, for_resume=True))  # what a process resuming it after a kill here reads

    monkeypatch.setattr(ExecutionStore, "_update_run", updated)
    execution = Engine(builtin_registry(), store=store).create(agent_workflow(REPLIES), items=[chat_item("go", "s")])
    execution.debugger = Debugger(Breakpoints(after_tool_result=True))
    edits = iter([{"observation": "forty-two"}] + [None] * 20)
    state, _points = await drive(execution, lambda p: ("continue", next(edits)))
    assert state.status == "success" and len(loaded) == 1
    waiting = [entry for entry in loaded[0].stack if entry.pending is not None]
    assert len(waiting) == 1 and [r.action.id for r in waiting[0].pending.responses] == ["c1"]
    answer = waiting[0].pending.responses[0].data
    assert answer["data"] == {"ai_tool": [[{"json": {"response": "42"}}]]} and "edits" not in answer["metadata"]
    assert [edit["new"] for edit in loaded[0].run_data["Calculator"][0].metadata["edits"]] == ["forty-two"]
    store.close()


def test_an_answer_referring_to_a_run_not_stored_reads_as_damage(tmp_path: Path) -> None:
    """Answers written as references read back from the run and the action they name; one that
    names a run or an action that is not there, or a tool's entry whose request is not there, is
    reported as damage, naming the execution."""
    store = ExecutionStore(tmp_path / "x.sqlite")

    def waiting(at: int, seq: int) -> dict[str, Any]:
        return {"node": "AI Agent", "pending": {"request": {"actions": [{"id": "c1"}], "metadata": {}},
                                                "responses": [{"action": {MARK: "action", "at": at}, "data": {MARK: "run", "seq": seq}}]}}

    run = {"data": {"ai_tool": [[{"json": {"response": "42"}}]]}}
    read = store._references_resolved("e1", [waiting(0, 9)], [(9, "Calculator", 0, run)])
    assert read[0]["pending"]["responses"] == [{"action": {"id": "c1"}, "data": run}]
    lone_tool = {MARK: "requested", "at": 0}  # a tool's entry whose request is not below it
    for entries, says in (([waiting(0, 8)], "refers to run 8, which is not stored"), ([waiting(3, 9)], "holds a reference that cannot be read"),
                          ([lone_tool], "holds a reference that cannot be read"), ([waiting(0, 9), {MARK: "requested", "at": 2}], "cannot be read")):
        with pytest.raises(StoreDamaged, match=says) as raised:
            store._references_resolved("e1", entries, [(9, "Calculator", 0, run)])
        assert "execution e1" in str(raised.value)
    store.close()


@pytest.mark.parametrize("inputs", [
    {"ai_languageModel": [[{"json": {"messages": []}}]]},
    {"ai_languageModel": [({"json": {}},)]},  # any sequence of one sequence of one item
])
def test_a_model_runs_one_item_is_found(inputs: Any) -> None:
    item = model_item(inputs)
    assert item is not None and item["json"] == inputs["ai_languageModel"][0][0]["json"]


@pytest.mark.parametrize("inputs", [
    None, [], {}, {"main": [[{"json": {}}]]},
    {"ai_languageModel": [[{"json": {}}]], "main": [[{"json": {}}]]},  # another input beside it: walked whole
    {"ai_languageModel": []}, {"ai_languageModel": [[]]}, {"ai_languageModel": [[{"json": {}}, {"json": {}}]]},
    {"ai_languageModel": [[{"json": {}}], [{"json": {}}]]}, {"ai_languageModel": [{"json": {}}]},
    {"ai_languageModel": "x"}, {"ai_languageModel": {"a": 1}}, {"ai_languageModel": 3}, {"ai_languageModel": b"ab"},
    {"ai_languageModel": [[{"json": "text"}]]}, {"ai_languageModel": [[{"binary": {}}]]},
])
def test_any_other_input_is_no_model_item(inputs: Any) -> None:
    assert model_item(inputs) is None
