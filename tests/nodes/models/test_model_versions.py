"""Chat model typeVersions as n8n 1.123 maps them: each declared version's defaults, the
difference a version has from what runs here as a run-log note, and a newer version than we know
loaded with its parameters kept and a warning on the canvas and in the run log."""

from __future__ import annotations

from typing import Any

import pytest

from engine.executor import Engine
from engine.registry import builtin_registry
from engine.run_log import format_line
from engine.versions import known_versions, version_note
from engine.workflow import Workflow
from tests.peers.http_peer import Step
from tests.peers.openai_peer import OpenAIPeer

from .model_workflows import OLLAMA, OPENAI, chat, model_runs, with_model


def at_version(workflow: Workflow, version: float) -> Workflow:
    workflow.node("Model").typeVersion = version
    return workflow


def test_declared_versions_are_n8ns() -> None:
    registry = builtin_registry()
    assert known_versions(registry.get(OPENAI)) == (1, 1.1, 1.2, 1.3)
    assert known_versions(registry.get(OLLAMA)) == (1,)


@pytest.mark.parametrize(("version", "params", "model"), [
    (1, {}, "gpt-4o-mini"),
    (1.1, {"model": "gpt-4o"}, "gpt-4o"),  # a plain text parameter up to v1.1
    (1.2, {}, "gpt-4.1-mini"),
    (1.2, {"model": {"__rl": True, "value": "gpt-4o", "mode": "list"}}, "gpt-4o"),
    (1.3, {}, "gpt-4.1-mini"),
])
async def test_each_openai_version_sends_its_model(engine: Engine, version: float, params: dict[str, Any], model: str) -> None:
    with OpenAIPeer([Step(text="hi", usage=(3, 1))], model=model) as peer:
        wf = at_version(with_model(OPENAI, {**params, "options": {"baseURL": peer.base_url}}, tools=[]), version)
        state = await chat(engine, wf, "hello")
    assert state.status == "success", state.error
    assert peer.requests[0].json["model"] == model
    # from v1.3 the node speaks the Responses API by default, as n8n's does
    assert peer.requests[0].path == ("/v1/responses" if version >= 1.3 else "/v1/chat/completions")
    assert "notes" not in model_runs(state)[0].metadata


async def test_v1_3_without_the_responses_api_speaks_chat_completions(engine: Engine) -> None:
    with OpenAIPeer([Step(text="hi", usage=(3, 1))], model="gpt-4.1-mini") as peer:
        params = {"responsesApiEnabled": False, "options": {"baseURL": peer.base_url}}
        state = await chat(engine, at_version(with_model(OPENAI, params, tools=[]), 1.3), "hello")
    assert state.status == "success", state.error
    assert peer.requests[0].path == "/v1/chat/completions"
    assert "notes" not in model_runs(state)[0].metadata


async def test_a_newer_version_loads_keeps_its_parameters_and_warns(engine: Engine) -> None:
    with OpenAIPeer([Step(text="hi", usage=(3, 1))], model="gpt-4o") as peer:
        params = {"model": {"__rl": True, "value": "gpt-4o", "mode": "list"}, "futureOption": {"x": 1},
                  "options": {"baseURL": peer.base_url}}
        wf = at_version(with_model(OPENAI, params, tools=[]), 1.9)
        node = wf.node("Model")
        note = version_note(node, builtin_registry().get(OPENAI))  # what the canvas shows
        assert note is not None and "newer than mini-n8n knows" in note and "1.9" in note
        state = await chat(engine, wf, "hello")
    assert state.status == "success", state.error
    assert node.parameters["futureOption"] == {"x": 1}  # kept, so saving writes it back
    [run] = model_runs(state)
    assert note in run.metadata["notes"]
    assert "newer than mini-n8n knows" in format_line("Model", run, 0.0)  # and the run log prints it
    assert len(model_runs(state)) == 1


async def test_an_unknown_ollama_version_warns_in_the_run_log(engine: Engine) -> None:
    from tests.peers.ollama_peer import OllamaPeer

    with OllamaPeer([Step(text="hi", usage=(3, 1))]) as peer:
        wf = at_version(with_model(OLLAMA, {"model": "llama3.2", "baseUrl": peer.url}, tools=[]), 2)
        state = await chat(engine, wf, "hello")
    assert state.status == "success", state.error
    assert any("newer than mini-n8n knows" in n for n in model_runs(state)[0].metadata["notes"])
