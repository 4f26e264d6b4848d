"""The execution store on PostgreSQL: what the SQLite store does, for several processes on several machines.

Same rows and the same encodings as the SQLite store (engine.store.sqlite_store): the workflow
once per content hash, the execution row when its status changes, and at each node boundary the
runs finished since the last one and the resumable stack as a delta from the previous stack
(whole every CHECKPOINTS_PER_FULL-th time), each blob checksummed. Every boundary is committed
before the next node starts, so a worker killed at any moment loses at most the node that was
running: no journal file, since the next process to resume may be on another machine.

One owner per execution, across machines: an advisory lock held by the owner's connection
(engine.store.postgres_lease). The row also names the owner (host, pid, a token per open store)
for messages and to tell this store's executions from others'.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, TypeVar

from ..errors import MiniN8nError
from ..hooks import NodeAfter, RunUpdated, StoredEvent, WorkflowAfter
from ..json_delta import encode
from ..json_text import escape_surrogates
from ..run_data import ENDED, ExecutionState
from .base import ExecutionBusy, ExecutionStoreBase, Resumption, Retention
from .boundary_state import joined, state_json
from .codec import pack, pack_workflow, row_fields
from .postgres_lease import Leases
from .postgres_rows import prune_executions, write_rows
from .postgres_schema import connect, prepare, redact
from .sqlite_file import fields_crc, workflow_hash
from .sql_reads import SqlReads
from .run_records import RunRecords

CHECKPOINTS_PER_FULL = 64
PRUNE_INTERVAL_S = 60.0
T = TypeVar("T")


def text(value: str) -> str:
    """A string PostgreSQL's text type accepts (no NUL, no lone surrogate), for names shown in lists."""
    return escape_surrogates(value).replace("\x00", "\\u0000")


@dataclass
class _Writer(RunRecords):
    """What one attached execution's next writes need (sequence numbers, the JSON deltas are made from)."""

    boundary_seq: int = 0
    since_full: int = 0
    stack: Any = None  # the last boundary (boundary_state: the stack, or the stack and state)
    row: tuple[Any, ...] | None = None  # the status fields last written to the execution row
    result: Any = None  # the result last written


