"""SQLite Chat Memory: a chat survives a restart (a new process reads what the last one wrote),
sessions and workflows stay apart, the window holds; the file is a real SQLite file."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from engine.executor import Engine
from engine.workflow import parse_workflow
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, link, node

ROOT = Path(__file__).resolve().parents[3]


def _workflow(reply: str, file: Path, turns: int = 5):
    doc = json.loads(agent_workflow([{"text": reply}], tools=[]).to_json())
    doc["nodes"].append(node("Memory", "mini-n8n.memorySqliteChat", {"file": str(file), "contextWindowLength": turns}))
    link(doc["connections"], "Memory", "AI Agent", "ai_memory")
    return parse_workflow(doc)


async def test_a_chat_survives_a_restart(engine: Engine, tmp_path: Path) -> None:
    file = tmp_path / "chat.sqlite"
    first = await engine.run(_workflow("Hello Ada", file), items=[chat_item("I am Ada", "s1")])
    assert first.status == "success", first.error
    script = textwrap.dedent(f"""
        import asyncio, json, sys
        sys.path.insert(0, {str(ROOT)!r})
        from engine.executor import Engine
        from engine.registry import builtin_registry
        from engine.workflow import parse_workflow
        from nodes.triggers.chat_trigger import chat_item
        doc = json.loads(sys.stdin.read())
        state = asyncio.run(Engine(builtin_registry()).run(parse_workflow(doc), items=[chat_item("Who am I?", "s1")]))
        msgs = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["messages"]
        print(json.dumps([[m["role"], m["content"]] for m in msgs if m["role"] != "system"]))
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], input=_workflow("You are Ada", file).to_json(),
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [["user", "I am Ada"], ["assistant", "Hello Ada"], ["user", "Who am I?"]]
    rows = sqlite3.connect(file).execute("SELECT session_id, message FROM chat_messages ORDER BY id").fetchall()
    assert [r[0] for r in rows] == ["s1"] * 4
    assert json.loads(rows[0][1]) == {"type": "human", "data": {"content": "I am Ada", "additional_kwargs": {}, "response_metadata": {}}}


async def test_sessions_stay_apart_and_the_window_holds(engine: Engine, tmp_path: Path) -> None:
    file = tmp_path / "chat.sqlite"
    for i in range(3):
        await engine.run(_workflow(f"answer {i}", file, turns=2), items=[chat_item(f"question {i}", "a")])
    await engine.run(_workflow("other", file, turns=2), items=[chat_item("elsewhere", "b")])
    state = await engine.run(_workflow("last", file, turns=2), items=[chat_item("question 3", "a")])
    msgs = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["messages"]
    assert [m["content"] for m in msgs if m["role"] != "system"] == ["question 1", "answer 1", "question 2", "answer 2", "question 3"]
