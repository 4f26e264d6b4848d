"""Simple Memory's conversations in the PostgreSQL store's database, shared by every worker."""

from __future__ import annotations

import json

from ..chat import ChatMessage
from .codec import pack
from .postgres_store import PostgresExecutionStore, text


class PostgresMemoryStore:
    """Conversations keyed by (workflow, session), appended message by message."""

    def __init__(self, store: PostgresExecutionStore) -> None:
        self._db = store.connection
        self._lock = store.lock

    def load(self, key: tuple[str, str]) -> list[ChatMessage]:
        with self._lock:
            rows = self._db.execute("SELECT message FROM memory WHERE workflow=%s AND session=%s ORDER BY seq",
                                    (text(key[0]), text(key[1]))).fetchall()
        return [ChatMessage.model_validate(json.loads(r[0])) for r in rows]

    def append(self, key: tuple[str, str], messages: list[ChatMessage]) -> None:
        """One transaction holding the session's lock, so two workers on one session never take the same seq."""
        workflow, session = text(key[0]), text(key[1])
        with self._lock, self._db.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"memory\x1f{workflow}\x1f{session}",))
            start = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM memory WHERE workflow=%s AND session=%s",
                                     (workflow, session)).fetchone()[0]
            self._db.cursor().executemany(
                "INSERT INTO memory (workflow, session, seq, message) VALUES (%s,%s,%s,%s)",
                [(workflow, session, start + i + 1, pack(m.to_json())[0].decode("utf-8")) for i, m in enumerate(messages)],
            )

    def clear(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._db.execute("DELETE FROM memory WHERE workflow=%s AND session=%s", (text(key[0]), text(key[1])))