class PostgresExecutionStore(SqlReads, ExecutionStoreBase):
    """Executions in a PostgreSQL database (its tables in the connection's search_path)."""

    damage = "the row is damaged"

    def __init__(self, url: str, *, retention: Retention | None = None) -> None:
        self.url = url
        self.path = redact(url)  # how messages and `executions check` name the store
        self.retention = retention if retention is not None else Retention.from_env()
        self._db = connect(url)
        self._lock = threading.RLock()
        self._host = socket.gethostname()
        self._pid = os.getpid()
        self._token = uuid.uuid4().hex
        self._leases = Leases(self._db)
        self._writers: dict[str, _Writer] = {}
        self._housekeeper: threading.Thread | None = None
        self._last_prune: float | None = None
        try:
            self._guard("setting up its tables", lambda: prepare(self._db, self.path))
            self.mark_crashed()
        except BaseException:
            self._db.close()
            raise

    @property
    def connection(self) -> Any:
        """The open psycopg connection (autocommit), for tables that share the database (Simple Memory)."""
        return self._db

    @property
    def lock(self) -> threading.RLock:
        """Held around every use of the connection."""
        return self._lock

    def close(self) -> None:
        if self._housekeeper is not None:
            self._housekeeper.join()
        with self._lock:
            self._db.close()  # and with the session, every advisory lock it held
            self._leases.held.clear()

    def _guard(self, what: str, work: Callable[[], T]) -> T:
        import psycopg

        with self._lock:
            try:
                return work()
            except psycopg.Error as exc:
                detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise MiniN8nError(f"the execution store {self.path} failed while {what}: {detail}") from None

    def _sql(self, query: str) -> str:
        return query.replace("?", "%s")  # psycopg's placeholder

    def _transaction(self, what: str, work: Callable[[], T]) -> T:
        def run() -> T:
            with self._db.transaction():
                return work()

        return self._guard(what, run)

    # ----- the lease -------------------------------------------------------------------------
    def _claim(self, execution_id: str) -> str | None:
        """Inside a transaction: make this store the owner; returns the stored status (None: no
        such execution). Raises ExecutionBusy while another live store owns it."""
        row = self._db.execute("SELECT status, owner_host, owner_pid, owner_token FROM executions WHERE id=%s FOR UPDATE",
                               (execution_id,)).fetchone()
        if row is None:
            return None
        status, host, pid, token = row
        if not self._leases.take(execution_id):
            raise ExecutionBusy(execution_id, pid or 0, host)
        self._db.execute("UPDATE executions SET owner_host=%s, owner_pid=%s, owner_token=%s WHERE id=%s",
                         (self._host, self._pid, self._token, execution_id))
        return str(status)

    def _claiming(self, execution_id: str, what: str, work: Callable[[], T]) -> T:
        """`work` in a transaction that claims the execution; a failed one leaves the lock free."""
        had = execution_id in self._leases.held
        try:
            return self._transaction(what, work)
        except BaseException:
            if not had:
                with self._lock:
                    try:
                        self._leases.give_up(execution_id)
                    except Exception:  # the connection is gone: so is the lock
                        self._leases.forget(execution_id)
            raise

    def release(self, state: ExecutionState) -> None:
        self._writers.pop(state.id, None)

        def free() -> None:
            self._db.execute("UPDATE executions SET owner_host=NULL, owner_pid=NULL, owner_token=NULL WHERE id=%s"
                             " AND owner_token=%s", (state.id, self._token))
            self._leases.give_up(state.id)

        self._guard(f"releasing execution {state.id}", free)

    def mark_crashed(self) -> list[str]:
        """Executions left running (or never started) by a store whose connection is gone are "crashed"."""
        rows = self._guard("looking for crashed executions", lambda: self._db.execute(
            "SELECT id, owner_token FROM executions WHERE status IN ('running', 'new')").fetchall())
        crashed = []
        for execution_id, token in rows:
            if token == self._token or execution_id in self._leases.held:
                continue

            def mark(execution_id: str = execution_id) -> bool:
                if not self._leases.free_for_this_transaction(execution_id):
                    return False  # its owner is alive
                return bool(self._db.execute(
                    "UPDATE executions SET status='crashed', owner_host=NULL, owner_pid=NULL, owner_token=NULL,"
                    " updated_at=%s WHERE id=%s AND status IN ('running', 'new')", (time.time(), execution_id)).rowcount)

            if self._transaction("marking crashed executions", mark):
                crashed.append(execution_id)
        return crashed

    # ----- writing, driven by an execution ----------------------------------------------------
    def attach(self, execution: Any, *, fresh: bool = False) -> None:
        """Claim `execution` (an engine.executor.Execution) and store it from now on."""
        state: ExecutionState = execution.state
        workflow, workflow_crc = pack_workflow(state.workflow)
        digest = workflow_hash(workflow)
        self._writers.pop(state.id, None)
        ahead = len(execution.recorded_ahead or ())  # a resumed one serves again the runs stored after its boundary

        def claim_and_write() -> _Writer:
            db = self._db
            if self._claim(state.id) is None:
                if not self._leases.take(state.id):
                    raise ExecutionBusy(state.id, 0)
                db.execute("INSERT INTO workflows (hash, data, crc) VALUES (%s,%s,%s) ON CONFLICT DO NOTHING",
                           (digest, workflow, workflow_crc))
                db.execute(
                    "INSERT INTO executions (id, workflow_name, workflow_hash, mode, status, started_at, start_node, crc,"
                    " owner_host, owner_pid, owner_token, updated_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                    (state.id, text(state.workflow.name), digest, state.mode, state.status, state.started_at,
                     state.start_node, fields_crc([None, None, None]), self._host, self._pid, self._token, time.time()),
                )
                writer = _Writer(run_seq=0)
            else:
                runs = db.execute("SELECT COALESCE(MAX(seq), 0) FROM runs WHERE execution_id=%s", (state.id,)).fetchone()[0]
                boundary = db.execute("SELECT COALESCE(MAX(seq), 0) FROM boundaries WHERE execution_id=%s",
                                      (state.id,)).fetchone()[0]
                writer = _Writer(run_seq=int(runs), boundary_seq=int(boundary), ahead=ahead)
            write_rows(db, state.id, [], self._boundary_row(state, writer))
            return writer

        self._writers[state.id] = self._claiming(state.id, f"storing execution {state.id}", claim_and_write)
        execution.on_record = partial(self._on_record, state.id)
        execution.on_checkpoint = self.checkpoint
        execution.on_detach = self.release

    def _on_record(self, execution_id: str, event: StoredEvent) -> None:
        """What the execution tells its store (Execution.tell)."""
        writer = self._writers.get(execution_id)
        if isinstance(event, NodeAfter) and writer is not None:
            writer.add_run(execution_id, event)
        elif isinstance(event, RunUpdated):
            self._update_run(execution_id, writer, event)
        elif isinstance(event, WorkflowAfter):
            if self._writers.pop(execution_id, None) is not None and execution_id in self._leases.held:
                self._guard(f"releasing execution {execution_id}", lambda: self._leases.give_up(execution_id))
            if self.retention.active:
                self._prune_in_background()

    def _update_run(self, execution_id: str, writer: _Writer | None, event: RunUpdated) -> None:
        """A run edited while paused: rewrite its row (written whole; later deltas build on the edit)."""
        data, crc = writer.edit_run(event) if writer is not None else pack(event.task.to_json(for_store=True))
        self._transaction(f"updating a run of execution {execution_id}", lambda: self._db.execute(
            "UPDATE runs SET task=%s, crc=%s, base=NULL WHERE execution_id=%s AND node=%s AND run_index=%s",
            (data, crc, execution_id, event.node, event.run_index)))

    def _boundary_row(self, state: ExecutionState, writer: _Writer) -> tuple[Any, ...]:
        """The boundary's row: the stack (and the waiting runs and node context, when there are
        any: boundary_state) as a delta from the previous one (whole every CHECKPOINTS_PER_FULL-th
        time, and first in each process)."""
        stack = joined([entry.to_json() for entry in state.stack], state_json(state.__dict__))
        writer.answers.clear()  # answers are written whole here, not as references to their runs
        writer.boundary_seq += 1
        seq = writer.boundary_seq
        if writer.stack is None or writer.since_full + 1 >= CHECKPOINTS_PER_FULL:
            data, crc = pack(stack)
            base = None
            writer.since_full = 0
        else:
            data, crc = pack(encode(stack, writer.stack))
            base = seq - 1
            writer.since_full += 1
        writer.stack = stack
        writer.boundary_written(state.stack)
        return (state.id, seq, writer.run_seq - writer.ahead, state.last_node, base, data, crc)

    def checkpoint(self, state: ExecutionState, at_boundary: bool) -> None:
        """Write the runs finished since the last call, at a boundary the resumable stack, and the
        row when its status or result changed: one transaction, committed before the run goes on."""
        writer = self._writers.get(state.id)
        if writer is None:
            return
        row = (state.status, state.stopped_at, state.error, state.pause)
        runs, writer.new_runs = writer.new_runs, []
        row_changed = row != writer.row or state.result is not writer.result
        if at_boundary and (row_changed or not writer.may_leave_out_boundary(state.__dict__)):
            boundary = self._boundary_row(state, writer)
        else:  # none, or one inside an Agent's loop, which a resume goes over again (engine.store.loop_boundaries)
            boundary = None
        if not runs and boundary is None and not row_changed:
            return
        ended = state.status in ENDED

        def write() -> None:
            write_rows(self._db, state.id, runs, boundary)
            if row_changed:
                self._write_row(state, release=ended)

        self._transaction(f"storing execution {state.id}", write)
        writer.row, writer.result = row, state.result

    def _write_row(self, state: ExecutionState, *, release: bool) -> None:
        fields = row_fields(state)
        owner = "" if not release else ", owner_host=NULL, owner_pid=NULL, owner_token=NULL"
        self._db.execute(
            f"UPDATE executions SET status=%s, stopped_at=%s, error=%s, result=%s, pause=%s, crc=%s, updated_at=%s{owner}"
            " WHERE id=%s",
            (state.status, state.stopped_at, *fields, fields_crc(fields), time.time(), state.id),
        )

    # ----- housekeeping -------------------------------------------------------------------------
    def _prune_in_background(self) -> None:
        """After a run: apply the retention setting on a thread with its own connection (at most
        once a minute per process), so the end of a run does not stall."""
        now = time.monotonic()
        if self._last_prune is not None and now - self._last_prune < PRUNE_INTERVAL_S:
            return
        self._last_prune = now
        retention, url = self.retention, self.url

        def work() -> None:
            try:
                db = connect(url)
            except MiniN8nError:
                return  # the next run's end tries again
            try:
                prune_executions(db, retention)
            except Exception:
                pass
            finally:
                db.close()

        self._housekeeper = threading.Thread(target=work, name="mini-n8n store retention")
        self._housekeeper.start()

    def prune(self, retention: Retention, *, vacuum: bool = False) -> int:
        deleted = self._guard("pruning executions", lambda: prune_executions(self._db, retention))
        if vacuum:
            def compact() -> None:
                for table in ("runs", "boundaries", "executions", "workflows"):
                    self._db.execute(f"VACUUM {table}")

            self._guard("vacuuming", compact)
        return deleted

    def check(self) -> None:
        """Read every stored blob and check its checksum; raises StoreDamaged naming the first bad one."""
        for summary in self.list(limit=2**31 - 1):
            self.load(summary.id)

    # ----- reading ------------------------------------------------------------------------------
    def status(self, execution_id: str) -> str | None:
        """The stored status of one execution (None: no such execution), without loading it."""
        row = self._guard("reading", lambda: self._db.execute(
            "SELECT status FROM executions WHERE id=%s", (execution_id,)).fetchone())
        return None if row is None else str(row[0])

    def request_stop(self, execution_id: str) -> bool:
        """Ask whichever process runs the execution to stop it; False when it is not running."""
        return bool(self._guard(f"stopping execution {execution_id}", lambda: self._db.execute(
            "UPDATE executions SET stop_requested=true WHERE id=%s AND status IN ('running', 'new')",
            (execution_id,)).rowcount))

    def stop_requested(self, execution_id: str) -> bool:
        row = self._guard("reading", lambda: self._db.execute(
            "SELECT stop_requested FROM executions WHERE id=%s", (execution_id,)).fetchone())
        return bool(row and row[0])

    def prepare_resume(self, execution_id: str) -> Resumption:
        """Claim a paused or crashed execution and load it to continue: the runs after its last
        boundary that its resume serves again are kept (engine.resume_runs), the others dropped
        (the node that made them runs again)."""

        def claim() -> list[tuple[int, str, int, Any]]:
            status = self._claim(execution_id)
            if status is None:
                raise MiniN8nError(f'no execution "{execution_id}" in {self.path}')
            if status in ("running", "new"):  # its owner is gone (else _claim refused): it crashed
                status = "crashed"
                self._db.execute("UPDATE executions SET status='crashed' WHERE id=%s", (execution_id,))
            if status not in ("paused", "crashed"):
                raise MiniN8nError(f'execution "{execution_id}" is {status}; only paused or crashed executions resume')
            at_boundary, served = self._runs_to_serve(execution_id)
            self._db.execute("DELETE FROM runs WHERE execution_id=%s AND seq>%s",
                             (execution_id, served[-1][0] if served else at_boundary))
            return served

        try:
            served = self._claiming(execution_id, f"claiming execution {execution_id}", claim)
        except MiniN8nError as exc:
            if not isinstance(exc, ExecutionBusy):  # refused (not paused or crashed): not ours after all
                self._guard(f"releasing execution {execution_id}", lambda: self._leases.give_up(execution_id))
            raise
        return self._resumption(execution_id, served)

    def delete(self, execution_id: str) -> bool:
        def remove() -> bool:
            row = self._db.execute("SELECT owner_host, owner_pid, owner_token, workflow_hash FROM executions WHERE id=%s FOR UPDATE",
                                   (execution_id,)).fetchone()
            if row is None:
                return False
            host, pid, token, digest = row
            if token != self._token and self._leases.owned_elsewhere(execution_id):
                raise ExecutionBusy(execution_id, pid or 0, host)
            for table in ("runs", "boundaries"):
                self._db.execute(f"DELETE FROM {table} WHERE execution_id=%s", (execution_id,))
            self._db.execute("DELETE FROM executions WHERE id=%s", (execution_id,))
            self._db.execute("DELETE FROM workflows WHERE hash=%s AND NOT EXISTS (SELECT 1 FROM executions WHERE workflow_hash=%s)",
                             (digest, digest))
            return True

        deleted = self._transaction(f"deleting execution {execution_id}", remove)
        self._writers.pop(execution_id, None)
        self._guard(f"deleting execution {execution_id}", lambda: self._leases.give_up(execution_id))
        return deleted

