"""What a boundary writes: the resumable stack's JSON, whole and as a delta from the last
boundary's (made together, an unchanged entry costing a comparison), its journal row, and the one
row a fold writes for a group of journaled boundaries."""

from __future__ import annotations

from typing import Any

from ..json_delta import SAME
from ..run_data import ExecutionState
from .boundary_state import decode_boundary, joined, split, state_delta, state_json
from .codec import pack, unpack
from .deltas import answer_json, answered_delta, entry_delta, requested_entry, resolve_references, stack_delta
from .entry_changes import changed_entry, kept_fields
from .journal import BoundaryRow
from .sqlite_rows import WriterState

DELTAS_PER_WHOLE = 64  # boundary rows in the database after a whole one, at most
CHECK_STACKS = False  # tests: each boundary's stack JSON is also made whole and compared


def stack_json(state: ExecutionState, writer: WriterState) -> tuple[Any, Any]:
    """StackEntry.to_json(for_store=True) of each entry, and the stack as a delta from the last
    boundary's (None the first time), made together: an entry at the same place, of the same
    revision and with the same pending request keeps its JSON (SAME in the delta), with the
    answers added since appended (only those in the delta); a tool's entry as the engine pushed
    it for a request is a reference to the request's action (deltas.requested_entry); one back
    at its place after another run of its node is made from its JSON before with what such a
    run changes (engine.store.entry_changes); only the other entries are made again and
    compared. With the execution's waiting runs and node context when it has any
    (engine.store.boundary_state)."""
    before, seen, answers = writer.stack, writer.seen, writer.answers
    if type(before) is dict:  # it held waiting runs or node context
        before, before_state = split(before)
    else:
        before_state = None
    known = min(len(before), len(seen)) if before is not None else 0
    marks: list[tuple[Any, int, Any, int, Any]] = []
    stack: list[dict[str, Any]] = []
    delta: list[Any] | None = [] if before is not None else None
    actions = None  # those of the request of the nearest entry so far that waits on one
    # the models' fields are read from __dict__: each attribute goes through pydantic's __getattr__ hook
    for i, entry in enumerate(state.__dict__["stack"]):
        fields = entry.__dict__
        pending = fields["pending"]
        responses = pending.__dict__["responses"] if pending is not None else ()
        answered = len(responses)
        revision = fields["revision"]
        if i < known:
            assert before is not None and delta is not None
            was, old = seen[i], before[i]
            if was[0] is entry and was[1] == revision and was[2] is pending and was[3] <= answered:
                marks.append((entry, revision, pending, answered, was[4]))
                if was[3] == answered:
                    stack.append(old)
                    delta.append(SAME)
                    if pending is not None:
                        actions = pending.__dict__["request"].__dict__["actions"]
                    continue
                actions = pending.__dict__["request"].__dict__["actions"]
                if answered == was[3] + 1:  # one answer since (a frame for a comprehension costs more)
                    added = [answer_json(responses[-1], actions, answers)]
                else:
                    added = [answer_json(r, actions, answers) for r in responses[was[3]:]]
                new = dict(old)
                waiting = new["pending"] = dict(old["pending"])
                waiting["responses"] = [*waiting["responses"], *added]
                stack.append(new)
                delta.append(answered_delta(was[3], added))
                continue
            changed = changed_entry(entry, old, was[4]) if was[0] is entry else None
            if changed is not None:  # back after another run of its node (an Agent's next round)
                new, change = changed
                marks.append((entry, revision, pending, answered, was[4]))
                delta.append(change)
            else:
                new = requested_entry(entry, actions)
                if new is None:
                    new = entry.to_json(for_store=True)
                    delta.append(entry_delta(new, old))
                else:
                    delta.append(new)
                marks.append((entry, revision, pending, answered, kept_fields(entry)))
            stack.append(new)
        else:
            new = requested_entry(entry, actions) or entry.to_json(for_store=True)
            marks.append((entry, revision, pending, answered, kept_fields(entry)))
            stack.append(new)
            if delta is not None:
                delta.append(new)
        if pending is not None:
            actions = pending.__dict__["request"].__dict__["actions"]
    writer.seen = marks
    if answers:
        referenced = writer.referenced
        for _json, seq in answers:
            referenced.add(seq)
        if CHECK_STACKS:
            writer.checked_answers.update((seq, json) for json, seq in answers)
        answers.clear()  # a run answers at the boundary after it, or is written whole
    fields = state.__dict__
    whole_stack: Any = stack
    kept = None
    if fields["waiting"] or fields["node_context"]:  # Merge's waiting runs, a loop's place (usually neither)
        kept = state_json(fields)
        whole_stack = joined(stack, kept)
        if delta is not None:
            delta = joined(delta, state_delta(kept, before_state))
    if CHECK_STACKS:
        whole = pack(joined([entry.to_json(for_store=True) for entry in state.stack], kept))[0]
        if pack(_resolved_for_check(whole_stack, writer))[0] != whole:
            raise AssertionError(f"execution {state.id}: a stack entry changed without StackEntry.touch()")
        decoded = decode_boundary(unpack(*pack(delta), "delta"), unpack(*pack(writer.stack), "before")) if delta is not None else None
        if decoded is not None and pack(_resolved_for_check(decoded, writer))[0] != whole:
            raise AssertionError(f"execution {state.id}: a boundary's delta does not decode to its stack")
    return whole_stack, delta


def _resolved_for_check(boundary: Any, writer: WriterState) -> Any:
    """CHECK_STACKS: a boundary with the answers it refers to made whole (as load does)."""
    stack, kept = split(boundary)
    return joined(resolve_references(stack, writer.checked_answers.__getitem__), kept)


def boundary_row(state: ExecutionState, writer: WriterState) -> BoundaryRow:
    """The boundary's journal row: the stack as a delta from the previous boundary's (whole the
    first time in each process). A delta is also what keeps the journal write small:
    appending a few KB costs several times what 1.5 KB does."""
    stack, delta = stack_json(state, writer)
    seq = writer.boundary_seq = writer.boundary_seq + 1
    if delta is None:
        data, crc = pack(stack)
        base = None
    else:
        data, crc = pack(delta)
        base = seq - 1
    writer.stack = stack
    fields = state.__dict__
    writer.boundary_written(fields["stack"])
    return (fields["id"], seq, writer.run_seq - writer.ahead, fields["last_node"], base, data, crc)


def folded_boundary(writer: WriterState, boundaries: list[BoundaryRow]) -> BoundaryRow:
    """The one row a fold writes for the journaled `boundaries`: the last of them (resuming
    needs only that), as a delta from the last row in the database, or whole once
    DELTAS_PER_WHOLE deltas follow the last whole row there."""
    eid, seq, runs, last_node, base, data, crc = boundaries[-1]
    if base is not None and (writer.deltas_folded + 1 >= DELTAS_PER_WHOLE or writer.folded_stack is None):
        data, crc = pack(writer.stack)
        base = None
    elif base is not None and len(boundaries) > 1:
        assert writer.stack is not None and writer.folded_stack is not None
        now, kept = split(writer.stack)
        then, kept_then = split(writer.folded_stack)
        data, crc = pack(joined(stack_delta(now, then), state_delta(kept, kept_then)))
        base = writer.folded_seq
    return (eid, seq, runs, last_node, base, data, crc)
