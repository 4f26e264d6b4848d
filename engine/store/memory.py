"""Simple Memory's conversations in the execution store's file, so they outlive the process."""

from __future__ import annotations

import json

from ..chat import ChatMessage
from ..json_text import escape_surrogates
from .codec import pack
from .sqlite_store import ExecutionStore


class SqliteMemoryStore:
    """Conversations keyed by (workflow, session), appended message by message."""

    def __init__(self, store: ExecutionStore) -> None:
        self._db = store.connection

    def load(self, key: tuple[str, str]) -> list[ChatMessage]:
        key = _text_key(key)
        rows = self._db.execute("SELECT message FROM memory WHERE workflow=? AND session=? ORDER BY seq", key)
        return [ChatMessage.model_validate(json.loads(r[0])) for r in rows]

    def append(self, key: tuple[str, str], messages: list[ChatMessage]) -> None:
        key = _text_key(key)
        """Append in one write transaction, so two processes on one session never take the same seq."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            start = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM memory WHERE workflow=? AND session=?", key).fetchone()[0]
            self._db.executemany(
                "INSERT INTO memory (workflow, session, seq, message) VALUES (?,?,?,?)",
                [(*key, start + i + 1, pack(m.to_json())[0].decode("ascii")) for i, m in enumerate(messages)],
            )
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def clear(self, key: tuple[str, str]) -> None:
        key = _text_key(key)
        self._db.execute("DELETE FROM memory WHERE workflow=? AND session=?", key)


def _text_key(key: tuple[str, str]) -> tuple[str, str]:
    """A memory key SQLite can store (a session id may hold a lone surrogate)."""
    return escape_surrogates(key[0]), escape_surrogates(key[1])
