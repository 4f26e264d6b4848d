"""The reading side both SQL back ends share: they hold the same tables (executions, workflows,
runs, boundaries) and differ only in the driver's placeholder (`?` in SQLite, `%s` in psycopg)
and in what a failed checksum means (a damaged file, a damaged row)."""

from __future__ import annotations

from typing import Any, Callable, Iterator, TypeVar

from ..errors import MiniN8nError
from ..json_delta import UnknownDelta, decode
from ..resume_runs import servable_prefix, waiting_agent
from ..run_data import ExecutionState, StackEntry, TaskData, TaskError
from ..workflow import parse_workflow
from .base import ExecutionSummary, Resumption
from .boundary_state import decode_boundary, split
from .codec import StoreDamaged, unpack
from .deltas import resolve_references
from .sqlite_file import fields_crc

T = TypeVar("T")
NEWER = "a newer mini-n8n wrote it, and this one cannot read it"  # of a row holding a json_delta.UnknownDelta


class SqlReads:
    """Listing and loading executions; a store supplies `_db`, `path`, `_guard` and `_sql`."""

    path: Any
    _db: Any
    damage: str  # what a bad checksum says about the store: "the file is damaged", "the row is damaged"

    def _guard(self, what: str, work: Callable[[], T]) -> T:
        raise NotImplementedError

    def _make_readable(self, execution_id: str | None) -> None:
        """Before a read: what this process holds of the execution (None: of each) not yet where
        reads look is put there (a back end that writes everything at once has nothing to do)."""

    def _sql(self, query: str) -> str:
        """`query`, written with `?` placeholders, in the driver's own style."""
        return query

    def _fetch(self, what: str, query: str, args: tuple[Any, ...], one: bool = False) -> Any:
        cursor = lambda: self._db.execute(self._sql(query), args)  # noqa: E731
        return self._guard(what, lambda: cursor().fetchone() if one else cursor().fetchall())

    def list(self, limit: int = 200) -> list[ExecutionSummary]:
        self._make_readable(None)
        rows = self._fetch("listing executions",
                           "SELECT id, workflow_name, mode, status, started_at, stopped_at, error, result, pause, crc"
                           " FROM executions ORDER BY started_at DESC LIMIT ?", (limit,))
        out = []
        for eid, name, mode, status, started, stopped, error, result, pause, crc in rows:
            self._verify_row(eid, [error, result, pause], crc)
            message = unpack(error, None, f"the error of execution {eid}")["message"] if error else None
            out.append(ExecutionSummary(eid, name, mode, status, started, stopped, message))
        return out

    def _verify_row(self, execution_id: str, fields: list[Any], crc: int | None) -> None:
        if crc is not None and fields_crc(fields) != crc:
            raise StoreDamaged(f"execution {execution_id} in {self.path} fails its checksum: {self.damage}")

    def exists(self, execution_id: str) -> bool:
        self._make_readable(execution_id)
        return self._fetch("reading", "SELECT 1 FROM executions WHERE id=?", (execution_id,), one=True) is not None

    def runs(self, execution_id: str, upto: int | None = None) -> Iterator[tuple[str, int, TaskData]]:
        """The stored runs in the order they finished (each decoded from the run it extends)."""
        self._make_readable(execution_id)
        for _seq, node, run_index, value in self._run_values(execution_id, upto):
            yield node, run_index, TaskData.model_validate(value)

    def _run_rows(self, execution_id: str, upto: int | None) -> list[tuple[Any, ...]]:
        """(seq, node, run index, base, task, crc) of each stored run up to seq `upto`, in order."""
        query = "SELECT seq, node, run_index, base, task, crc FROM runs WHERE execution_id=?"
        args: tuple[Any, ...] = (execution_id,)
        if upto is not None:
            query += " AND seq<=?"
            args += (upto,)
        return self._fetch(f"reading execution {execution_id}", query + " ORDER BY seq", args)

    def _run_values(self, execution_id: str, upto: int | None) -> Iterator[tuple[int, str, int, Any]]:
        """(seq, node, run index, the run's JSON) of each stored run, in the order they finished."""
        decoded: dict[int, Any] = {}
        for seq, node, run_index, base, task, crc in self._run_rows(execution_id, upto):
            where = f"run {seq} ({node}) of execution {execution_id} in {self.path}"
            value = unpack(task, crc, where)
            if base is not None:
                value = self._decoded(where, lambda: decode(value, decoded.get(base)))
            decoded[seq] = value
            yield seq, node, run_index, value

    def _last_boundary(self, execution_id: str) -> tuple[Any, int, str | None]:
        """The latest boundary (its stack, or its stack and state: boundary_state), run count and
        last node: its full ancestor, then each delta applied in turn."""
        rows = self._fetch(f"reading execution {execution_id}",
                           "SELECT seq, runs, last_node, base, stack, crc FROM boundaries WHERE execution_id=? ORDER BY seq",
                           (execution_id,))
        stack: Any = None
        runs, last_node = 0, None
        for seq, runs, last_node, base, data, crc in rows:
            where = f"boundary {seq} of execution {execution_id} in {self.path}"
            value = unpack(data, crc, where)
            stack = value if base is None else self._decoded(where, lambda: decode_boundary(value, stack))
        return stack or [], runs, last_node

    def _runs_to_serve(self, execution_id: str) -> tuple[int, list[tuple[int, str, int, Any]]]:
        """The run count of the last boundary, and the runs after it that a resume serves again
        (engine.resume_runs): (seq, node, run index, JSON) of those of the loop of the Agent that
        boundary holds waiting on a request, up to the first other run."""
        boundary, at_boundary, _last_node = self._last_boundary(execution_id)
        agent = waiting_agent(split(boundary)[0])
        if agent is None:
            return at_boundary, []
        after = [run for run in self._run_values(execution_id, None) if run[0] > at_boundary]
        return at_boundary, servable_prefix(after, agent)

    def _resumption(self, execution_id: str, served: list[tuple[int, str, int, Any]]) -> Resumption:
        """The execution claimed to resume, as of its last boundary, and the runs `served` as tasks."""
        return Resumption(self.load(execution_id, for_resume=True),
                          [(node, index, TaskData.model_validate(value)) for _seq, node, index, value in served])

    def _decoded(self, where: str, decoding: Callable[[], T]) -> T:
        """A stored delta decoded; `where` names the row in the error when it cannot be."""
        try:
            return decoding()
        except UnknownDelta as exc:
            raise MiniN8nError(f"{where} holds {exc}: {NEWER}") from None
        except ValueError as exc:
            raise StoreDamaged(f"{where} does not follow from the row it extends ({exc}): {self.damage}") from None

    def load(self, execution_id: str, *, for_resume: bool = False) -> ExecutionState:
        """The stored execution; `for_resume` keeps run data only up to its last boundary."""
        self._make_readable(execution_id)
        row = self._fetch(f"reading execution {execution_id}",
                          "SELECT e.mode, e.status, e.started_at, e.stopped_at, e.start_node, e.error, e.result, e.pause,"
                          " e.crc, w.data, w.crc FROM executions e LEFT JOIN workflows w ON w.hash = e.workflow_hash"
                          " WHERE e.id=?", (execution_id,), one=True)
        if row is None:
            raise MiniN8nError(f'no execution "{execution_id}" in {self.path}')
        mode, status, started, stopped, start_node, error, result, pause, crc, workflow, workflow_crc = row
        self._verify_row(execution_id, [error, result, pause], crc)
        if workflow is None:
            raise StoreDamaged(f"the workflow of execution {execution_id} is missing from {self.path}: {self.damage}")
        where = f"execution {execution_id} in {self.path}"
        boundary, at_boundary, last_node = self._last_boundary(execution_id)
        runs = list(self._run_values(execution_id, at_boundary if for_resume else None))
        stack, kept = split(boundary)
        stack = self._references_resolved(execution_id, stack, runs)
        kept = kept or {}
        state = ExecutionState(
            id=execution_id,
            workflow=parse_workflow(unpack(workflow, workflow_crc, f"the workflow of {where}"), f"execution {execution_id}"),
            mode=mode, status=status, startedAt=started, stoppedAt=stopped, startNode=start_node, lastNode=last_node,
            error=TaskError.model_validate(unpack(error, None, where)) if error else None,
            result=unpack(result, None, where) if result else None,
            stack=[StackEntry.model_validate(e) for e in stack],
            waiting=[StackEntry.model_validate(e) for e in kept.get("waiting", ())],
            nodeContext=kept.get("nodeContext", {}),
            pause=unpack(pause, None, where) if pause else None,
        )
        for _seq, node, _index, value in runs:
            state.run_data.setdefault(node, []).append(TaskData.model_validate(value))
        return state

    def _references_resolved(self, execution_id: str, stack: list[Any], runs: list[tuple[int, str, int, Any]]) -> list[Any]:
        """The stack with each reference a boundary wrote made whole (deltas.resolve_references):
        an answer read from the run and the request it refers to, a tool's entry from its request."""
        by_seq = {seq: value for seq, _node, _index, value in runs}

        def run_json(seq: int) -> Any:
            if seq not in by_seq:
                raise StoreDamaged(f"the last boundary of execution {execution_id} in {self.path} refers to run {seq},"
                                   f" which is not stored: {self.damage}")
            return by_seq[seq]

        try:
            return resolve_references(stack, run_json)
        except UnknownDelta as exc:
            raise MiniN8nError(f"the last boundary of execution {execution_id} in {self.path} holds {exc}: {NEWER}") from None
        except (KeyError, IndexError, TypeError) as exc:
            raise StoreDamaged(f"the last boundary of execution {execution_id} in {self.path} holds a reference that"
                               f" cannot be read ({exc!r}): {self.damage}") from None
