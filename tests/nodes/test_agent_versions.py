"""The AI Agent's typeVersions: v1's agent kinds, v1's prompt field, unsupported kinds refused."""

from __future__ import annotations

from typing import Any

import pytest

from engine.executor import Engine
from engine.workflow import parse_workflow
from tests.builders import AGENT, MANUAL_TRIGGER, SCRIPTED, link, node


def agent(version: float, params: dict[str, Any]) -> Any:
    connections: dict = {}
    link(connections, "Start", "AI Agent")
    link(connections, "Model", "AI Agent", "ai_languageModel")
    return parse_workflow({"name": "agent versions", "nodes": [
        node("Start", MANUAL_TRIGGER),
        node("AI Agent", AGENT, params, typeVersion=version),
        node("Model", SCRIPTED, {"replies": [{"text": "answer"}]}),
    ], "connections": connections})


ITEM = [{"json": {"input": "from input", "chat_input": "from chat_input", "chatInput": "from chatInput"}}]


@pytest.mark.parametrize("version, prompt", [(1, "from input"), (1.1, "from chat_input"), (1.2, "from chatInput"),
                                             (1.3, "from chatInput"), (3, "from chatInput")])
async def test_the_prompt_field_of_each_version(engine: Engine, version: float, prompt: str) -> None:
    state = await engine.run(agent(version, {"agent": "toolsAgent", "options": {}}), items=ITEM)
    assert state.status == "success", state.error
    model_runs = state.run_data["Model"]
    sent = model_runs[0].input["ai_languageModel"][0][0]["json"]["messages"]
    assert sent[-1]["content"] == prompt if isinstance(sent[-1], dict) else prompt in str(sent[-1])


async def test_v1_defaults_to_the_conversational_agent_run_as_tools_agent_with_a_note(engine: Engine) -> None:
    state = await engine.run(agent(1, {"options": {}}), items=ITEM)
    assert state.status == "success", state.error
    notes = state.run_data["AI Agent"][0].metadata["notes"]
    assert len(notes) == 1 and "conversationalAgent" in notes[0] and "Tools Agent" in notes[0]


async def test_v1_6_defaults_to_the_tools_agent_without_a_note(engine: Engine) -> None:
    state = await engine.run(agent(1.6, {"promptType": "define", "text": "hi", "options": {}}), items=ITEM)
    assert state.status == "success", state.error
    assert "notes" not in state.run_data["AI Agent"][0].metadata


@pytest.mark.parametrize("kind, shown", [("reActAgent", "ReAct Agent"), ("sqlAgent", "SQL Agent"),
                                         ("planAndExecuteAgent", "Plan and Execute Agent")])
async def test_agent_kinds_we_do_not_run_fail_clearly(engine: Engine, kind: str, shown: str) -> None:
    state = await engine.run(agent(1.5, {"agent": kind, "options": {}}), items=ITEM)
    assert state.status == "error"
    assert state.error.node == "AI Agent"
    assert state.error.message == (f'AI Agent "AI Agent" is set to the {shown} (agent: {kind}), which mini-n8n '
                                   "does not support: choose the Tools Agent for it")


async def test_from_v1_8_the_agent_option_is_ignored_as_in_n8n(engine: Engine) -> None:
    state = await engine.run(agent(1.8, {"agent": "reActAgent", "promptType": "define", "text": "hi", "options": {}}), items=ITEM)
    assert state.status == "success", state.error
