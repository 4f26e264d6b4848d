"""The embedded execution store: every execution in one SQLite file (WAL), durable and resumable.

Writes per execution: its workflow once (shared by every execution of the same workflow), its
row when its status changes (a new execution's row and workflow start its journal and go in with
its first fold), and at each node boundary one record in its journal (the node runs finished
since the last boundary and the resumable stack, as a delta from the previous one; the stack is
left out inside an Agent's tool loop, which a resume goes over again from its runs:
engine.store.loop_boundaries). Journaled records are folded into the database in groups
(engine.store.journal), each group's runs and its last boundary (engine.store.boundary_rows): a
SIGKILL loses at most the node that was running. An execution's end is journaled too (an end
record) and folded in together with the ends of the executions that end after it within
FOLD_AFTER_S: one transaction for up to ENDS_FOLDED_TOGETHER runs, where each run's own
transaction at its end was most of what the store cost a short run. Reads in this process fold
first; other processes see an end within FOLD_AFTER_S while an event loop runs, else after this
process's next write, read, `flush` or `close`, or when it exits (or dies: recovery stores the
end it journaled). Writers take the lock up front (BEGIN IMMEDIATE) and wait up to a busy
timeout for other processes. A running execution is leased to its process (pid and start time);
a dead owner's execution is "crashed", its journal folded in, and anyone may resume it
(engine.store.sqlite_lease).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from contextlib import closing
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable, TypeVar

from ..errors import MiniN8nError
from ..hooks import NodeAfter, RunUpdated, StoredEvent, WorkflowAfter
from ..json_text import escape_surrogates
from ..processes import same_process_alive, start_time
from ..run_data import ENDED, ExecutionState
from .base import ExecutionBusy, ExecutionStoreBase, Resumption, Retention
from ..json_delta import MARK
from .boundary_rows import boundary_row, folded_boundary
from .boundary_state import joined, split
from .codec import StoreDamaged, pack, pack_workflow, row_status
from .deltas import ANSWERED_BY, resolve_references
from .ends_waiting import EndsWaiting
from .journal import Pending, RowStatus, Start, encode_end, encode_record, encode_start, salt
from .journal_folder import JournalFolder
from .sqlite_lease import SqliteLeases
from .sqlite_file import BUSY_TIMEOUT_S, check_readonly, fields_crc, is_damage, open_store_file, workflow_hash
from .sql_reads import SqlReads
from .sqlite_rows import (INSERT_BOUNDARIES, WriterState, apply_rows, drop_runs_after, last_run_seq, prune_executions, rewrite_run,
                          stored_runs, write_status)
from .wal_checkpointer import WalCheckpointer

ENV_DB = "MINI_N8N_DB"
FOLD_EVERY = 512  # journaled records (one per node boundary: its runs, its stack where written) folded in one transaction
# ... or once the oldest of them is this old: other processes see progress, and a fold (on the
# thread that runs the engine, an editor's) writes a tenth of a second's boundaries, a few ms
FOLD_AFTER_S = 0.1
ENDS_FOLDED_TOGETHER = 8  # ended executions whose ends wait in their journals, at most
PRUNE_INTERVAL_S = 60.0
_ROW_FIELDS = itemgetter("status", "stopped_at", "error", "pause")  # an ExecutionState's row status fields, from its __dict__
T = TypeVar("T")


def default_path() -> Path:
    """$MINI_N8N_DB, else the user's data folder (XDG_DATA_HOME or ~/.local/share)/mini-n8n."""
    override = os.environ.get(ENV_DB)
    if override:
        return Path(override)
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "mini-n8n" / "executions.sqlite"


