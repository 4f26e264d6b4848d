"""Postgres and Redis Chat Memory against the real servers of this machine (PostgreSQL on
127.0.0.1:5432 with trust auth, database `test`; Redis on 6379): what an agent saves is stored
as LangChain stores it, a later run (another process alike) reads it back, the window holds."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from engine.credentials import FileCredentialStore
from engine.executor import Engine
from engine.registry import Registry
from engine.services import Services
from engine.workflow import parse_workflow
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, link, node

PG = {"host": "127.0.0.1", "port": 5432, "database": "test", "user": "postgres", "password": ""}
REDIS = {"host": "127.0.0.1", "port": 6379, "database": 0}


def _postgres_up() -> bool:
    try:
        import psycopg

        with psycopg.connect(host=PG["host"], port=PG["port"], dbname=PG["database"], user=PG["user"], connect_timeout=3):
            return True
    except Exception:
        return False


def _redis_up() -> bool:
    try:
        import redis

        return bool(redis.Redis(host=REDIS["host"], port=REDIS["port"], socket_connect_timeout=3).ping())
    except Exception:
        return False


needs_postgres = pytest.mark.skipif(not _postgres_up(), reason="no PostgreSQL server on 127.0.0.1:5432 (db test, trust auth)")
needs_redis = pytest.mark.skipif(not _redis_up(), reason="no Redis server on 127.0.0.1:6379")


def _workflow(memory_type: str, cred_type: str, params: dict, info: Any, replies: list) -> Any:
    doc = json.loads(agent_workflow(replies, tools=[]).to_json())
    mem = node("Memory", memory_type, params)
    mem["credentials"] = info.reference()
    doc["nodes"].append(mem)
    link(doc["connections"], "Memory", "AI Agent", "ai_memory")
    return parse_workflow(doc)


async def _two_runs(registry: Registry, tmp_path: Path, memory_type: str, cred_type: str, cred: dict, params: dict) -> Any:
    store = FileCredentialStore(tmp_path / "credentials.json")
    info = store.save(cred_type, "server", {k: str(v) for k, v in cred.items()})
    session = "s-" + uuid.uuid4().hex[:8]
    first = await Engine(registry, Services(credentials=store)).run(
        _workflow(memory_type, cred_type, params, info, [{"text": "Hello Ada"}]), items=[chat_item("I am Ada", session)])
    assert first.status == "success", first.error
    second = await Engine(registry, Services(credentials=store)).run(  # a new engine: nothing kept in process
        _workflow(memory_type, cred_type, params, info, [{"text": "You are Ada"}]), items=[chat_item("Who am I?", session)])
    assert second.status == "success", second.error
    sent = second.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["messages"]
    assert [(m["role"], m["content"]) for m in sent if m["role"] != "system"] == [
        ("user", "I am Ada"), ("assistant", "Hello Ada"), ("user", "Who am I?")]
    return session


@needs_postgres
async def test_postgres_memory_stores_rows_as_langchain_does(registry: Registry, tmp_path: Path) -> None:
    import psycopg

    table = "mini_n8n_test_" + uuid.uuid4().hex[:8]
    try:
        session = await _two_runs(registry, tmp_path, "@n8n/n8n-nodes-langchain.memoryPostgresChat", "postgres", PG,
                                  {"tableName": table, "contextWindowLength": 1})
        with psycopg.connect(host=PG["host"], port=PG["port"], dbname=PG["database"], user=PG["user"]) as conn:
            rows = conn.execute(f"SELECT session_id, message FROM {table} ORDER BY id").fetchall()
        assert [r[0] for r in rows] == [session] * 4
        assert rows[0][1] == {"type": "human", "content": "I am Ada", "additional_kwargs": {}, "response_metadata": {}}
        assert rows[1][1] == {"type": "ai", "content": "Hello Ada", "additional_kwargs": {}, "response_metadata": {},
                              "tool_calls": [], "invalid_tool_calls": []}
    finally:
        with psycopg.connect(host=PG["host"], port=PG["port"], dbname=PG["database"], user=PG["user"], autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {table}")


@needs_postgres
async def test_postgres_memory_errors_name_the_server(registry: Registry, tmp_path: Path) -> None:
    store = FileCredentialStore(tmp_path / "credentials.json")
    info = store.save("postgres", "wrong", {**{k: str(v) for k, v in PG.items()}, "port": "1", "password": "hunter22"})
    wf = _workflow("@n8n/n8n-nodes-langchain.memoryPostgresChat", "postgres", {}, info, [{"text": "x"}])
    state = await Engine(registry, Services(credentials=store)).run(wf, items=[chat_item("hi", "s")])
    assert state.status == "error"
    assert state.error.message.startswith("Postgres Chat Memory:")
    assert "hunter22" not in state.model_dump_json()


@needs_redis
async def test_redis_memory_keeps_a_list_per_session_with_ttl(registry: Registry, tmp_path: Path) -> None:
    import redis

    session = await _two_runs(registry, tmp_path, "@n8n/n8n-nodes-langchain.memoryRedisChat", "redis", REDIS,
                              {"sessionTTL": 60, "contextWindowLength": 3})
    client = redis.Redis(host=REDIS["host"], port=REDIS["port"], decode_responses=True)
    try:
        newest_first = [json.loads(v) for v in client.lrange(session, 0, -1)]
        assert [m["data"]["content"] for m in newest_first] == ["You are Ada", "Who am I?", "Hello Ada", "I am Ada"]
        assert newest_first[-1] == {"type": "human", "data": {"content": "I am Ada", "additional_kwargs": {}, "response_metadata": {}}}
        assert 0 < client.ttl(session) <= 60
    finally:
        client.delete(session)
