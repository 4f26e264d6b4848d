"""Simple Memory's session key per typeVersion, as n8n's MemoryBufferWindow v1–v1.3."""

from __future__ import annotations

from typing import Any

from engine.executor import Engine
from engine.workflow import parse_workflow
from tests.builders import AGENT, CHAT_TRIGGER, MANUAL_TRIGGER, MEMORY, SCRIPTED, link, node


def memory_workflow(version: float, params: dict[str, Any], trigger: str = MANUAL_TRIGGER) -> Any:
    connections: dict = {}
    link(connections, "Start", "AI Agent")
    link(connections, "Model", "AI Agent", "ai_languageModel")
    link(connections, "Memory", "AI Agent", "ai_memory")
    return parse_workflow({"name": "memory", "nodes": [
        node("Start", trigger),
        node("AI Agent", AGENT, {"options": {}}, typeVersion=3),
        node("Model", SCRIPTED, {"replies": [{"text": "one"}, {"text": "two"}]}),
        node("Memory", MEMORY, params, typeVersion=version),
    ], "connections": connections})


ITEMS = [{"json": {"chatInput": "hi", "sessionId": "s1", "user": "u1"}},
         {"json": {"chatInput": "again", "sessionId": "s2", "user": "u2"}}]


async def sessions(engine: Engine, version: float, params: dict[str, Any], items: list[dict] = ITEMS) -> Any:
    state = await engine.run(memory_workflow(version, params), items=items)
    store = engine.services.memory._data  # the in-process store: which sessions got messages
    return state, sorted(key[1] for key in store)


async def test_v1_uses_the_fixed_key_chat_history(engine: Engine) -> None:
    state, keys = await sessions(engine, 1, {})
    assert state.status == "success", state.error
    assert keys == ["chat_history"]


async def test_v1_1_reads_the_session_id_expression(engine: Engine) -> None:
    _state, keys = await sessions(engine, 1.1, {}, items=ITEMS[1:])
    assert keys == ["s2"]
    _state, keys = await sessions(Engine(engine.registry), 1.1, {"sessionKey": "={{ $json.user }}"}, items=ITEMS[1:])
    assert keys == ["u2"]


async def test_v1_2_custom_key_and_its_empty_key_error(engine: Engine) -> None:
    _state, keys = await sessions(engine, 1.2, {"sessionIdType": "customKey", "sessionKey": "={{ $json.user }}"}, items=ITEMS[1:])
    assert keys == ["u2"]
    state, _keys = await sessions(Engine(engine.registry), 1.2, {"sessionIdType": "customKey"})
    assert state.status == "error" and state.error.description == "Key parameter is empty"


async def test_v1_3_without_a_session_id_fails_as_n8n_does(engine: Engine) -> None:
    state, _keys = await sessions(engine, 1.3, {}, items=[{"json": {"chatInput": "hi"}}])
    assert state.status == "error"
    # n8n's words: the Agent fails "Error in sub-node Memory"; the Memory's own run holds its error
    assert (state.error.message, state.error.description) == ("Error in sub-node Memory", "No session ID found")
    [memory] = state.run_data["Memory"]
    assert memory.execution_status == "error" and memory.error.message == "No session ID found"
    assert "'sessionId'" in (memory.error.description or "")
    assert [s.previous_node for s in memory.source] == ["AI Agent"]


async def test_from_input_falls_back_to_the_chat_triggers_session(engine: Engine) -> None:
    connections: dict = {}
    link(connections, "Chat", "Drop Session")
    link(connections, "Drop Session", "AI Agent")
    link(connections, "Model", "AI Agent", "ai_languageModel")
    link(connections, "Memory", "AI Agent", "ai_memory")
    wf = parse_workflow({"name": "fallback", "nodes": [
        node("Chat", CHAT_TRIGGER),
        node("Drop Session", "n8n-nodes-base.set", {"assignments": {"assignments": [
            {"name": "chatInput", "value": "={{ $json.chatInput }}", "type": "string"}]}}, typeVersion=3.4),
        node("AI Agent", AGENT, {"options": {}}, typeVersion=3),
        node("Model", SCRIPTED, {"replies": [{"text": "one"}]}),
        node("Memory", MEMORY, {}, typeVersion=1.3),
    ], "connections": connections})
    state = await engine.run(wf, start="Chat", items=[{"json": {"chatInput": "hi", "sessionId": "from-trigger"}}])
    assert state.status == "success", state.error
    assert [key[1] for key in engine.services.memory._data] == ["from-trigger"]


async def test_a_session_id_that_is_not_text_is_refused(engine: Engine) -> None:
    state, _keys = await sessions(engine, 1.3, {}, items=[{"json": {"chatInput": "hi", "sessionId": {"no": 1}}}])
    assert state.status == "error" and state.error.description == "Invalid session ID"
    state, keys = await sessions(Engine(engine.registry), 1.3, {}, items=[{"json": {"chatInput": "hi", "sessionId": 7}}])
    assert state.status == "success" and keys == ["7"]
