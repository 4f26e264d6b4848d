"""Real MCP servers from PyPI over stdio (mcp-server-time, mcp-server-git), driven by an agent run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.executor import Engine
from engine.hooks import Hooks, NodeAfter, NodeBefore
from tests.builders import agent_workflow, tool_call

MCP = "@n8n/n8n-nodes-langchain.mcpClientTool"
BIN = Path(sys.executable).parent


def server_command(name: str) -> str:
    found = BIN / name
    if not found.exists():
        pytest.fail(f"{name} is not installed next to {sys.executable}: install the dev extra (pip install -e .[dev])")
    return str(found)


def text_of(observation: str) -> str:
    """The text an MCP tool answered, from n8n's v3 observation: [{"response": <its content blocks>}]."""
    [item] = json.loads(observation)
    return "\n".join(block["text"] for block in item["response"])


def stdio(command: str, arguments: str = "", **extra: object) -> dict:
    return {"serverTransport": "stdio", "command": command, "arguments": arguments, "options": {"timeout": 30000}, **extra}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.fail("git is needed for the mcp-server-git test")
    path = tmp_path / "repo"
    path.mkdir()
    git = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.org", "-C", str(path)]
    subprocess.run([*git, "init", "-q"], check=True)
    (path / "notes.txt").write_text("first line\n")
    subprocess.run([*git, "add", "notes.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "Add the notes file"], check=True)
    (path / "notes.txt").write_text("first line\nsecond line\n")
    return path


async def test_time_server_listed_and_called_through_an_agent(engine: Engine) -> None:
    events: list[tuple[str, str]] = []
    hooks = Hooks(lambda e: events.append((type(e).__name__, e.node)) if isinstance(e, (NodeBefore, NodeAfter)) else None)
    wf = agent_workflow(
        [
            {"text": "", "toolCalls": [tool_call("get_current_time", {"timezone": "Asia/Tokyo"}, "t1")]},
            {"text": "", "toolCalls": [tool_call("convert_time", {"source_timezone": "Europe/Berlin", "time": "12:00", "target_timezone": "America/New_York"}, "t2")]},
            {"text": "It is noon in Berlin, 06:00 in New York."},
        ],
        tools=[("Time", MCP, stdio(server_command("mcp-server-time"), "--local-timezone UTC"))],
        agent_options={"returnIntermediateSteps": True},
    )
    state = await engine.run(wf, items=[{"json": {"chatInput": "What time is it in Tokyo?"}}], hooks=hooks)
    assert state.status == "success", state.error
    assert state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["tools"] == ["get_current_time", "convert_time"]
    steps = state.result[0]["json"]["intermediateSteps"]
    tokyo = json.loads(text_of(steps[0]["observation"]))
    assert tokyo["timezone"] == "Asia/Tokyo" and tokyo["datetime"].endswith("+09:00")
    converted = json.loads(text_of(steps[1]["observation"]))
    assert converted["source"]["datetime"].endswith("T12:00:00+01:00") or converted["source"]["datetime"].endswith("T12:00:00+02:00")
    assert converted["target"]["timezone"] == "America/New_York"
    assert state.result[0]["json"]["output"] == "It is noon in Berlin, 06:00 in New York."
    time_runs = [e for e in events if e[1] == "Time"]
    assert time_runs == [("NodeBefore", "Time"), ("NodeAfter", "Time")] * 2


async def test_time_server_error_reaches_the_model(engine: Engine) -> None:
    wf = agent_workflow(
        [{"text": "", "toolCalls": [tool_call("get_current_time", {"timezone": "Mars/Olympus_Mons"}, "t1")]}, {"text": "sorry"}],
        tools=[("Time", MCP, stdio(server_command("mcp-server-time")))],
        agent_options={"returnIntermediateSteps": True},
    )
    state = await engine.run(wf, items=[{"json": {"chatInput": "time on mars?"}}])
    assert state.status == "success"
    observation = json.loads(state.result[0]["json"]["intermediateSteps"][0]["observation"])
    assert "Mars/Olympus_Mons" in observation["error"]
    assert state.run_data["Time"][0].execution_status == "error"


async def test_git_server_on_a_repository_the_test_made(engine: Engine, repo: Path) -> None:
    wf = agent_workflow(
        [
            {"text": "", "toolCalls": [
                tool_call("git_log", {"repo_path": str(repo)}, "g1"),
                tool_call("git_diff_unstaged", {"repo_path": str(repo)}, "g2"),
            ]},
            {"text": "One commit; notes.txt has an unstaged second line."},
        ],
        tools=[("Git", MCP, stdio(server_command("mcp-server-git"), f"--repository {repo}",
                                  include="selected", includeTools=["git_log", "git_diff_unstaged", "git_status"]))],
        agent_options={"returnIntermediateSteps": True},
    )
    state = await engine.run(wf, items=[{"json": {"chatInput": "What changed?"}}])
    assert state.status == "success", state.error
    assert state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["tools"] == ["git_status", "git_diff_unstaged", "git_log"]
    log, diff = (text_of(s["observation"]) for s in state.result[0]["json"]["intermediateSteps"])
    assert "Add the notes file" in log
    assert "+second line" in diff


async def test_git_tool_failure_is_a_tool_error(engine: Engine, repo: Path) -> None:
    wf = agent_workflow(
        [{"text": "", "toolCalls": [tool_call("git_show", {"repo_path": str(repo), "revision": "no-such-rev"}, "g1")]}, {"text": "no"}],
        tools=[("Git", MCP, stdio(server_command("mcp-server-git"), f"--repository {repo}"))],
        agent_options={"returnIntermediateSteps": True},
    )
    state = await engine.run(wf, items=[{"json": {"chatInput": "show it"}}])
    observation = json.loads(state.result[0]["json"]["intermediateSteps"][0]["observation"])
    assert "no-such-rev" in observation["error"]
