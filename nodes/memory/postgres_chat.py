"""Postgres Chat Memory (n8n's `memoryPostgresChat`, v1–v1.3): conversations in a PostgreSQL table.

As LangChain's PostgresChatMessageHistory, which n8n uses: the table (default
`n8n_chat_histories`) is created when missing with `id SERIAL, session_id VARCHAR(255), message
JSONB`; each message is a row (its stored form with `type` beside the data), read back in id
order. From v1.1 the Agent gets the last `contextWindowLength` turns, before that all of them.
The session ID is read as n8n's getSessionId does. The `postgres` credential gives host, port,
database, user, password and ssl; the password never appears in an error.
"""

import json
from typing import Any, Literal

from pydantic import Field

from engine.chat import ChatMessage
from engine.connection_types import AI_MEMORY, PortSpec
from engine.context import SupplyContext
from engine.credentials import CredentialError, credential_ref, scrub_secret
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from .buffer_window import session_id
from .stored_messages import from_stored, stored, window

CREDENTIAL_TYPE = "postgres"


class PostgresMemoryParams(NodeParams):
    sessionIdType: Literal["fromInput", "customKey"] = Field("fromInput", title="Session ID")
    sessionKey: str = Field("={{ $json.sessionId }}", title="Key")
    tableName: str = Field("n8n_chat_histories", title="Table Name", description="Created when it does not exist")
    contextWindowLength: int = Field(5, ge=1, le=1000, title="Context Window Length")


def table_sql(name: str) -> Any:
    """The table name as SQL: each dot-separated part quoted (n8n puts it in the text as it is)."""
    from psycopg import sql

    return sql.Identifier(*name.split("."))


class PostgresMemory:
    """One session's history in the table; a connection per load or save."""

    def __init__(self, conninfo: dict[str, Any], table: str, session: str, turns: int | None, node: str) -> None:
        self.conninfo = conninfo
        self.table = table
        self.session = session
        self.turns = turns
        self.node = node

    async def _run(self, statements: list[tuple[Any, tuple[Any, ...]]], fetch: bool = False) -> list[Any]:
        import psycopg
        from psycopg import sql

        create = sql.SQL("CREATE TABLE IF NOT EXISTS {} (id SERIAL PRIMARY KEY, session_id VARCHAR(255) NOT NULL, "
                         "message JSONB NOT NULL)").format(table_sql(self.table))
        try:
            async with await psycopg.AsyncConnection.connect(**self.conninfo, autocommit=True) as conn:
                try:
                    await conn.execute(create)
                except psycopg.errors.UniqueViolation:
                    pass  # created by another session at the same moment (LangChain ignores 23505 too)
                rows: list[Any] = []
                for statement, args in statements:
                    cursor = await conn.execute(statement, args)
                    if fetch:
                        rows.extend(await cursor.fetchall())
                return rows
        except psycopg.Error as exc:
            where = f"{self.conninfo.get('host')}:{self.conninfo.get('port')}/{self.conninfo.get('dbname')}"
            message = scrub_secret(str(exc).strip(), self.conninfo.get("password"))
            raise NodeOperationError(f"Postgres Chat Memory: {message}", node=self.node,
                                     description=f"PostgreSQL server {where}, table {self.table}") from None

    async def load_messages(self) -> list[ChatMessage]:
        from psycopg import sql

        query = sql.SQL("SELECT message FROM {} WHERE session_id = %s ORDER BY id").format(table_sql(self.table))
        rows = await self._run([(query, (self.session,))], fetch=True)
        messages = []
        for (doc,) in rows:
            doc = json.loads(doc) if isinstance(doc, str) else doc
            if isinstance(doc, dict):
                found = from_stored({"type": doc.get("type"), "data": {k: v for k, v in doc.items() if k != "type"}})
                if found is not None:
                    messages.append(found)
        return window(messages, self.turns)

    async def save_context(self, user_input: str, output: str) -> None:
        from psycopg import sql
        from psycopg.types.json import Jsonb

        insert = sql.SQL("INSERT INTO {} (session_id, message) VALUES (%s, %s)").format(table_sql(self.table))
        statements = []
        for message in (ChatMessage(role="user", content=user_input), ChatMessage(role="assistant", content=output)):
            doc = stored(message)
            statements.append((insert, (self.session, Jsonb({**doc["data"], "type": doc["type"]}))))
        await self._run(statements)


def conninfo(cred: dict[str, Any]) -> dict[str, Any]:
    """psycopg's connection arguments from n8n's postgres credential."""
    ssl = str(cred.get("ssl") or "disable")
    return {
        "host": str(cred.get("host") or "localhost"),
        "port": int(cred.get("port") or 5432),
        "dbname": str(cred.get("database") or "postgres"),
        "user": str(cred.get("user") or "postgres"),
        "password": str(cred.get("password") or ""),
        "sslmode": ssl if ssl in ("disable", "allow", "prefer", "require", "verify-ca", "verify-full") else "disable",
        "connect_timeout": int(cred.get("connectionTimeout") or 10),
    }


class PostgresChatMemory(NodeType):
    type = "@n8n/n8n-nodes-langchain.memoryPostgresChat"
    version = 1.3
    versions = (1, 1.1, 1.2, 1.3)
    display_name = "Postgres Chat Memory"
    description = "Keeps each chat session in a PostgreSQL table, across runs and restarts"
    group = "Memory"
    icon = "memory"
    inputs = ()
    outputs = (PortSpec(AI_MEMORY, "Memory"),)
    Params = PostgresMemoryParams
    implemented_parameters = frozenset({"sessionIdType", "sessionKey", "contextWindowLength", "tableName"})
    credential_types = (CREDENTIAL_TYPE,)

    async def supply_data(self, ctx: SupplyContext) -> PostgresMemory:
        params: PostgresMemoryParams = ctx.params()
        name = ctx.node.name
        version = float(ctx.node.typeVersion)
        session = session_id(ctx, params, max(version, 1.2))  # n8n reads the Session ID option in every version
        ref = credential_ref(ctx.node.credentials, CREDENTIAL_TYPE)
        try:
            cred = ctx.services.credentials.get(CREDENTIAL_TYPE, ref)
        except CredentialError as exc:
            raise NodeOperationError(str(exc), node=name) from None
        if not cred:
            raise NodeOperationError(f'Postgres Chat Memory "{name}" needs a postgres credential, and none is stored', node=name)
        turns = params.contextWindowLength if version >= 1.1 else None
        return PostgresMemory(conninfo(cred), params.tableName, session, turns, name)
