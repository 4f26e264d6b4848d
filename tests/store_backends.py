"""The execution store's tests run on both back ends: a SQLite file, and PostgreSQL (a schema of
its own per test in the database `test` on 127.0.0.1:5432; $MINI_N8N_TEST_PG overrides the URL).

`store_target` is the store's location (a path or a postgresql:// URL), also set as $MINI_N8N_DB
so CLI subprocesses use it; `sql` runs a statement on either back end's connection."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import quote

import pytest

PG_ENV = "MINI_N8N_TEST_PG"
PG_DEFAULT = "postgresql://root@127.0.0.1:5432/test"
BACKENDS = ["sqlite", "postgresql"]


def pg_server() -> str:
    return os.environ.get(PG_ENV, PG_DEFAULT)


def pg_unreachable() -> str | None:
    """Why PostgreSQL cannot be used here (None when it can)."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (pip install -e '.[server]')"
    try:
        with psycopg.connect(pg_server(), connect_timeout=3):
            return None
    except psycopg.Error as exc:
        return f"PostgreSQL at {pg_server()} is unreachable: {str(exc).strip().splitlines()[0]}"


def with_schema(url: str, schema: str) -> str:
    joiner = "&" if "?" in url else "?"
    return f"{url}{joiner}options={quote(f'-csearch_path={schema}')}"


class PgSchema:
    """A schema of its own in the test database, dropped afterwards: runs never collide."""

    def __init__(self) -> None:
        import psycopg

        self.name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(pg_server(), autocommit=True) as db:
            db.execute(f"CREATE SCHEMA {self.name}")
        self.url = with_schema(pg_server(), self.name)

    def drop(self) -> None:
        import psycopg

        with psycopg.connect(pg_server(), autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {self.name} CASCADE")


def pg_schema_or_skip() -> PgSchema:
    reason = pg_unreachable()
    if reason is not None:
        pytest.skip(reason)
    return PgSchema()


@pytest.fixture(params=BACKENDS)
def store_target(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The store's location on each back end, also as $MINI_N8N_DB."""
    if request.param == "sqlite":
        target = str(tmp_path / "store" / "executions.sqlite")
        monkeypatch.setenv("MINI_N8N_DB", target)
        yield target
        return
    schema = pg_schema_or_skip()
    monkeypatch.setenv("MINI_N8N_DB", schema.url)
    try:
        yield schema.url
    finally:
        schema.drop()


@pytest.fixture
def pg_target(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A PostgreSQL store's URL (a schema of its own), also as $MINI_N8N_DB."""
    schema = pg_schema_or_skip()
    monkeypatch.setenv("MINI_N8N_DB", schema.url)
    try:
        yield schema.url
    finally:
        schema.drop()


def is_pg(target: str) -> bool:
    return target.startswith("postgresql://")


def sql(store: Any, query: str, *args: Any) -> list[tuple[Any, ...]]:
    """Run `query` (with ? placeholders) on the store's own connection, after what the store
    holds back (ends journaled) is in the database; the rows it returns."""
    from engine.store import ExecutionStore

    store.flush()
    if isinstance(store, ExecutionStore):
        return store.connection.execute(query, args).fetchall()
    with store.lock:
        cursor = store.connection.execute(query.replace("?", "%s"), args)
        return cursor.fetchall() if cursor.description else []


def outputs(state: Any) -> dict[str, Any]:
    """An execution's (ExecutionState) runs of each node by their output items, as plain JSON (no
    times): what a resumed run is compared by with the run never stopped."""
    return {node: [json.loads(json.dumps(task.data)) for task in tasks] for node, tasks in sorted(state.run_data.items())}
