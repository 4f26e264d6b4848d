"""What every execution store back end does (SQLite on the desktop, PostgreSQL for a server and its workers).

An execution is written as it runs: its row (workflow, mode, status, result), the node runs as
they finish, and an append-only log of boundaries (the resumable stack at each). One process
owns a running execution at a time (a lease: its pid in SQLite, an advisory lock held by its
connection in PostgreSQL); a dead owner's executions are
"crashed" and resume from their last boundary.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import Any, Iterator, NamedTuple

from ..errors import MiniN8nError
from ..hooks import NodeAfter
from ..run_data import ExecutionState, TaskData

ENV_PRUNE_MAX_AGE_DAYS = "MINI_N8N_PRUNE_MAX_AGE_DAYS"
ENV_PRUNE_MAX_COUNT = "MINI_N8N_PRUNE_MAX_COUNT"
FINISHED = ("success", "error", "cancelled", "crashed")  # what retention may delete


class ExecutionBusy(MiniN8nError):
    """Another live process owns the execution (it is running or held at a breakpoint there)."""

    def __init__(self, execution_id: str, pid: int, host: str | None = None) -> None:
        where = f"process {pid}" + (f" on {host}" if host else "")
        super().__init__(f"execution {execution_id} is already running in {where}")
        self.execution_id = execution_id
        self.pid = pid
        self.host = host


class Resumption(NamedTuple):
    """An execution claimed to resume, as of its last boundary, and the runs recorded after that
    boundary which its resume serves again, in order (engine.resume_runs): (node, run index, task)."""

    state: ExecutionState
    recorded: list[tuple[str, int, TaskData]]


class ExecutionSummary(NamedTuple):
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


class Retention(NamedTuple):
    """Which finished executions to keep, as n8n's EXECUTIONS_DATA_MAX_AGE / _PRUNE_MAX_COUNT."""

    max_age_days: float | None = None
    max_count: int | None = None

    @property
    def active(self) -> bool:
        return self.max_age_days is not None or self.max_count is not None

    @classmethod
    def from_env(cls) -> "Retention":
        """From $MINI_N8N_PRUNE_MAX_AGE_DAYS and $MINI_N8N_PRUNE_MAX_COUNT (unset: keep everything)."""
        return cls(_env_number(ENV_PRUNE_MAX_AGE_DAYS, float), _env_number(ENV_PRUNE_MAX_COUNT, int))


def _env_number(name: str, kind: type) -> Any:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = kind(text)
    except ValueError:
        raise MiniN8nError(f"${name} must be a {'whole ' if kind is int else ''}number, not {text!r}") from None
    if value < 0:
        raise MiniN8nError(f"${name} must not be negative, not {text!r}")
    return value


class ExecutionStoreBase(ABC):
    """The store interface the engine, CLI and editor use; each back end implements all of it."""

    path: Any  # where the store is, for messages: a file path, or a database URL without its password

    # ----- writing, driven by an execution
    @abstractmethod
    def attach(self, execution: Any, *, fresh: bool = False) -> None:
        """Claim `execution` (an engine.executor.Execution) for this process and store it from now
        on; raises ExecutionBusy if a live process owns it. `fresh`: a new id (Engine.create),
        which no stored execution has."""

    @abstractmethod
    def checkpoint(self, state: ExecutionState, at_boundary: bool) -> None:
        """Write status and, at a boundary, append the resumable stack (with the runs since the last)."""

    @abstractmethod
    def release(self, state: ExecutionState) -> None:
        """Give up this process's lease on the execution (it ended, or is left paused)."""

    def flush(self) -> None:
        """Put everything this process has written where other processes read it (a back end
        that writes everything at once has nothing to do)."""

    @abstractmethod
    def mark_crashed(self) -> list[str]:
        """Executions whose owner process is gone become "crashed"; returns their ids."""

    # ----- reading and housekeeping
    @abstractmethod
    def list(self, limit: int = 200) -> list[ExecutionSummary]:
        """The newest executions first."""

    @abstractmethod
    def exists(self, execution_id: str) -> bool: ...

    @abstractmethod
    def runs(self, execution_id: str, upto: int | None = None) -> Iterator[tuple[str, int, TaskData]]:
        """The stored runs in the order they finished (node, run index, task)."""

    @abstractmethod
    def load(self, execution_id: str, *, for_resume: bool = False) -> ExecutionState: ...

    @abstractmethod
    def prepare_resume(self, execution_id: str) -> Resumption:
        """Claim a paused or crashed execution and load it as of its last boundary, with the runs
        after that boundary its resume serves again."""

    @abstractmethod
    def delete(self, execution_id: str) -> bool: ...

    @abstractmethod
    def prune(self, retention: Retention, *, vacuum: bool = False) -> int:
        """Delete finished executions beyond `retention`; returns how many were deleted."""

    @abstractmethod
    def close(self) -> None: ...

    def check(self) -> None:
        """Check every stored value for damage, read-only; raises StoreDamaged naming the first bad one."""
        raise NotImplementedError

    def events(self, execution_id: str) -> list[NodeAfter]:
        """The stored runs as the node_after events they were, in the order they finished, so a
        stored execution reads (steps table, run log, CLI) as it did live."""
        return [
            NodeAfter(execution_id, node, run_index, task, task.metadata if task.metadata.get("node") is not None else None)
            for node, run_index, task in self.runs(execution_id)
        ]
