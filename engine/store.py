"""The embedded execution store: every execution in one SQLite file (WAL), durable and resumable.

Each execution row keeps the workflow as it ran, mode, status, timings, error and result, and
points at the resumable state (the execution stack with every pending EngineRequest's metadata)
as of its last boundary. Node runs are appended as rows as they finish, so run data is written
once. Both runs and stack checkpoints are stored as deltas (engine.json_delta) from the previous
one where they repeat it, so an agent's growing messages and steps are not written again and
again; every CHECKPOINTS_PER_FULL-th checkpoint is written whole and older ones are dropped.
A process killed mid-run leaves its execution "running" with a dead pid: the next start marks
it "crashed", and it resumes from its last boundary.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from .chat import ChatMessage
from .connection_types import AI_LANGUAGE_MODEL, AI_MEMORY
from .errors import MiniN8nError
from .hooks import HookEvent, NodeAfter, RunUpdated, WorkflowAfter
from .json_delta import decode, encode
from .json_text import dumps as _dumps, escape_surrogates
from .processes import pid_alive
from .run_data import ExecutionState, StackEntry, TaskData, TaskError
from .workflow import parse_workflow, workflow_to_data

ENV_DB = "MINI_N8N_DB"
SCHEMA_VERSION = 1  # PRAGMA user_version of a store this code writes
CHECKPOINTS_PER_FULL = 64

SCHEMA = """
CREATE TABLE IF NOT EXISTS executions (
    id TEXT PRIMARY KEY,
    workflow_name TEXT NOT NULL,
    workflow TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at REAL NOT NULL,
    stopped_at REAL,
    start_node TEXT,
    last_node TEXT,
    error TEXT,
    result TEXT,
    stack_seq INTEGER NOT NULL DEFAULT 0,
    pause TEXT,
    runs_at_boundary INTEGER NOT NULL DEFAULT 0,
    pid INTEGER,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    execution_id TEXT NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    node TEXT NOT NULL,
    run_index INTEGER NOT NULL,
    base INTEGER,
    task TEXT NOT NULL,
    PRIMARY KEY (execution_id, seq)
);
CREATE TABLE IF NOT EXISTS checkpoints (
    execution_id TEXT NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    base INTEGER,
    stack TEXT NOT NULL,
    PRIMARY KEY (execution_id, seq)
);
CREATE TABLE IF NOT EXISTS memory (
    workflow TEXT NOT NULL,
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (workflow, session, seq)
);
"""


def default_path() -> Path:
    """$MINI_N8N_DB, else the user's data folder (XDG_DATA_HOME or ~/.local/share)/mini-n8n."""
    override = os.environ.get(ENV_DB)
    if override:
        return Path(override)
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "mini-n8n" / "executions.sqlite"


def _carries_conversation(task: dict[str, Any]) -> bool:
    """Model and memory runs repeat the conversation so far: only they are worth a delta."""
    inputs = task.get("input") or {}
    return AI_LANGUAGE_MODEL in inputs or AI_MEMORY in inputs


@dataclass(frozen=True)
class ExecutionSummary:
    id: str
    workflow_name: str
    mode: str
    status: str
    started_at: float
    stopped_at: float | None
    error: str | None

    @property
    def duration_ms(self) -> float | None:
        return None if self.stopped_at is None else self.stopped_at - self.started_at


