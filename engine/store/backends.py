"""Which execution store to open: $MINI_N8N_DB names a SQLite file or a postgresql:// database."""

from __future__ import annotations

import os
from typing import Any

from .base import ExecutionStoreBase, Retention

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def store_target() -> str | None:
    return os.environ.get("MINI_N8N_DB") or None


def is_postgres(target: str | None) -> bool:
    return bool(target) and target.startswith(POSTGRES_SCHEMES)  # type: ignore[union-attr]


def open_store(target: str | None = None, *, retention: Retention | None = None) -> ExecutionStoreBase:
    """The store at `target` (default $MINI_N8N_DB, else the SQLite file in the user's data folder).
    psycopg is imported only for a PostgreSQL target: the desktop never needs it."""
    target = target if target is not None else store_target()
    if is_postgres(target):
        from .postgres_store import PostgresExecutionStore

        return PostgresExecutionStore(target, retention=retention)  # type: ignore[arg-type]
    from .sqlite_store import ExecutionStore

    return ExecutionStore(target, retention=retention)


def open_memory(store: ExecutionStoreBase) -> Any:
    """Simple Memory's table in the same store (an engine.services.MemoryStore)."""
    from .sqlite_store import ExecutionStore

    if isinstance(store, ExecutionStore):
        from .memory import SqliteMemoryStore

        return SqliteMemoryStore(store)
    from .postgres_memory import PostgresMemoryStore
    from .postgres_store import PostgresExecutionStore

    assert isinstance(store, PostgresExecutionStore)
    return PostgresMemoryStore(store)
