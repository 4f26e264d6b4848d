"""Connecting to the PostgreSQL execution store and keeping its tables in the current layout.

The layout version lives in the table mini_n8n_schema. Opening a database creates the tables
(version 0: nothing there yet) or migrates an older layout step by step, each step in one
transaction under an advisory lock, so processes starting together migrate once. A newer
layout than this code knows is refused and left as it is.
"""

from __future__ import annotations

from typing import Callable
from urllib.parse import urlsplit, urlunsplit

from ..errors import MiniN8nError

SCHEMA_VERSION = 2
MIGRATION_LOCK = 0x6D6E386E_0001  # pg_advisory_xact_lock key held while a layout is created or migrated
# libpq keepalives: a worker machine that vanishes without closing its connection is noticed
# (and its executions' leases freed) within about idle + interval * count seconds
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}

LAYOUT_1 = """
CREATE TABLE workflows (hash text PRIMARY KEY, data bytea NOT NULL, crc bigint NOT NULL);
CREATE TABLE executions (
    id text PRIMARY KEY,
    workflow_name text NOT NULL,
    workflow_hash text NOT NULL,
    mode text NOT NULL,
    status text NOT NULL,
    started_at double precision NOT NULL,
    stopped_at double precision,
    start_node text,
    error bytea,
    result bytea,
    pause bytea,
    crc bigint,
    owner_host text,
    owner_pid integer,
    owner_token text,
    updated_at double precision NOT NULL
);
CREATE INDEX executions_by_start ON executions (started_at);
CREATE INDEX executions_by_status ON executions (status, started_at);
CREATE INDEX executions_by_workflow ON executions (workflow_hash);
CREATE TABLE runs (
    execution_id text NOT NULL,
    seq integer NOT NULL,
    node text NOT NULL,
    run_index integer NOT NULL,
    base integer,
    task bytea NOT NULL,
    crc bigint NOT NULL,
    PRIMARY KEY (execution_id, seq)
);
CREATE TABLE boundaries (
    execution_id text NOT NULL,
    seq integer NOT NULL,
    runs integer NOT NULL,
    last_node text,
    base integer,
    stack bytea NOT NULL,
    crc bigint NOT NULL,
    PRIMARY KEY (execution_id, seq)
);
"""

# 1 -> 2: Simple Memory's conversations in the database too, so every worker reads the same one;
# and a stop request per execution, which the worker running it reads
MIGRATE_1_TO_2 = """
CREATE TABLE memory (
    workflow text NOT NULL,
    session text NOT NULL,
    seq integer NOT NULL,
    message text NOT NULL,
    PRIMARY KEY (workflow, session, seq)
);
ALTER TABLE executions ADD COLUMN stop_requested boolean NOT NULL DEFAULT false;
"""


def redact(url: str) -> str:
    """The URL without its password, to name the database in messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def connect(url: str):  # -> psycopg.Connection
    """An autocommit connection (transactions are explicit) to the store database."""
    try:
        import psycopg
    except ImportError:
        raise MiniN8nError(
            "a postgresql:// execution store needs the psycopg package: pip install 'mini-n8n[server]'") from None
    try:
        return psycopg.connect(url, autocommit=True, application_name="mini-n8n", **KEEPALIVES)
    except psycopg.Error as exc:
        raise MiniN8nError(f"cannot connect to the execution store {redact(url)}: {str(exc).strip()}") from None


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def _version(db) -> int:
    # a catalog query, not to_regclass: after waiting on an advisory lock the catalog cache may
    # not yet know a table another process has just created
    exists = db.execute("SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()"
                        " AND table_name = 'mini_n8n_schema')").fetchone()[0]
    if not exists:
        return 0
    row = db.execute("SELECT version FROM mini_n8n_schema").fetchone()
    return int(row[0]) if row else 0


def _migrate_1_to_2(db) -> None:
    for statement in _statements(MIGRATE_1_TO_2):
        db.execute(statement)


def _create(db) -> None:
    for statement in _statements(LAYOUT_1):
        db.execute(statement)
    db.execute("CREATE TABLE mini_n8n_schema (version integer NOT NULL)")
    db.execute("INSERT INTO mini_n8n_schema VALUES (1)")


STEPS: dict[int, Callable[..., None]] = {0: _create, 1: _migrate_1_to_2}  # from version N to N + 1


def prepare(db, where: str, *, upto: int = SCHEMA_VERSION) -> None:
    """Bring the database's tables to layout `upto` (the current one unless a test asks for an
    older one), one step per transaction."""
    version = _version(db)
    if version > SCHEMA_VERSION:
        raise MiniN8nError(
            f"the execution store {where} has layout version {version}, and this mini-n8n reads version "
            f"{SCHEMA_VERSION} (and migrates older ones) — a newer mini-n8n wrote it; it is left as it is")
    while version < upto:
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            version = _version(db)  # another process may have done this step meanwhile
            if version >= upto:
                break
            STEPS[version](db)
            db.execute("UPDATE mini_n8n_schema SET version=%s", (version + 1,))
            version += 1
