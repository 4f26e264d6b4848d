"""The batch row a fold writes, made from the runs as they were journaled, is the record the fold
would pack from the runs, byte for byte; a fold whose runs are not all in the batch packs them."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from zlib_ng.zlib_ng import crc32

import engine.store.sqlite_rows as sqlite_rows
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.store import ExecutionStore
from engine.store.journal import Pending, decode_records, encode_record, salt
from engine.store.run_batch import RunBatch
from engine.store.sqlite_rows import stored_runs
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call

names = st.text(min_size=1, max_size=12)
runs = st.lists(st.tuples(names, st.integers(0, 50), st.one_of(st.none(), st.integers(0, 10**6)), st.binary(max_size=300)),
                min_size=1, max_size=12)
records = st.lists(runs, min_size=1, max_size=6)  # the runs of each journal record, in turn


@settings(max_examples=200, deadline=None)
@given(records, st.text(min_size=1, max_size=16), st.booleans())
def test_the_gathered_batch_is_the_packed_record(grouped: list[list[tuple[str, int, int | None, bytes]]], execution_id: str,
                                                with_boundary: bool) -> None:
    seed = salt(execution_id)
    batch = RunBatch()
    rows = []
    seq = 0
    for group in grouped:
        record = []
        for node, run_index, base, data in group:
            seq += 1
            record.append((execution_id, seq, node, run_index, base, data, crc32(data)))
        boundary = (execution_id, seq, seq, "Agent", None, b"[]", 7) if with_boundary else None
        encode_record(record, boundary, seed, batch)
        rows += record
    assert batch.holds(1, seq, len(rows))
    made = batch.record(seed)
    assert made == encode_record(rows, None, seed)
    assert decode_records(execution_id, made).runs == rows


async def test_a_fold_writes_the_gathered_batch_and_packs_a_partial_one(tmp_path: Path, monkeypatch) -> None:
    """An agent's run folds its runs from the gathered batch (none packed again); they read back
    as they were. A fold whose runs the batch does not hold packs them, as before."""
    packed: list[int] = []
    original = sqlite_rows.encode_record
    monkeypatch.setattr(sqlite_rows, "encode_record", lambda runs, *rest: packed.append(len(runs)) or original(runs, *rest))
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} * 2"})]} for i in range(6)] + [{"text": "done"}]
    store = ExecutionStore(tmp_path / "x.sqlite")
    state = await Engine(builtin_registry(), store=store).run(agent_workflow(replies), items=[chat_item("go", "s")])
    assert state.status == "success"
    store.flush()
    rows = stored_runs(store.connection, state.id)
    assert sorted(row[1] for row in rows) == sorted(node for node, tasks in state.run_data.items() for _task in tasks)
    assert packed == []
    journaled = [(state.id, row[0], row[1], row[2], row[3], bytes(row[4]), row[5]) for row in rows]
    partial = RunBatch()
    encode_record(journaled[:2], None, salt(state.id), partial)  # the batch holds two of them
    store.connection.execute("BEGIN")
    sqlite_rows.apply_rows(store.connection, state.id, Pending(runs=journaled), batch=partial)
    store.connection.execute("COMMIT")
    assert packed == [len(journaled)]
    assert stored_runs(store.connection, state.id) == rows
    store.close()
