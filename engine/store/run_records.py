"""The node runs an attached execution finished since its last write, as rows, and the JSON the
next deltas of its model and memory runs are made from: the same for every store back end."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..connection_types import AI_LANGUAGE_MODEL, AI_MEMORY
from ..hooks import NodeAfter, RunUpdated
from ..resume_runs import servable
from ..run_data import StackEntry
from ..shared_log import LogWindow
from .codec import pack
from .deltas import model_item, run_delta
from .journal import RunRow
from .loop_boundaries import LoopAnchor, inside_loop, loop_anchor


def conversation_of(node: str, item: dict[str, Any] | None) -> tuple[Any, ...]:
    """Which conversation a model run serves: its node's, with the lineage of the message log its
    messages are a window on (engine.shared_log). An Agent with several items holds their
    conversations side by side and calls its model for each in turn (n8n's v3 Agent gives an item
    after the first a log taken up from an earlier point each round, of the same lineage): a
    delta from the node's run before, another item's, would repeat the whole conversation."""
    messages = item["json"].get("messages") if item is not None else None
    if type(messages) is LogWindow:
        return (node, messages.log.lineage)
    return (node,)


CONVERSATIONS_KEPT = 1024
"""Conversations whose latest run an execution's writer keeps as the base of the next delta; past
this, the one written to longest ago is dropped (its next run is written from the node's latest)."""


@dataclass(kw_only=True)
class RunRecords:
    """Run rows not yet written, their sequence numbers, and the latest model or memory run of each
    conversation (the base of its next delta; shared with live run data, so treat it as read-only)."""

    run_seq: int
    new_runs: list[RunRow] = field(default_factory=list)  # finished since the last checkpoint
    # conversation (conversation_of) -> the seq, task JSON and model item (deltas.model_item) of its latest run
    conversations: dict[tuple[Any, ...], tuple[int, dict[str, Any], dict[str, Any] | None]] = field(default_factory=dict)
    last_conversation: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # node -> its latest run's conversation
    seq_of: dict[tuple[str, int], int] = field(default_factory=dict)  # (node, run index) -> seq
    # tool runs since the last boundary whose JSON is a waiting request's answer: (that JSON, seq)
    answers: list[tuple[dict[str, Any], int]] = field(default_factory=list)
    loop: LoopAnchor | None = None  # the Agent waiting on a request at the last boundary written (loop_boundaries)
    loop_servable: bool = False  # every run since that boundary can be served again on resume
    # resumed: runs kept after the boundary it resumed from, not served again yet (engine.resume_runs);
    # the stack a boundary holds accounts for the runs up to run_seq - ahead
    ahead: int = 0

    def boundary_written(self, stack: list[StackEntry]) -> None:
        """A boundary with `stack` was written: the loop it anchors, if any, starts from it."""
        self.loop = loop = loop_anchor(stack)
        self.loop_servable = loop is not None

    def may_leave_out_boundary(self, fields: dict[str, Any]) -> bool:
        """Whether a boundary of the execution (its state's __dict__) can be left out: still in the
        loop of the last one written, every run since servable (engine.store.loop_boundaries)."""
        loop = self.loop
        return self.loop_servable and loop is not None and inside_loop(fields, loop)

    def add_run(self, execution_id: str, event: NodeAfter) -> None:
        """A finished run as a row: a model or memory run (they repeat the conversation so far:
        only they are worth a delta) as a delta from the run before it in its conversation
        (conversation_of), else from its node's latest."""
        if event.served:  # its row is kept: the next of those after the boundary resumed from
            seq = self.run_seq - self.ahead + 1
            self.ahead -= 1
            self.seq_of[(event.node, event.run_index)] = seq
            if event.answer is not None:
                self.answers.append((event.answer, seq))
            return
        seq = self.run_seq = self.run_seq + 1
        task = event.answer
        base = None
        if task is not None:  # a tool's run (input ai_tool): the JSON handed to the request it answers, written once
            self.answers.append((task, seq))
            data, crc = pack(task)
        else:
            task = event.task.to_json(for_store=True)
            inputs = task["input"]
            if AI_LANGUAGE_MODEL in inputs or AI_MEMORY in inputs:
                base, data, crc = self._in_conversation(event.node, seq, task, inputs)
            else:
                data, crc = pack(task)
        self.new_runs.append((execution_id, seq, event.node, event.run_index, base, data, crc))
        self.seq_of[(event.node, event.run_index)] = seq
        loop = self.loop
        if self.loop_servable and loop is not None:
            self.loop_servable = servable(task, loop.agent)

    def _in_conversation(self, node: str, seq: int, task: dict[str, Any], inputs: Any) -> tuple[int | None, bytes, int]:
        """The base, data and crc of model or memory run `seq` (`task`, its input `inputs`), now
        the latest of its conversation."""
        item = model_item(inputs)
        conversation = conversation_of(node, item)
        conversations = self.conversations
        # the conversation's run before, else the node's latest (an Agent's next run, another item's first call)
        before = conversations.pop(conversation, None) or conversations.get(self.last_conversation.get(node, ()))
        conversations[conversation] = (seq, task, item)  # kept in the order last written to
        if len(conversations) > CONVERSATIONS_KEPT:
            del conversations[next(iter(conversations))]
        self.last_conversation[node] = conversation
        if before is None:
            return None, *pack(task)
        return before[0], *pack(run_delta(task, before[1], item, before[2]))

    def edit_run(self, event: RunUpdated) -> tuple[bytes, int]:
        """A run edited while paused, written whole (later deltas build on the edit): its row
        data and crc, and the row still waiting to be written made so too."""
        self.loop_servable = False  # the loop's runs are no longer as they were made: the next boundary is written
        task = event.task.to_json(for_store=True)
        data, crc = pack(task)
        seq = self.seq_of.get((event.node, event.run_index))
        self.answers = [(json, answered) for json, answered in self.answers if answered != seq]  # no answer refers to it now
        for i, run in enumerate(self.new_runs):  # not written yet: edit it there
            if run[1] == seq:
                self.new_runs[i] = (*run[:4], None, data, crc)
        for conversation, (latest, _task, _item) in self.conversations.items():
            if latest == seq:
                self.conversations[conversation] = (seq, task, model_item(task["input"]))
                break
        return data, crc
