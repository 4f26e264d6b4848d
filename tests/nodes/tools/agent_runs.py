"""Helpers for tool tests: run a Scripted agent that calls one tool, read what the model saw."""

from __future__ import annotations

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
    """What the model read back from its (first) tool call."""
    assert state.status == "success", state.error
    steps = state.result[0]["json"]["intermediateSteps"]
    return steps[0]["observation"]
