"""SQLite Chat Memory (mini-n8n's own `mini-n8n.memorySqliteChat`): Simple Memory that survives a
restart, with no server. Each session's messages are rows of one SQLite file (`$MINI_N8N_CHAT_DB`,
else `chat-memory.sqlite` in the user's data folder beside the execution store, else the node's
File option), in LangChain's stored message form, as the Postgres Chat Memory keeps them; the
Agent gets the last `contextWindowLength` turns. The session ID is read as Simple Memory v1.3 does.
"""

import asyncio
import json
import os
import sqlite3
from pathlib import Path
from typing import Literal

from pydantic import Field

from engine.chat import ChatMessage
from engine.connection_types import AI_MEMORY, PortSpec
from engine.context import SupplyContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from .buffer_window import session_id
from .stored_messages import from_stored, stored, window

ENV_FILE = "MINI_N8N_CHAT_DB"
_SCHEMA = ("CREATE TABLE IF NOT EXISTS chat_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, workflow TEXT NOT NULL, "
           "session_id TEXT NOT NULL, message TEXT NOT NULL)")
_INDEX = "CREATE INDEX IF NOT EXISTS chat_messages_session ON chat_messages (workflow, session_id, id)"


def default_file() -> Path:
    override = os.environ.get(ENV_FILE)
    if override:
        return Path(override)
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "mini-n8n" / "chat-memory.sqlite"


class SqliteMemoryParams(NodeParams):
    sessionIdType: Literal["fromInput", "customKey"] = Field("fromInput", title="Session ID")
    sessionKey: str = Field("={{ $json.sessionId }}", title="Key")
    contextWindowLength: int = Field(5, ge=1, le=1000, title="Context Window Length")
    file: str = Field("", title="File", description=f"Empty: ${ENV_FILE}, else chat-memory.sqlite in the data folder")


class SqliteMemory:
    """One session of one workflow in the file; each load and save is one short transaction."""

    def __init__(self, path: Path, workflow: str, session: str, turns: int, node: str) -> None:
        self.path = path
        self.workflow = workflow
        self.session = session
        self.turns = turns
        self.node = node

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30)
        conn.execute(_SCHEMA)
        conn.execute(_INDEX)
        return conn

    def _load(self) -> list[ChatMessage]:
        with self._connect() as conn:
            rows = conn.execute("SELECT message FROM chat_messages WHERE workflow = ? AND session_id = ? ORDER BY id",
                                (self.workflow, self.session)).fetchall()
        found = (from_stored(json.loads(text)) for (text,) in rows)
        return window([m for m in found if m is not None], self.turns)

    def _save(self, user_input: str, output: str) -> None:
        rows = [(self.workflow, self.session, json.dumps(stored(m), ensure_ascii=False))
                for m in (ChatMessage(role="user", content=user_input), ChatMessage(role="assistant", content=output))]
        with self._connect() as conn:
            conn.executemany("INSERT INTO chat_messages (workflow, session_id, message) VALUES (?, ?, ?)", rows)

    async def load_messages(self) -> list[ChatMessage]:
        try:
            return await asyncio.to_thread(self._load)
        except (sqlite3.Error, OSError, ValueError) as exc:
            raise NodeOperationError(f"SQLite Chat Memory: cannot read {self.path}: {exc}", node=self.node) from None

    async def save_context(self, user_input: str, output: str) -> None:
        try:
            await asyncio.to_thread(self._save, user_input, output)
        except (sqlite3.Error, OSError) as exc:
            raise NodeOperationError(f"SQLite Chat Memory: cannot write {self.path}: {exc}", node=self.node) from None


class SqliteChatMemory(NodeType):
    type = "mini-n8n.memorySqliteChat"
    version = 1
    display_name = "SQLite Chat Memory"
    description = "Remembers each chat session in a local SQLite file: a chat survives a restart, no server needed"
    group = "Memory"
    icon = "memory"
    inputs = ()
    outputs = (PortSpec(AI_MEMORY, "Memory"),)
    Params = SqliteMemoryParams

    async def supply_data(self, ctx: SupplyContext) -> SqliteMemory:
        params: SqliteMemoryParams = ctx.params()
        session = session_id(ctx, params, 1.3)
        path = Path(params.file).expanduser() if params.file else default_file()
        return SqliteMemory(path, ctx.workflow_id, session, params.contextWindowLength, ctx.node.name)
