"""Helpers for tool tests: run a Scripted agent that calls one tool, read what the model saw."""

from __future__ import annotations

import json
from typing import Any

from engine.executor import Engine
from engine.run_data import ExecutionState
from tests.builders import agent_workflow, tool_call


async def run_tool_once(
    engine: Engine, node_type: str, params: dict[str, Any], args: dict[str, Any] | str, *, name: str = "Tool", tool: str | None = None
) -> ExecutionState:
    """Chat -> Agent with one tool node; the model calls it once with `args`, then answers 'done'."""
    wf = agent_workflow(
        [{"text": "", "toolCalls": [tool_call(tool or name, args, "call_1")]}, {"text": "done"}],
        tools=[(name, node_type, params)],
        agent_options={"returnIntermediateSteps": True},
    )
    return await engine.run(wf, items=[{"json": {"chatInput": "go", "sessionId": "s"}}])


def observation(state: ExecutionState) -> str:
    """What the tool answered to the model's (first) call. n8n's v3 agent hands the model the tool
    run's output items as JSON (`[{"response": …}]`) or a failed run as `{"error": …}`: this is the
    one item's response, or `Error: <message>` (a call refused before it ran reads so already)."""
    assert state.status == "success", state.error
    return answer_of(state.result[0]["json"]["intermediateSteps"][0]["observation"])


def answer_of(text: str) -> str:
    """One observation of n8n's v3 agent read back as the tool's answer (see `observation`); an
    MCP tool's content blocks read as their text."""
    if text.startswith("Error: "):
        return text
    value = json.loads(text)
    if isinstance(value, dict):
        assert value["errorType"] == "NodeOperationError", text
        return f"Error: {value['error']}"
    assert len(value) == 1 and set(value[0]) == {"response"}, text
    response = value[0]["response"]
    if isinstance(response, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in response):
        return "\n".join(b["text"] for b in response)
    return response if isinstance(response, str) else json.dumps(response)