class ExecutionStore(SqlReads, ExecutionStoreBase):
    """Executions in one SQLite file. Open one per process; writes happen on the caller's thread."""

    damage = "the file is damaged"

    def __init__(self, path: str | os.PathLike[str] | None = None, *, retention: Retention | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.retention = retention if retention is not None else Retention.from_env()
        self._db = open_store_file(self.path)
        self._checkpointer = WalCheckpointer(self.path, BUSY_TIMEOUT_S)  # commits never wait for a checkpoint
        self._pid = os.getpid()
        self._started = start_time(self._pid)
        self._journals = JournalFolder(self.path, self._pid, self._started, spares=ENDS_FOLDED_TOGETHER + 1)
        self._leases = SqliteLeases(self._db, self._journals, self._pid, self._started,
                                    lambda start: self._insert_row(start, None, release=True, crashed=True))
        self._writers: dict[str, WriterState] = {}
        self._ends = EndsWaiting(self._fold_ends, after_s=FOLD_AFTER_S, most=ENDS_FOLDED_TOGETHER)
        self._housekeeper: threading.Thread | None = None
        self._last_prune: float | None = None
        self._last_workflow: tuple[bytes, str] = (b"", "")  # the last workflow attached, packed, and its hash
        self.mark_crashed()
        self._journals.remove_dead_spares()

    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection, for tables that share the file (Simple Memory)."""
        return self._db

    def close(self) -> None:
        self._ends.fold()
        for execution_id in list(self._writers):
            self._fold(self._writers[execution_id])
        if self._housekeeper is not None:
            self._housekeeper.join()
        self._journals.close()
        self._checkpointer.close()
        self._db.close()

    def _guard(self, what: str, work: Callable[[], T]) -> T:
        """Run `work`; SQLite's errors become errors naming the file (damage reported as such)."""
        try:
            return work()
        except sqlite3.Error as exc:
            if is_damage(exc):
                raise StoreDamaged(f"the execution store {self.path} is damaged ({exc}) while {what}") from None
            raise MiniN8nError(f"the execution store {self.path} failed while {what}: {exc}") from None

    def _transaction(self, what: str, work: Callable[[], T]) -> T:
        """`work` in one write transaction, the write lock taken up front (waits BUSY_TIMEOUT_S)."""
        db = self._db

        def run() -> T:
            self._checkpointer.wait_copied()
            db.execute("BEGIN IMMEDIATE")
            try:
                result = work()
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            self._checkpointer.written()
            return result

        return self._guard(what, run)

    def _retire(self, writer: WriterState) -> None:
        """A writer no longer attached, everything folded in: it hears no more runs, and its journal
        is kept emptied for the next execution, or removed."""
        writer.stop_listening()
        self._journals.retire(writer.journal)

    def _make_readable(self, execution_id: str | None) -> None:
        """A new execution of this process still only in its journal goes into the database (one
        fold) before it is read, and so do the ends journaled: this process reads what it has written."""
        self._ends.fold()
        writers = self._writers.values() if execution_id is None else [self._writers.get(execution_id)]
        for writer in [w for w in writers if w is not None and w.start is not None]:
            self._fold(writer)

    # ----- the lease (engine.store.sqlite_lease) ----------------------------------------------
    def release(self, state: ExecutionState) -> None:
        writer = self._writers.pop(state.id, None)
        if writer is not None:
            self._fold(writer)
            self._retire(writer)
        self._transaction(f"releasing execution {state.id}", lambda: self._db.execute(
            "UPDATE executions SET owner_pid=NULL, owner_start=NULL WHERE id=? AND owner_pid=?", (state.id, self._pid)))

    def mark_crashed(self) -> list[str]:
        """Executions left running (or never started) by a process that is gone are "crashed"; what
        their journals hold is folded in first (engine.store.sqlite_lease)."""
        gone = self._guard("looking for crashed executions", self._leases.running_of_dead)
        starts = self._journals.starts()  # read once: each execution's journals are looked up in it
        if not gone and all(same_process_alive(start.owner_pid, start.owner_start) for _path, start in starts):
            return []
        crashed, done = self._transaction("marking crashed executions", lambda: self._leases.mark_crashed(gone, starts))
        for path in done:
            path.unlink(missing_ok=True)
        return crashed

    # ----- writing, driven by an execution ----------------------------------------------------
    def attach(self, execution: Any, *, fresh: bool = False) -> None:
        """Claim `execution` (an engine.executor.Execution) and store it from now on. A `fresh`
        one (a new id, Engine.create) starts in its journal: its row reaches the database with
        its first fold, in that fold's transaction."""
        state: ExecutionState = execution.state
        if self._ends.overdue():
            self._ends.fold()
        workflow, workflow_crc = pack_workflow(state.workflow)
        if self._last_workflow[0] == workflow:  # run again unchanged: its hash is known
            digest = self._last_workflow[1]
        else:
            digest = workflow_hash(workflow)
            self._last_workflow = (workflow, digest)
        previous = self._writers.pop(state.id, None)
        if previous is not None:  # attached again in this process (resumed here): the old writer is done
            self._fold(previous)
            previous.stop_listening()
            previous.journal.close(remove=False)
        if fresh and previous is None:
            writer = self._start_in_journal(state, workflow, workflow_crc, digest)
        else:  # claimed; a resumed one serves again the runs stored after its boundary (Execution.recorded_ahead)
            writer = self._claim_and_store(state, workflow, workflow_crc, digest, ahead=len(execution.recorded_ahead or ()))
        self._writers[state.id] = writer
        execution.on_record = record = partial(self._on_record, state.id, writer)
        writer.unlisten = partial(execution.stop_recording, record)
        execution.on_checkpoint = self.checkpoint
        execution.on_detach = self.release

    def _start_in_journal(self, state: ExecutionState, workflow: bytes, workflow_crc: int, digest: str) -> WriterState:
        """A new execution's writer: its start record and first boundary journaled (no transaction)."""
        writer = WriterState(journal=self._journals.new(), execution_id=state.id, run_seq=0, boundary_seq=0, fresh=True,
                             salt=salt(state.id))
        writer.start = self._start_record(state, workflow, workflow_crc, digest)
        first = boundary_row(state, writer)
        head = encode_start(writer.start)
        writer.journal.append(head + encode_record([], first, writer.salt))
        writer.head = len(head)
        writer.unfolded.boundaries.append(first)
        writer.unfolded_since = time.monotonic()
        return writer

    def _claim_and_store(self, state: ExecutionState, workflow: bytes, workflow_crc: int, digest: str, *, ahead: int) -> WriterState:
        """An execution's writer, its row claimed (or inserted) and its first boundary written in one
        transaction; `ahead`: the runs stored after its stack's boundary, to be served again."""
        self._ends.fold()  # its row may be among them (resumed or run again in this process)

        def claim_and_write() -> tuple[WriterState, list[Path]]:
            db = self._db
            recovered: list[Path] = []
            # a new execution's row goes in at once; only an id already stored is claimed
            if db.execute(
                "INSERT OR IGNORE INTO executions (id, workflow_name, workflow_hash, mode, status, started_at, start_node,"
                " crc, owner_pid, owner_start, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (state.id, escape_surrogates(state.workflow.name), digest, state.mode, state.status, state.started_at, state.start_node,
                 fields_crc([None, None, None]), self._pid, self._started, time.time()),
            ).rowcount:
                db.execute("INSERT OR IGNORE INTO workflows (hash, data, crc) VALUES (?,?,?)",
                           (digest, bytearray(workflow), workflow_crc))  # bound without an adapter lookup, as apply_rows
                runs = boundary = 0
            else:
                self._leases.claim(state.id)
                recovered = self._leases.recover(state.id)[0]
                runs = last_run_seq(db, state.id)
                boundary = db.execute("SELECT COALESCE(MAX(seq), 0) FROM boundaries WHERE execution_id=?", (state.id,)).fetchone()[0]
            writer = WriterState(journal=self._journals.new(), execution_id=state.id, run_seq=int(runs),
                                 boundary_seq=int(boundary), fresh=not recovered and runs == 0 and boundary == 0,
                                 salt=salt(state.id))
            writer.ahead = ahead
            first = boundary_row(state, writer)
            if writer.fresh:  # no older boundary to delete (the statement is the fold's, compiled once)
                db.execute(INSERT_BOUNDARIES, first)
            else:
                apply_rows(db, state.id, Pending(boundaries=[first]))
            writer.folded_stack, writer.folded_seq = writer.stack, writer.boundary_seq
            return writer, recovered

        writer, recovered = self._transaction(f"storing execution {state.id}", claim_and_write)
        for path in recovered:
            path.unlink(missing_ok=True)
        head = encode_start(self._start_record(state, workflow, workflow_crc, digest))  # names the journal's execution
        writer.journal.append(head)
        writer.head = len(head)
        return writer

    def _start_record(self, state: ExecutionState, workflow: bytes, workflow_crc: int, digest: str) -> Start:
        return Start(state.id, self._pid, self._started, {
            "workflow_name": escape_surrogates(state.workflow.name), "mode": state.mode, "status": state.status,
            "started_at": state.started_at, "start_node": state.start_node}, digest, workflow, workflow_crc)

    def _on_record(self, execution_id: str, writer: WriterState, event: StoredEvent) -> None:
        """What the execution tells its store (Execution.tell); a finished run, the event every
        node run sends, goes straight to its writer."""
        if type(event) is NodeAfter:
            writer.add_run(execution_id, event)
        elif isinstance(event, RunUpdated):
            self._update_run(execution_id, self._writers.get(execution_id), event)
        elif isinstance(event, WorkflowAfter):
            ended = self._writers.pop(execution_id, None)
            if ended is not None and ended.ended is not None:  # its end journaled: folded in with others
                ended.stop_listening()
                self._ends.add(ended)  # pruned after, once they are in the database
                return
            if ended is not None:
                self._fold(ended)
                self._retire(ended)
            if self.retention.active:
                self._prune_in_background()

    def _update_run(self, execution_id: str, writer: WriterState | None, event: RunUpdated) -> None:
        """A run edited while paused: rewrite its row (written whole; later deltas build on the edit).
        A boundary that wrote an answer as a reference to this run is written again first, with
        the run as it was: a resumed execution reads the answer as it was given."""
        seq = writer.seq_of.get((event.node, event.run_index)) if writer is not None else None
        if writer is not None:
            if seq in writer.referenced:
                self._fold(writer)
                self._transaction(f"storing execution {execution_id}", lambda: self._answer_written_whole(execution_id, writer, seq))
            data, crc = writer.edit_run(event)  # not even journaled yet: edited where it waits
            self._fold(writer)
        else:
            data, crc = pack(event.task.to_json(for_store=True))
        self._transaction(f"updating a run of execution {execution_id}", lambda: rewrite_run(
            self._db, execution_id, seq, event.node, event.run_index, data, crc))

    def _answer_written_whole(self, execution_id: str, writer: WriterState, seq: int) -> None:
        """Inside a write transaction, everything journaled folded in: the last boundary row again,
        whole, with the answers that refer to run `seq` holding that run's JSON as stored now."""
        db = self._db
        original = next((value for at, _node, _index, value in self._run_values(execution_id, seq) if at == seq), None)
        last = db.execute("SELECT seq, runs, last_node FROM boundaries WHERE execution_id=? ORDER BY seq DESC LIMIT 1",
                          (execution_id,)).fetchone()
        writer.referenced.discard(seq)
        if original is None or last is None:
            return
        stack, kept = split(writer.stack)
        writer.stack = joined(resolve_references(stack, lambda wanted: original if wanted == seq else {MARK: ANSWERED_BY, "seq": wanted}), kept)
        apply_rows(db, execution_id, Pending(boundaries=[(execution_id, last[0], last[1], last[2], None, *pack(writer.stack))]))
        writer.folded_stack, writer.folded_seq, writer.deltas_folded = writer.stack, last[0], 0

    def checkpoint(self, state: ExecutionState, at_boundary: bool) -> None:
        """Journal the runs finished since the last call and, at a boundary, the resumable stack
        (one write). A change of status, pause or error goes to the database at once, with
        everything journaled before it, but for the end, which is journaled and folded in with
        other executions' ends (engine.store.ends_waiting); a new result (the last main node's
        output) and a new execution's start go with the next fold."""
        fields = state.__dict__  # read directly: each attribute of a model goes through its __getattr__ hook
        writer = self._writers.get(fields["id"])
        if writer is None:
            return
        row = _ROW_FIELDS(fields)
        runs, writer.new_runs = writer.new_runs, []
        row_changed = row != writer.row
        if at_boundary and (row_changed or not writer.may_leave_out_boundary(fields)):
            boundary = boundary_row(state, writer)
        else:  # none, or one inside an Agent's loop, which a resume goes over again (engine.store.loop_boundaries)
            boundary = None
        result = fields["result"]
        if result is not writer.result:  # the last main node's output: written with the next fold
            writer.result = result
            writer.row_due = state
        if not runs and boundary is None and not row_changed:
            return
        pending = writer.unfolded
        if not (pending.runs or pending.boundaries):
            writer.unfolded_since = time.monotonic()
        pending.runs += runs
        if boundary is not None:
            pending.boundaries.append(boundary)
        if row_changed:
            started = writer.fresh and writer.row is None and row[1:] == (None, None, None) and row[0] == "running"
            writer.row = row
            if row[0] in ENDED:  # its end: journaled (an end record), folded in with other executions' ends
                ended = row_status(state)
                record = encode_end(ended, writer.salt)
                writer.journal.append(encode_record(runs, boundary, writer.salt, writer.batch) + record if runs or boundary else record)
                writer.ended, writer.row_due = ended, None  # the end record holds the row as it is now
                return
            if not started:
                self._fold(writer, state, release=state.status in ENDED)
                return
            # a new execution started running: the row says so at the next fold (until then it
            # reads "new", which a dead owner turns into "crashed" just as it would "running")
            writer.row_due = state
        writer.journal.append(encode_record(runs, boundary, writer.salt, writer.batch))
        writer.records += 1
        if writer.records >= FOLD_EVERY or time.monotonic() - writer.unfolded_since > FOLD_AFTER_S:
            self._fold(writer)
        elif writer.timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            writer.timer = loop.call_later(FOLD_AFTER_S, self._fold_when_due, state.id)

    def _fold_when_due(self, execution_id: str) -> None:
        writer = self._writers.get(execution_id)
        if writer is not None:
            writer.timer = None
            self._fold(writer)

    def _fold(self, writer: WriterState, state: ExecutionState | None = None, *, release: bool = False) -> None:
        """Write the journaled rows (and `state`'s row, if given) in one transaction, then empty the journal."""
        prepared = self._fold_rows(writer, None if state is None else row_status(state), release=release)
        if prepared is not None:
            write, rows = prepared
            self._transaction(f"storing execution {writer.execution_id}", write)
            self._folded(writer, rows)

    def _fold_rows(self, writer: WriterState, row: RowStatus | None, *, release: bool) -> tuple[Callable[[], None], Pending] | None:
        """What a fold of `writer` writes (the writing, and the rows), None when nothing (never for a row given)."""
        if writer.timer is not None:
            writer.timer.cancel()
            writer.timer = None
        pending, start = writer.unfolded, writer.start
        due = writer.row_due
        writer.row_due = None
        if row is None and writer.ended is not None:  # its end, journaled
            row, release = writer.ended, True
        elif row is None and due is not None:
            row = row_status(due)
        if not pending and row is None and start is None:
            return None
        execution_id = writer.execution_id
        rows = pending
        if pending.boundaries:
            rows = Pending(runs=pending.runs, boundaries=[folded_boundary(writer, pending.boundaries)])

        def write() -> None:
            if start is not None:
                self._insert_row(start, row, release=release)
            elif row is not None:
                write_status(self._db, execution_id, row, release=release)
            apply_rows(self._db, execution_id, rows, first=start is not None, batch=writer.batch)

        return write, rows

    def _folded(self, writer: WriterState, rows: Pending) -> None:
        """After the transaction of a fold: what the next deltas start from, the journal emptied."""
        writer.start = writer.ended = None
        if rows.boundaries:
            folded = rows.boundaries[0]
            writer.deltas_folded = 0 if folded[4] is None else writer.deltas_folded + 1
            writer.folded_stack, writer.folded_seq = writer.stack, folded[1]
        writer.unfolded.clear()
        writer.records = 0
        writer.batch.clear()
        writer.journal.empty(writer.head)

    def _fold_ends(self, ended: list[WriterState]) -> None:
        """The ends journaled and what their journals hold, in one transaction (engine.store.ends_waiting);
        their journals become spares."""
        folds = []
        for writer in ended:
            prepared = self._fold_rows(writer, writer.ended, release=True)
            assert prepared is not None  # an end is always a row to write
            folds.append((writer, *prepared))

        def write() -> None:
            for _writer, write_rows, _rows in folds:
                write_rows()

        self._transaction(f"storing the end of execution{'s' if len(ended) > 1 else ''} "
                          f"{', '.join(writer.execution_id for writer in ended)}", write)
        for writer, _write, rows in folds:
            self._folded(writer, rows)
            self._retire(writer)
        if self.retention.active:  # with these ends among the finished executions it counts
            self._prune_in_background()

    def flush(self) -> None:
        """Put what this process journaled where other processes read it (the ends waiting to be
        folded in, new executions only in their journals)."""
        self._make_readable(None)

    def _insert_row(self, start: Start, row: RowStatus | None, *, release: bool, crashed: bool = False) -> bool:
        """A new execution's row (as `row` says now, else as it started) and its workflow. The id
        is new (Engine.create): one already stored is an error, not a row overwritten. `crashed`:
        its process is gone (recovery), stored as crashed and unowned unless another process took
        it in meanwhile (False then)."""
        started = start.row
        fields = row.fields if row is not None else (None, None, None)
        status, stopped = (row.status, row.stopped_at) if row is not None else ("crashed" if crashed else started["status"], None)
        owner = (None, None) if release or crashed else (start.owner_pid, start.owner_start)
        if not self._db.execute(
            f"INSERT{' OR IGNORE' if crashed else ''} INTO executions (id, workflow_name, workflow_hash, mode, status, started_at,"
            " start_node, stopped_at, error, result, pause, crc, owner_pid, owner_start, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (start.execution_id, started["workflow_name"], start.workflow_hash, started["mode"], status, started["started_at"],
             started["start_node"], stopped, *fields, fields_crc(fields), *owner, time.time())).rowcount:
            return False
        # bound as a bytearray: without an adapter lookup, as apply_rows
        self._db.execute("INSERT OR IGNORE INTO workflows (hash, data, crc) VALUES (?,?,?)",
                         (start.workflow_hash, bytearray(start.workflow), start.workflow_crc))
        return True

    # ----- housekeeping -------------------------------------------------------------------------
    def _prune_in_background(self) -> None:
        """After a run: apply the retention setting on a thread of its own with its own
        connection (at most once a minute per process), so the end of a run does not stall."""
        now = time.monotonic()
        if self._last_prune is not None and now - self._last_prune < PRUNE_INTERVAL_S:
            return
        self._last_prune = now
        retention, path = self.retention, self.path

        def work() -> None:
            try:
                with closing(sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_S)) as db:
                    prune_executions(db, retention)
            except sqlite3.Error:
                pass  # the next run's end tries again

        self._housekeeper = threading.Thread(target=work, name="mini-n8n store retention")
        self._housekeeper.start()

    def prune(self, retention: Retention, *, vacuum: bool = False) -> int:
        deleted = self._guard("pruning executions", lambda: prune_executions(self._db, retention))
        if vacuum:
            def compact() -> None:
                self._db.execute("VACUUM")
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

            self._guard("vacuuming", compact)
        return deleted

    def check(self) -> None:
        """The full integrity check (every page), read-only; raises StoreDamaged naming the file."""
        check_readonly(self.path, full=True)

    def _run_rows(self, execution_id: str, upto: int | None) -> list[tuple[Any, ...]]:
        return self._guard(f"reading execution {execution_id}", lambda: stored_runs(self._db, execution_id, upto, f" in {self.path}"))

    def prepare_resume(self, execution_id: str) -> Resumption:
        """Claim a paused or crashed execution and load it to continue: the runs after its last
        boundary that its resume serves again are kept (engine.resume_runs), the others dropped
        (the node that made them runs again)."""
        self._make_readable(execution_id)

        def claim() -> tuple[list[Path], str | None, list[tuple[int, str, int, Any]]]:
            status = self._leases.claim(execution_id)
            if status is None and self._leases.adopt_dead(execution_id):  # its process died before its first fold
                status = self._leases.claim(execution_id)
            if status is None:
                raise MiniN8nError(f'no execution "{execution_id}" in {self.path}')
            if status in ("running", "new"):  # its owner is gone (else the claim was refused): it crashed
                status = "crashed"
                self._db.execute("UPDATE executions SET status='crashed' WHERE id=?", (execution_id,))
            if status not in ("paused", "crashed"):
                raise MiniN8nError(f'execution "{execution_id}" is {status}; only paused or crashed executions resume')
            journals, ended = self._leases.recover(execution_id)
            if ended:  # its end was journaled before its process died: its row says how it ended now
                return journals, self._db.execute("SELECT status FROM executions WHERE id=?", (execution_id,)).fetchone()[0], []
            at_boundary, served = self._runs_to_serve(execution_id)
            drop_runs_after(self._db, execution_id, served[-1][0] if served else at_boundary, f" in {self.path}")
            return journals, None, served

        journals, ended, served = self._transaction(f"claiming execution {execution_id}", claim)
        for path in journals:
            path.unlink(missing_ok=True)
        if ended is not None:
            raise MiniN8nError(f'execution "{execution_id}" is {ended}; only paused or crashed executions resume')
        return self._resumption(execution_id, served)

    def delete(self, execution_id: str) -> bool:
        self._make_readable(execution_id)

        def remove() -> bool:
            row = self._db.execute("SELECT owner_pid, owner_start, workflow_hash FROM executions WHERE id=?", (execution_id,)).fetchone()
            if row is None:
                return False
            pid, started, digest = row
            if pid is not None and pid != self._pid and same_process_alive(pid, started):
                raise ExecutionBusy(execution_id, pid)
            for table in ("runs", "run_batches", "boundaries"):
                self._db.execute(f"DELETE FROM {table} WHERE execution_id=?", (execution_id,))
            self._db.execute("DELETE FROM executions WHERE id=?", (execution_id,))
            self._db.execute("DELETE FROM workflows WHERE hash=? AND NOT EXISTS (SELECT 1 FROM executions WHERE workflow_hash=?)",
                             (digest, digest))
            return True

        deleted = self._transaction(f"deleting execution {execution_id}", remove)
        if deleted:  # else the journal may be a running execution's, before its first fold
            for path, _start in self._journals.of(execution_id):
                path.unlink(missing_ok=True)
        return deleted