class ExecutionStore:
    """Executions in one SQLite file. Open one per process; writes happen on the caller's thread."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._check_version()
            self._db.execute("PRAGMA journal_mode=WAL")
            # Copying the WAL into the file takes tens of ms; do it when a run ends, not mid-run.
            self._db.execute("PRAGMA wal_autocheckpoint=0")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise MiniN8nError(f"cannot open the execution store {self.path}: {exc}") from None
        self._seq: dict[str, int] = {}
        self._wal_copier: threading.Thread | None = None
        # per execution, what the next writes are deltas from (JSON sharing live run data)
        self._runs: dict[str, dict[int, tuple[str, int, dict[str, Any]]]] = {}  # seq -> (node, run index, task)
        self._last_run: dict[str, dict[str, int]] = {}  # node -> seq of its latest run
        self._stack: dict[str, tuple[int, int, list[Any]]] = {}  # (seq, since full, stack JSON)
        self.mark_crashed()

    def close(self) -> None:
        if self._wal_copier is not None:
            self._wal_copier.join()
        self._db.close()

    def _copy_wal_in_background(self) -> None:
        """Fold the WAL into the database file on a thread of its own (its own connection; SQLite
        lets the loop thread go on writing meanwhile), so the end of a long run does not stall."""
        if self._wal_copier is not None and self._wal_copier.is_alive():
            return

        def copy() -> None:
            try:
                with closing(sqlite3.connect(self.path, timeout=5)) as db:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error:
                pass  # the next run's end tries again; nothing is lost while the WAL holds it

        self._wal_copier = threading.Thread(target=copy, name="mini-n8n store WAL copy", daemon=True)
        self._wal_copier.start()

    def _check_version(self) -> None:
        """Refuse, with a clear message, a store file of another layout (nothing in it is touched)."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        tables = self._db.execute("SELECT COUNT(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
        if tables and version != SCHEMA_VERSION:
            self._db.close()
            raise MiniN8nError(
                f"the execution store {self.path} has layout version {version}, and this mini-n8n reads "
                f"version {SCHEMA_VERSION}; move the file away (it is left as it is) or set {ENV_DB} to another file"
            )

    # ----- writing, driven by an execution ----------------------------------------------------
    def attach(self, execution: Any) -> None:
        """Store `execution` (an engine.executor.Execution) from now on: its row, runs and state."""
        state: ExecutionState = execution.state
        row = self._db.execute("SELECT runs_at_boundary FROM executions WHERE id=?", (state.id,)).fetchone()
        if row is None:
            self._db.execute(
                "INSERT INTO executions (id, workflow_name, workflow, mode, status, started_at, start_node, pid, updated_at)"
                " VALUES (?,?,?,?,?,?,?,?,?)",
                (state.id, escape_surrogates(state.workflow.name), _dumps(workflow_to_data(state.workflow)), state.mode, state.status,
                 state.started_at, state.start_node, os.getpid(), time.time()),
            )
            self._seq[state.id] = 0
        else:
            self._seq[state.id] = int(row[0])
            self._db.execute("UPDATE executions SET pid=?, updated_at=? WHERE id=?", (os.getpid(), time.time(), state.id))
        self._runs[state.id] = {}
        self._last_run[state.id] = {}
        self._stack.pop(state.id, None)
        self._db.execute("BEGIN")
        self._db.execute("UPDATE executions SET stack_seq=? WHERE id=?", (self._write_stack(state), state.id))
        self._db.execute("COMMIT")
        execution.hooks.add(lambda event: self._on_event(state.id, event))
        execution.on_checkpoint = self.checkpoint

    def _on_event(self, execution_id: str, event: HookEvent) -> None:
        if isinstance(event, NodeAfter):
            seq = self._seq.get(execution_id, 0) + 1
            self._seq[execution_id] = seq
            runs, last = self._runs[execution_id], self._last_run[execution_id]
            task = event.task.to_json()
            base = last.get(event.node) if _carries_conversation(task) else None
            stored = encode(task, runs[base][2]) if base is not None else task
            self._db.execute(
                "INSERT INTO runs (execution_id, seq, node, run_index, base, task) VALUES (?,?,?,?,?,?)",
                (execution_id, seq, event.node, event.run_index, base, _dumps(stored)),
            )
            if _carries_conversation(task):
                runs[seq] = (event.node, event.run_index, task)
                last[event.node] = seq
        elif isinstance(event, RunUpdated):
            row = self._db.execute(
                "SELECT seq, base FROM runs WHERE execution_id=? AND node=? AND run_index=?",
                (execution_id, event.node, event.run_index),
            ).fetchone()
            if row is None:
                return
            seq, base = row
            runs = self._runs.get(execution_id, {})
            task = event.task.to_json()
            stored = encode(task, runs[base][2]) if base is not None and base in runs else task
            self._db.execute("UPDATE runs SET task=?, base=? WHERE execution_id=? AND seq=?",
                             (_dumps(stored), base if stored is not task else None, execution_id, seq))
            if seq in runs:
                runs[seq] = (event.node, event.run_index, task)
        elif isinstance(event, WorkflowAfter):  # finished: nothing more is written as a delta of it
            self._runs.pop(execution_id, None)
            self._last_run.pop(execution_id, None)
            self._stack.pop(execution_id, None)
            self._copy_wal_in_background()

    def _write_stack(self, state: ExecutionState) -> int:
        stack = [entry.to_json() for entry in state.stack]
        previous = self._stack.get(state.id)
        if previous is None:
            row = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM checkpoints WHERE execution_id=?", (state.id,)).fetchone()
            seq, since_full = row[0] + 1, 0
        else:
            seq, since_full = previous[0] + 1, previous[1] + 1
        if previous is None or since_full >= CHECKPOINTS_PER_FULL:
            self._db.execute("DELETE FROM checkpoints WHERE execution_id=?", (state.id,))
            self._db.execute("INSERT INTO checkpoints (execution_id, seq, base, stack) VALUES (?,?,NULL,?)",
                             (state.id, seq, _dumps(stack)))
            since_full = 0
        else:
            self._db.execute("INSERT INTO checkpoints (execution_id, seq, base, stack) VALUES (?,?,?,?)",
                             (state.id, seq, previous[0], _dumps(encode(stack, previous[2]))))
        self._stack[state.id] = (seq, since_full, stack)
        return seq

    def checkpoint(self, state: ExecutionState, at_boundary: bool) -> None:
        """Write status and, at a boundary, the resumable stack."""
        fields: dict[str, Any] = {
            "status": state.status,
            "stopped_at": state.stopped_at,
            "last_node": state.last_node,
            "error": _dumps(state.error.model_dump()) if state.error else None,
            "result": _dumps(state.result) if state.result is not None else None,
            "pause": _dumps(state.pause) if state.pause else None,
            "updated_at": time.time(),
        }
        self._db.execute("BEGIN")
        try:
            if at_boundary:
                fields["stack_seq"] = self._write_stack(state)
                fields["runs_at_boundary"] = self._seq.get(state.id, 0)
            names = ", ".join(f"{k}=?" for k in fields)
            self._db.execute(f"UPDATE executions SET {names} WHERE id=?", (*fields.values(), state.id))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    # ----- reading ------------------------------------------------------------------------------
    def mark_crashed(self) -> list[str]:
        """Executions left "running" by a process that is gone are "crashed"."""
        rows = self._db.execute("SELECT id, pid FROM executions WHERE status='running'").fetchall()
        crashed = [eid for eid, pid in rows if pid != os.getpid() and not pid_alive(pid)]
        for eid in crashed:
            self._db.execute("UPDATE executions SET status='crashed', updated_at=? WHERE id=?", (time.time(), eid))
        return crashed

    def list(self, limit: int = 200) -> list[ExecutionSummary]:
        rows = self._db.execute(
            "SELECT id, workflow_name, mode, status, started_at, stopped_at, error FROM executions"
            " ORDER BY started_at DESC LIMIT ?", (limit,),
        ).fetchall()
        return [
            ExecutionSummary(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6])["message"] if r[6] else None)
            for r in rows
        ]

    def exists(self, execution_id: str) -> bool:
        return self._db.execute("SELECT 1 FROM executions WHERE id=?", (execution_id,)).fetchone() is not None

    def runs(self, execution_id: str, upto: int | None = None) -> Iterator[tuple[str, int, TaskData]]:
        """The stored runs in the order they finished (each decoded from the run it extends)."""
        query = "SELECT seq, node, run_index, base, task FROM runs WHERE execution_id=?"
        args: tuple[Any, ...] = (execution_id,)
        if upto is not None:
            query += " AND seq<=?"
            args += (upto,)
        decoded: dict[int, Any] = {}
        for seq, node, run_index, base, task in self._db.execute(query + " ORDER BY seq", args).fetchall():
            value = json.loads(task)
            if base is not None:
                value = decode(value, decoded.get(base))
            decoded[seq] = value
            yield node, run_index, TaskData.model_validate(value)

    def events(self, execution_id: str) -> list[NodeAfter]:
        """The stored runs as the node_after events they were, in the order they finished, so a
        stored execution reads (steps table, run log, CLI) as it did live."""
        return [
            NodeAfter(execution_id, node, run_index, task, task.metadata if task.metadata.get("node") is not None else None)
            for node, run_index, task in self.runs(execution_id)
        ]

    def _stack_at(self, execution_id: str, stack_seq: int) -> list[Any]:
        """The stack of a checkpoint: its full ancestor, then each delta applied in turn."""
        rows = self._db.execute(
            "SELECT seq, base, stack FROM checkpoints WHERE execution_id=? AND seq<=? ORDER BY seq",
            (execution_id, stack_seq),
        ).fetchall()
        stack: Any = None
        for _seq, base, text in rows:
            value = json.loads(text)
            stack = value if base is None else decode(value, stack)
        return stack or []

    def load(self, execution_id: str, *, for_resume: bool = False) -> ExecutionState:
        """The stored execution; `for_resume` keeps run data only up to its last boundary."""
        row = self._db.execute(
            "SELECT workflow, mode, status, started_at, stopped_at, start_node, last_node, error, result, stack_seq,"
            " pause, runs_at_boundary FROM executions WHERE id=?", (execution_id,),
        ).fetchone()
        if row is None:
            raise MiniN8nError(f'no execution "{execution_id}" in {self.path}')
        (workflow, mode, status, started, stopped, start_node, last_node, error, result, stack_seq, pause, at_boundary) = row
        state = ExecutionState(
            id=execution_id,
            workflow=parse_workflow(json.loads(workflow), f"execution {execution_id}"),
            mode=mode, status=status, startedAt=started, stoppedAt=stopped, startNode=start_node, lastNode=last_node,
            error=TaskError.model_validate(json.loads(error)) if error else None,
            result=json.loads(result) if result else None,
            stack=[StackEntry.model_validate(e) for e in self._stack_at(execution_id, stack_seq)],
            pause=json.loads(pause) if pause else None,
        )
        for node, _index, task in self.runs(execution_id, upto=at_boundary if for_resume else None):
            state.run_data.setdefault(node, []).append(task)
        return state

    def prepare_resume(self, execution_id: str) -> ExecutionState:
        """Load a paused or crashed execution to continue it: runs after its last boundary are
        dropped (the node that made them runs again)."""
        state = self.load(execution_id, for_resume=True)
        if state.status not in ("paused", "crashed"):
            raise MiniN8nError(f'execution "{execution_id}" is {state.status}; only paused or crashed executions resume')
        at_boundary = self._db.execute("SELECT runs_at_boundary FROM executions WHERE id=?", (execution_id,)).fetchone()[0]
        self._db.execute("DELETE FROM runs WHERE execution_id=? AND seq>?", (execution_id, at_boundary))
        return state

    def delete(self, execution_id: str) -> bool:
        self._db.execute("DELETE FROM runs WHERE execution_id=?", (execution_id,))
        self._db.execute("DELETE FROM checkpoints WHERE execution_id=?", (execution_id,))
        return self._db.execute("DELETE FROM executions WHERE id=?", (execution_id,)).rowcount > 0


