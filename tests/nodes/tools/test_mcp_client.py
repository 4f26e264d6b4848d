"""MCP Client Tool: streamable HTTP against an SDK-built server; start-up and tool failures named."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Iterator

import pytest

from engine.executor import Engine
from tests.builders import agent_workflow, tool_call
from tests.nodes.tools.agent_runs import answer_of
from tests.nodes.tools.mcp_servers import http_mcp_server

MCP = "@n8n/n8n-nodes-langchain.mcpClientTool"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with http_mcp_server() as url:
        yield url


def http_params(url: str, **extra: object) -> dict:
    return {"serverTransport": "httpStreamable", "endpointUrl": url, "options": {"timeout": 20000}, **extra}


async def run(engine: Engine, params: dict, calls: list[dict], *, replies_after: int = 1, version: float | None = None):
    replies = [{"text": "", "toolCalls": calls}] if calls else []
    replies += [{"text": "done"}] * replies_after
    wf = agent_workflow(replies, tools=[("MCP", MCP, params)], agent_options={"returnIntermediateSteps": True})
    if version is not None:
        wf.node("MCP").typeVersion = version
    return await engine.run(wf, items=[{"json": {"chatInput": "go"}}])


async def test_http_tools_are_listed_and_called(engine: Engine, endpoint: str) -> None:
    state = await run(engine, http_params(endpoint), [tool_call("add", {"a": 17, "b": 25}, "c1"), tool_call("shout", {"word": "hi"}, "c2")])
    assert state.status == "success", state.error
    seen = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["tools"]
    assert seen == ["add", "shout", "explode"]
    steps = state.result[0]["json"]["intermediateSteps"]
    assert [(s["action"]["tool"], answer_of(s["observation"])) for s in steps] == [("MCP", "42"), ("MCP", "HI!")]
    runs = state.run_data["MCP"]
    assert [r.input["ai_tool"][0][0]["json"] for r in runs] == [{"a": 17, "b": 25, "tool": "add"}, {"word": "hi", "tool": "shout"}]
    assert runs[0].metadata["toolCallId"] == "c1"


async def test_include_selected_and_except_filter_the_tools(engine: Engine, endpoint: str) -> None:
    state = await run(engine, http_params(endpoint, include="selected", includeTools=["shout"]), [])
    assert state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["tools"] == ["shout"]
    state = await run(engine, http_params(endpoint, include="except", excludeTools=["explode"]), [])
    assert state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["tools"] == ["add", "shout"]


async def test_selecting_a_tool_the_server_lacks_is_named(engine: Engine, endpoint: str) -> None:
    state = await run(engine, http_params(endpoint, include="selected", includeTools=["shout", "fly"]), [])
    assert state.status == "error"
    assert state.error.description == "The MCP server does not offer the selected tool 'fly'; it offers add, shout, explode"


async def test_failing_tool_is_an_error_the_model_reads(engine: Engine, endpoint: str) -> None:
    state = await run(engine, http_params(endpoint), [tool_call("explode", {"reason": "testing"}, "c1")])
    assert state.status == "success"
    observation = answer_of(state.result[0]["json"]["intermediateSteps"][0]["observation"])
    assert observation.startswith("Error: ") and "exploded because testing" in observation
    assert state.run_data["MCP"][0].execution_status == "error"


async def test_server_without_tools_is_named() -> None:
    from engine.executor import Engine as _Engine
    from engine.registry import builtin_registry

    with http_mcp_server("--no-tools") as url:
        state = await run(_Engine(builtin_registry()), http_params(url), [])
    assert state.status == "error"
    assert state.error.description == "MCP Server returned no tools"
    assert state.error.node == "MCP"


async def test_unreachable_endpoint_is_named(engine: Engine) -> None:
    from tests.nodes.tools.mcp_servers import free_port

    url = f"http://127.0.0.1:{free_port()}/mcp"
    state = await run(engine, http_params(url, options={"timeout": 5000}), [])
    assert state.status == "error"
    assert state.error.description.startswith(f"Could not connect to your MCP server at {url}")


async def test_missing_command_is_named(engine: Engine) -> None:
    params = {"serverTransport": "stdio", "command": "no-such-mcp-server-command"}
    state = await run(engine, params, [])
    assert state.status == "error"
    assert state.error.description == "Could not start the MCP server: the command 'no-such-mcp-server-command' was not found"


async def test_server_exiting_at_start_up_is_named_with_its_stderr(engine: Engine) -> None:
    params = {
        "serverTransport": "stdio", "command": sys.executable,
        "arguments": "-c \"import sys; print('missing API key', file=sys.stderr); sys.exit(2)\"",
    }
    state = await run(engine, params, [])
    assert state.status == "error"
    assert "exited during start-up; it wrote: missing API key" in state.error.description


async def test_hanging_server_is_stopped_by_the_timeout(engine: Engine) -> None:
    params = {
        "serverTransport": "stdio", "command": sys.executable, "arguments": "-c \"import time; time.sleep(60)\"",
        "options": {"timeout": 500},
    }
    state = await run(engine, params, [])
    assert state.status == "error"
    assert "did not answer within 0.5 s while starting" in state.error.description


async def test_bad_environment_line_is_named(engine: Engine) -> None:
    params = {"serverTransport": "stdio", "command": "x", "environment": "GOOD=1\nnot a pair"}
    state = await run(engine, params, [])
    assert state.error.description == 'Line 2 of the environment of node "MCP" is not NAME=value: not a pair'


async def test_stdio_server_lists_once_per_execution_and_starts_per_call(engine: Engine, tmp_path) -> None:
    from tests.nodes.tools.mcp_servers import SERVER

    starts = tmp_path / "starts"
    params = {"serverTransport": "stdio", "command": sys.executable, "arguments": f"{SERVER} stdio {starts}"}
    wf = agent_workflow(
        [
            {"text": "", "toolCalls": [tool_call("add", {"a": 1, "b": 2}, "c1")]},
            {"text": "", "toolCalls": [tool_call("shout", {"word": "ok"}, "c2")]},
            {"text": "done"},
        ],
        tools=[("MCP", MCP, params)], agent_options={"returnIntermediateSteps": True},
    )
    state = await engine.run(wf, items=[{"json": {"chatInput": "go"}}])
    assert state.status == "success", state.error
    assert [answer_of(s["observation"]) for s in state.result[0]["json"]["intermediateSteps"]] == ["3", "OK!"]
    assert starts.read_text().count("start") == 3  # one listing for three rounds, one start per call


async def test_sse_transport_of_version_1_nodes(engine: Engine) -> None:
    with http_mcp_server("--sse") as url:
        params = {"sseEndpoint": url, "options": {"timeout": 20000}}  # version 1 speaks SSE only
        state = await run(engine, params, [tool_call("add", {"a": 2, "b": 3}, "c1")], version=1)
        assert state.status == "success", state.error
        assert answer_of(state.result[0]["json"]["intermediateSteps"][0]["observation"]) == "5"
        # version 1.1 without a transport set speaks SSE too (HTTP Streamable is 1.2's default)
        state = await run(engine, {"endpointUrl": url, "options": {"timeout": 20000}},
                          [tool_call("add", {"a": 2, "b": 4}, "c1")], version=1.1)
        assert state.status == "success", state.error
        assert answer_of(state.result[0]["json"]["intermediateSteps"][0]["observation"]) == "6"


async def test_stop_during_a_tool_call_ends_the_server_process(engine: Engine, tmp_path) -> None:
    import asyncio
    import os

    from engine.abort import AbortSignal
    from tests.nodes.tools.mcp_servers import SERVER

    starts = tmp_path / "starts"
    params = {"serverTransport": "stdio", "command": sys.executable, "arguments": f"{SERVER} stdio {starts}"}
    wf = agent_workflow(
        [{"text": "", "toolCalls": [tool_call("wait", {"seconds": 60}, "c1")]}, {"text": "done"}],
        tools=[("MCP", MCP, params)],
    )
    signal = AbortSignal()
    run_task = asyncio.create_task(engine.run(wf, items=[{"json": {"chatInput": "go"}}], signal=signal))
    for _ in range(2000):  # bounded wait for the server to be inside the tool
        if starts.exists() and "waiting" in starts.read_text():
            break
        await asyncio.sleep(0.01)
    pid = int(starts.read_text().splitlines()[1].split()[1])
    signal.abort()
    state = await asyncio.wait_for(run_task, 20)
    assert state.status == "cancelled"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


NOISY = Path(__file__).with_name("mcp_noisy_server.py")


async def test_stray_stdout_lines_give_one_warning_and_the_run_goes_on(engine: Engine, capfd, caplog) -> None:
    params = {"serverTransport": "stdio", "command": sys.executable, "arguments": f"{NOISY} before", "options": {"timeout": 20000}}
    with caplog.at_level(logging.WARNING):
        state = await run(engine, params, [tool_call("add", {"a": 2, "b": 3}, "c1")])
    assert state.status == "success", state.error
    assert answer_of(state.result[0]["json"]["intermediateSteps"][0]["observation"]) == "5"
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    command = f"{sys.executable} {NOISY} before"
    expected = (
        f"The MCP server ({command}) answered, but it wrote 3 lines to stdout that are not MCP (JSON-RPC) messages"
        " (first: 'Starting noisy server v1.0 ...'); they were ignored"
    )
    assert warnings == [expected]  # once, though the listing and the call each started the server
    assert "Traceback" not in capfd.readouterr().err


async def test_a_server_that_never_speaks_json_fails_clearly(engine: Engine, capfd, caplog) -> None:
    params = {"serverTransport": "stdio", "command": sys.executable, "arguments": f"{NOISY} only", "options": {"timeout": 1500}}
    with caplog.at_level(logging.WARNING):
        state = await run(engine, params, [])
    assert state.status == "error"
    assert state.error.description.startswith(
        f"The MCP server ({sys.executable} {NOISY} only) did not answer within 1.5 s while starting; it wrote a line to"
        " stdout that is not an MCP (JSON-RPC) message (first: 'I do not speak JSON, you said "
    ), state.error.message
    assert "Traceback" not in capfd.readouterr().err
    assert not [r for r in caplog.records if r.exc_info]
