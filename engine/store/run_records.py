"""The node runs an attached execution finished since its last write, as rows, and the JSON the
next deltas of its model and memory runs are made from: the same for every store back end."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..connection_types import AI_LANGUAGE_MODEL, AI_MEMORY
from ..hooks import NodeAfter, RunUpdated
from .codec import pack
from .deltas import model_item, run_delta
from .journal import RunRow


def carries_conversation(task: dict[str, Any]) -> bool:
    """Model and memory runs repeat the conversation so far: only they are worth a delta."""
    inputs = task.get("input") or {}
    return AI_LANGUAGE_MODEL in inputs or AI_MEMORY in inputs


@dataclass(kw_only=True)
class RunRecords:
    """Run rows not yet written, their sequence numbers, and each node's latest model or memory
    run (the base of its next delta; shared with live run data, so treat it as read-only)."""

    run_seq: int
    new_runs: list[RunRow] = field(default_factory=list)  # finished since the last checkpoint
    # seq -> the task JSON of each node's latest such run, and its model item (deltas.model_item)
    conversations: dict[int, tuple[dict[str, Any], dict[str, Any] | None]] = field(default_factory=dict)
    last_conversation: dict[str, int] = field(default_factory=dict)  # node -> seq of its latest such run
    seq_of: dict[tuple[str, int], int] = field(default_factory=dict)  # (node, run index) -> seq
    # tool runs since the last boundary whose JSON is a waiting request's answer: (that JSON, seq)
    answers: list[tuple[dict[str, Any], int]] = field(default_factory=list)

    def add_run(self, execution_id: str, event: NodeAfter) -> None:
        """A finished run as a row: a model or memory run as a delta from its node's run before."""
        self.run_seq += 1
        seq = self.run_seq
        task = event.answer
        if task is None:
            task = event.task.to_json(for_store=True)
        else:  # the JSON handed to the request it answers: written once, the answer refers to it
            self.answers.append((task, seq))
        if carries_conversation(task):
            item = model_item(task["input"])
            base = self.last_conversation.get(event.node)
            if base is None:
                data, crc = pack(task)
            else:
                before, was = self.conversations[base]
                data, crc = pack(run_delta(task, before, item, was))
                del self.conversations[base]  # the next delta of this node's runs is made from this one
            self.conversations[seq] = (task, item)
            self.last_conversation[event.node] = seq
        else:
            base = None
            data, crc = pack(task)
        self.new_runs.append((execution_id, seq, event.node, event.run_index, base, data, crc))
        self.seq_of[(event.node, event.run_index)] = seq

    def edit_run(self, event: RunUpdated) -> tuple[bytes, int]:
        """A run edited while paused, written whole (later deltas build on the edit): its row
        data and crc, and the row still waiting to be written made so too."""
        task = event.task.to_json(for_store=True)
        data, crc = pack(task)
        seq = self.seq_of.get((event.node, event.run_index))
        self.answers = [(json, answered) for json, answered in self.answers if answered != seq]  # no answer refers to it now
        for i, run in enumerate(self.new_runs):  # not written yet: edit it there
            if run[1] == seq:
                self.new_runs[i] = (*run[:4], None, data, crc)
        if seq in self.conversations:
            self.conversations[seq] = (task, model_item(task["input"]))
        return data, crc
