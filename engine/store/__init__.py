"""The execution store: its interface (base), the SQLite back end with its boundary journal, the
PostgreSQL back end (imported only when $MINI_N8N_DB names one), and Simple Memory's table."""

from .backends import is_postgres, open_memory, open_store
from .base import ExecutionBusy, ExecutionStoreBase, ExecutionSummary, Resumption, Retention
from .codec import StoreDamaged
from .memory import SqliteMemoryStore
from .sqlite_file import SCHEMA_VERSION
from .sqlite_store import ENV_DB, ExecutionStore, default_path

__all__ = [
    "ENV_DB", "SCHEMA_VERSION", "ExecutionBusy", "ExecutionStore", "ExecutionStoreBase", "ExecutionSummary", "Resumption",
    "Retention", "SqliteMemoryStore", "StoreDamaged", "default_path", "is_postgres", "open_memory", "open_store",
]
