"""Intermediate steps rebuilt from node_after events: one row per tool call, one per final answer.

The editor's steps table and `mini-n8n executions show` both read them from here.

The rows come from the recorded runs (model calls and tool runs), not from the Agent's
`intermediateSteps` output, so they fill live and show what the Agent option hides. A nested
agent's rows sit right under the outer tool call that ran it, one level deeper.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .connection_types import AI_LANGUAGE_MODEL, AI_TOOL, MAIN
from .hooks import NodeAfter
from .observation import observation as tool_observation, readable
from .run_data import TaskData
from .run_log import compact

FINAL_ANSWER = "final answer"
MODEL_ERROR = "model error"
MODEL_ERROR_FALLBACK = "model error → fallback"  # a failed call the Agent's Fallback Model answered
AGENT_ERROR = "agent error"

Scope = tuple[Any, ...]
"""Identifies one agent run: (agent node, run index, scope of the tool call that ran it or None)."""


def _scope(meta: dict[str, Any] | None) -> Scope | None:
    """The scope of the agent named in `meta` (a model call's or tool run's metadata)."""
    if not meta:
        return None
    outer = meta.get("parent")
    return (meta.get("node"), meta.get("runIndex"), _call_key(outer) if outer else None)


def _call_key(meta: dict[str, Any]) -> tuple[Any, ...]:
    """The key of the tool call `meta` describes: its agent's scope and the call id."""
    return (_scope(meta), meta.get("toolCallId"))


def _iterations(meta: dict[str, Any] | None) -> tuple[int, ...]:
    path: list[int] = []
    while meta:
        path.append(int(meta.get("iteration", 0) or 0))
        meta = meta.get("parent")
    return tuple(reversed(path))


def _first_item(task: TaskData, conn: str, where: str = "data") -> Any:
    outputs = getattr(task, where).get(conn) or [[]]
    items = outputs[0] if outputs else []
    return items[0].get("json", {}) if items else None