def _text_key(key: tuple[str, str]) -> tuple[str, str]:
    """A memory key SQLite can store (a session id may hold a lone surrogate)."""
    return escape_surrogates(key[0]), escape_surrogates(key[1])


class SqliteMemoryStore:
    """Simple Memory's conversations in the store's file, so they outlive the process."""

    def __init__(self, store: ExecutionStore) -> None:
        self._db = store._db

    def load(self, key: tuple[str, str]) -> list[ChatMessage]:
        key = _text_key(key)
        rows = self._db.execute("SELECT message FROM memory WHERE workflow=? AND session=? ORDER BY seq", key)
        return [ChatMessage.model_validate(json.loads(r[0])) for r in rows]

    def append(self, key: tuple[str, str], messages: list[ChatMessage]) -> None:
        key = _text_key(key)
        start = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM memory WHERE workflow=? AND session=?", key).fetchone()[0]
        self._db.executemany(
            "INSERT INTO memory (workflow, session, seq, message) VALUES (?,?,?,?)",
            [(*key, start + i + 1, _dumps(m.to_json())) for i, m in enumerate(messages)],
        )

    def clear(self, key: tuple[str, str]) -> None:
        key = _text_key(key)
        self._db.execute("DELETE FROM memory WHERE workflow=? AND session=?", key)