def _shown(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else compact(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(eq=False)
class StepRow:
    """One row of the Intermediate steps table."""

    iterations: tuple[int, ...]
    item: int
    agent: str
    tool: str
    kind: str  # "tool", "answer", "model-error", "agent-error"
    depth: int = 0
    tool_call_id: str = ""
    tool_input: Any = None
    observation: str = ""
    status: str = "pending"  # pending, ok, error, not run, cancelled
    tool_ms: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    model_ms: float | None = None
    tool_node: str | None = None
    model_task: TaskData | None = None
    tool_task: TaskData | None = None
    index: int = -1  # position in the book's rows
    key: tuple[Any, ...] = field(default=())
    edited_from: str | None = None  # the tool's own observation when the user edited it while paused
    edits: list[dict[str, Any]] = field(default_factory=list)  # edits made while paused: {what, original, new}

    @property
    def iteration_text(self) -> str:
        return " › ".join(str(i) for i in self.iterations)

    @property
    def failed(self) -> bool:
        return self.status in ("error", "not run", "cancelled")

    def edited(self, what: str) -> bool:
        return any(e.get("what") == what for e in self.edits)

    def edits_text(self) -> str:
        """Each edit made while paused, original and new value (the table's hover text)."""
        names = {"toolInput": "tool input", "observation": "observation", "reply": "model reply"}
        lines = ["Edited while paused:"]
        for e in self.edits:
            lines.append(f"{names.get(str(e.get('what')), e.get('what'))}: {_shown(e.get('original'))}  →  {_shown(e.get('new'))}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The row as plain JSON (Copy row, JSON export)."""
        return {
            "iteration": list(self.iterations) if len(self.iterations) > 1 else self.iterations[-1],
            "item": self.item,
            "agent": self.agent,
            "tool": self.tool,
            "toolCallId": self.tool_call_id or None,
            "toolInput": self.tool_input,
            "observation": self.observation,
            "status": self.status,
            "toolMs": _round(self.tool_ms),
            "tokensIn": self.tokens_in,
            "tokensOut": self.tokens_out,
            "modelMs": _round(self.model_ms),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


CSV_FIELDS = ["iteration", "item", "agent", "tool", "toolCallId", "toolInput", "observation", "status",
              "toolMs", "tokensIn", "tokensOut", "modelMs"]


def rows_to_csv(rows: list[StepRow]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        data = row.to_json()
        data["iteration"] = row.iteration_text
        data["toolInput"] = "" if row.tool_input is None else compact(row.tool_input)
        writer.writerow({k: "" if v is None else v for k, v in data.items()})
    return out.getvalue()


def rows_to_json(rows: list[StepRow]) -> str:
    return json.dumps([row.to_json() for row in rows], ensure_ascii=False, indent=2)


def rows_to_text(rows: list[StepRow], width: int = 48) -> str:
    """The table as fixed-width text for a terminal; `✎` marks a row edited while paused."""
    def cut(text: str) -> str:
        first = text.splitlines()[0] if text else ""
        return first if len(first) <= width else first[: width - 1] + "…"

    header = ("iter", "item", "tool", "input", "observation", "status", "tokens in/out")
    table = [header]
    for row in rows:
        tokens = "" if row.tokens_in is None else f"{row.tokens_in}/{row.tokens_out}"
        tool = "  " * row.depth + row.tool + (" ✎" if row.edits else "")
        shown_input = "" if row.tool_input is None else compact(row.tool_input)
        table.append((row.iteration_text, str(row.item), tool, cut(shown_input), cut(row.observation), row.status, tokens))
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(line)).rstrip() for line in table]
    for row in rows:
        if row.edits:
            lines.append(f"✎ {row.iteration_text} {row.tool}: " + row.edits_text().replace("\n", "; "))
    return "\n".join(lines)


def steps_of(events: list[NodeAfter], finished: bool = True) -> list[StepRow]:
    """The rows of a stored execution's node_after events; calls of a finished one that never
    got a result are "not run", those of a paused or crashed one stay pending."""
    book = StepBook()
    for event in events:
        book.feed(event)
    if finished:
        book.finish("not run")
    return book.rows


@dataclass
class _ModelCall:
    """What the model call of one iteration contributes to each row it asked for."""

    task: TaskData
    tokens_in: int | None
    tokens_out: int | None
    model_ms: float


@dataclass
class StepsDiff:
    """How the rows changed since the last diff: `inserts` in order, each (position at that
    moment, rows put in there); `changed` rows that were in before and now read differently."""

    inserts: list[tuple[int, list[StepRow]]] = field(default_factory=list)
    changed: list[StepRow] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.inserts or self.changed)


class StepBook:
    """Builds and updates rows from node_after events; `take_diff()` says what changed since it
    was last called, for a view to apply (rows are appended in blocks, a nested agent's rows are
    inserted under the call that ran it)."""

    def __init__(self) -> None:
        self.rows: list[StepRow] = []
        self._inserts: list[tuple[int, list[StepRow]]] = []
        self._changed: dict[int, StepRow] = {}  # id(row) -> row, rows shown before that changed
        self._calls: dict[tuple[Any, ...], StepRow] = {}
        self._open: dict[tuple[Any, ...], list[StepRow]] = {}  # (scope, item) -> rows waiting for a result
        self._model_failed: dict[Scope | None, bool] = {}

    # ----- feeding -------------------------------------------------------------------------------
    def feed(self, event: NodeAfter) -> None:
        task = event.task
        if AI_LANGUAGE_MODEL in task.input:
            if task.metadata.get("fallback"):
                self._fallback_took_over(event.node, task)
            self._model_call(task)
        elif AI_TOOL in task.input:
            if task.metadata.get("toolCallId"):
                self._tool_run(event.node, task)
            if "iterations" in task.metadata:  # an agent used as a tool has ended
                self._agent_end(event, task)
        elif MAIN in task.input:
            self._agent_end(event, task)

    def update(self, node: str, task: TaskData) -> None:
        """A recorded run changed after the fact (edited while paused): show its new result."""
        if AI_LANGUAGE_MODEL in task.input:
            self._reply_edited(task)
        elif AI_TOOL in task.input and _call_key(task.metadata) in self._calls:
            self._tool_run(node, task)

    def _reply_edited(self, task: TaskData) -> None:
        """The model's reply was edited before the agent acted on it: the rows of the reply it
        gave stay, marked replaced, and rows of the edited reply follow."""
        old = [r for r in self.rows if r.model_task is task and r.status != "replaced"]
        if not old:
            return
        meta = task.metadata
        edits = [e for e in meta.get("edits") or [] if e.get("what") == "reply"]
        reply = _first_item(task, AI_LANGUAGE_MODEL) or {}
        calls = reply.get("toolCalls") or []
        now = [("tool", str(c.get("name", "")), str(c.get("id", "")), c.get("args")) for c in calls] \
            or [("answer", FINAL_ANSWER, "", str(reply.get("content", "")))]
        if now == [(r.kind, r.tool, r.tool_call_id, r.tool_input if r.kind == "tool" else r.observation) for r in old]:
            for row in old:  # the rows were made after the edit: they show the new reply already
                self._set(row, edits=edits)
            return
        self._open.pop((_scope(meta), int(meta.get("itemIndex", 0) or 0)), None)
        for row in old:
            self._calls.pop(row.key, None)
            self._set(row, status="replaced", edits=edits,
                      observation=row.observation if row.kind == "answer" else "(not run: the reply was edited)")
        self._model_call(task)

    def finish(self, status: str = "cancelled") -> None:
        """The run is over: calls still waiting for a result will never get one."""
        for rows in self._open.values():
            for row in rows:
                if row.status == "pending":
                    self._set(row, status=status, observation=row.observation or f"({status})")
        self._open.clear()

    def clear(self) -> None:
        self.rows.clear()
        self._inserts.clear()
        self._calls.clear()
        self._open.clear()
        self._model_failed.clear()
        self._changed.clear()

    def add_rows(self, rows: list[StepRow]) -> None:
        """Append ready-made rows (saved steps, benchmarks)."""
        for row in rows:
            self._append(row)

    def take_diff(self) -> StepsDiff:
        """The rows put in and changed since the last call."""
        inserted = {id(r) for _pos, rows in self._inserts for r in rows}
        diff = StepsDiff(self._inserts, [r for key, r in self._changed.items() if key not in inserted])
        self._inserts = []
        self._changed = {}
        return diff

    # ----- the three kinds of run ----------------------------------------------------------------
    def _model_call(self, task: TaskData) -> None:
        meta = task.metadata
        scope = _scope(meta)
        item = int(meta.get("itemIndex", 0) or 0)
        outer = meta.get("parent")
        base = dict(
            iterations=_iterations(meta), item=item, agent=str(meta.get("node", "")),
            depth=len(_iterations(meta)) - 1, model_task=task,
            edits=[e for e in meta.get("edits") or [] if e.get("what") == "reply"],
        )
        self._resolve_unrun(scope, item, task)
        usage = meta.get("tokenUsage") or {}
        call = _ModelCall(task, usage.get("promptTokens"), usage.get("completionTokens"),
                          float(meta.get("latencyMs", task.execution_time)))
        model_info = dict(tokens_in=call.tokens_in, tokens_out=call.tokens_out, model_ms=call.model_ms)
        if task.error is not None:
            self._model_failed[scope] = True  # the agent's own error repeats it: one row is enough
            self._add(StepRow(tool=MODEL_ERROR, kind="model-error", observation=task.error.message, status="error",
                              **base, **model_info), outer)
            return
        reply = _first_item(task, AI_LANGUAGE_MODEL) or {}
        calls = reply.get("toolCalls") or []
        if not calls:
            self._add(StepRow(tool=FINAL_ANSWER, kind="answer", observation=str(reply.get("content", "")),
                              status="ok", **base, **model_info), outer)
            return
        waiting = self._open.setdefault((scope, item), [])
        for call_json in calls:
            row = StepRow(tool=str(call_json.get("name", "")), kind="tool", tool_call_id=str(call_json.get("id", "")),
                          tool_input=call_json.get("args"), **base, **model_info)
            row.key = (scope, row.tool_call_id)
            self._calls[row.key] = row
            waiting.append(row)
            self._add(row, outer)

    def _fallback_took_over(self, node: str, task: TaskData) -> None:
        """The Agent's Fallback Model was called: the failed call before it in the same iteration
        is marked as one the fallback took over."""
        meta = task.metadata
        scope, item, iterations = _scope(meta), int(meta.get("itemIndex", 0) or 0), _iterations(meta)
        for row in reversed(self.rows):
            if row.kind == "model-error" and row.item == item and row.iterations == iterations \
                    and row.model_task is not None and _scope(row.model_task.metadata) == scope:
                if row.tool == MODEL_ERROR:
                    self._set(row, tool=MODEL_ERROR_FALLBACK, observation=f'{row.observation} (the Fallback Model "{node}" was asked instead)')
                break
        self._model_failed[scope] = False

    def _tool_run(self, node: str, task: TaskData) -> None:
        meta = task.metadata
        key = _call_key(meta)
        text, failed = tool_observation(task.to_json())
        edited_from = None
        edits = [e for e in meta.get("edits") or [] if e.get("what") == "observation"]
        if edits:  # the user changed what the model reads, while paused at the tool's result
            edited_from, text = text, str(edits[-1].get("new", text))
        row = self._calls.get(key)
        changed: dict[str, Any] = {}
        if meta.get("edits"):
            row_edits = [e for e in (row.edits if row is not None else []) if e.get("what") == "reply"]
            changed["edits"] = row_edits + list(meta["edits"])
            inputs = [e for e in meta["edits"] if e.get("what") == "toolInput"]
            if inputs:  # the arguments the tool really ran with
                changed["tool_input"] = inputs[-1].get("new")
        if row is None:  # a tool run whose model call was not seen (e.g. a resumed execution)
            row = StepRow(iterations=_iterations(meta), item=int(meta.get("itemIndex", 0) or 0),
                          agent=str(meta.get("node", "")), tool=str(meta.get("toolName", node)), kind="tool",
                          depth=len(_iterations(meta)) - 1, tool_call_id=str(meta.get("toolCallId", "")),
                          tool_input=_first_item(task, AI_TOOL, "input"))
            row.key = key
            self._calls[key] = row
            self._add(row, meta.get("parent"))
        self._set(row, status="error" if failed else "ok", observation=text, tool_ms=task.execution_time,
                  tool_node=node, tool_task=task, edited_from=edited_from, **changed)
        waiting = self._open.get((_scope(meta), row.item))
        if waiting and row in waiting:
            waiting.remove(row)

    def _agent_end(self, event: NodeAfter, task: TaskData) -> None:
        parent = event.parent
        scope = (event.node, event.run_index, _call_key(parent) if parent else None)
        for (open_scope, item), rows in list(self._open.items()):
            if open_scope != scope:
                continue
            for row in rows:
                if row.status == "pending":
                    self._set(row, status="not run", observation=row.observation or "(the agent did not run this call)")
            del self._open[(open_scope, item)]
        if task.error is not None and "iterations" in task.metadata and not self._model_failed.get(scope):
            iterations = _iterations(parent) + (int(task.metadata.get("iterations", 0)),)
            self._add(StepRow(iterations=iterations, item=0, agent=event.node, tool=AGENT_ERROR, kind="agent-error",
                              depth=len(iterations) - 1, observation=task.error.message, status="error"), parent)

    def _resolve_unrun(self, scope: Scope | None, item: int, task: TaskData) -> None:
        """Calls of the last iteration that never ran (bad arguments): the model's next input says why."""
        waiting = self._open.pop((scope, item), None)
        if not waiting:
            return
        request = _first_item(task, AI_LANGUAGE_MODEL, "input") or {}
        answers = _tool_answers(request.get("messages", []), {row.tool_call_id for row in waiting if row.status == "pending"})
        for row in waiting:
            if row.status != "pending":
                continue
            text = answers.get(row.tool_call_id)
            if text is None:
                self._set(row, status="not run", observation="(the agent did not run this call)")
            else:
                self._set(row, status="error" if str(text).startswith("Error") else "ok", observation=str(text))

    # ----- rows ----------------------------------------------------------------------------------
    def _set(self, row: StepRow, **values: Any) -> None:
        for name, value in values.items():
            setattr(row, name, value)
        if row.index >= 0:
            self._changed[id(row)] = row

    def _append(self, row: StepRow) -> None:
        end = len(self.rows)
        row.index = end
        self.rows.append(row)
        last = self._inserts[-1] if self._inserts else None
        if last is not None and last[0] + len(last[1]) == end:
            last[1].append(row)
        else:
            self._inserts.append((end, [row]))

    def _add(self, row: StepRow, outer: dict[str, Any] | None) -> None:
        """Append `row`, or for a nested agent insert it after the subtree of the call that ran it."""
        anchor = self._calls.get(_call_key(outer)) if outer else None
        if anchor is None:
            self._append(row)
            return
        pos = anchor.index + 1
        while pos < len(self.rows) and self.rows[pos].depth > anchor.depth:
            pos += 1
        if pos == len(self.rows):
            self._append(row)
            return
        self.rows.insert(pos, row)
        for index in range(pos, len(self.rows)):
            self.rows[index].index = index
        self._inserts.append((pos, [row]))


def _tool_answers(messages: Iterable[dict[str, Any]], wanted: set[Any]) -> dict[Any, str]:
    """The last tool message's text for each call id in `wanted`, read from the end of the
    conversation (where the answers of its last round are) and only until all are found: the
    whole conversation is read only when an answer is missing."""
    answers: dict[Any, str] = {}
    for message in reversed(messages if isinstance(messages, Sequence) else list(messages)):
        if not wanted:
            break
        key = message.get("toolCallId")
        if key in wanted and message.get("role") == "tool":
            answers[key] = readable(str(message.get("content", "")))
            wanted.discard(key)
    return answers
