"""The OpenAI Chat Model's request as n8n builds it (only options set, max_completion_tokens,
reasoning effort) and the Responses API (typeVersion 1.3), against the loopback OpenAI peer:
plain and streamed replies, tool calls, error bodies. What n8n itself sends is compared in the
parity corpus (tests/parity/workflows/oai-*.json, SHOWBODY)."""

from __future__ import annotations

import json

import pytest

from engine.executor import Engine
from engine.workflow import Workflow, parse_workflow
from tests.peers.http_peer import Step
from tests.peers.openai_peer import OpenAIPeer

from .model_workflows import OPENAI, TokenLog, chat, model_runs, with_model

CALC_CALL = {"id": "call_abc", "name": "Calculator", "arguments": {"input": "17 * 25"}}


@pytest.fixture(autouse=True)
def no_env_key(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("MINI_N8N_CREDENTIALS", str(tmp_path / "credentials.json"))


def model_node(peer: OpenAIPeer, version: float, model: str | None = None, tools: list | None = None,
               **params: object) -> Workflow:
    options = params.pop("options", {})
    wf = with_model(OPENAI, {"model": {"__rl": True, "value": model or peer.model, "mode": "list"},
                             "options": {"baseURL": peer.base_url, **options}, **params}, tools=tools)
    doc = json.loads(wf.to_json())
    next(n for n in doc["nodes"] if n["type"] == OPENAI)["typeVersion"] = version
    return parse_workflow(doc)


async def test_only_the_options_set_are_sent(engine: Engine) -> None:
    with OpenAIPeer([Step(text="a"), Step(text="b")], model=("peer-model", "o3-mini")) as peer:
        await chat(engine, model_node(peer, 1.2, "peer-model", tools=[]), "hi")
        await chat(engine, model_node(peer, 1.2, "o3-mini", tools=[], options={"maxTokens": 50, "reasoningEffort": "high", "temperature": 1}), "hi")
    plain, reasoning = (r.json for r in peer.requests)
    assert set(plain) == {"model", "stream", "stream_options", "messages"}
    assert reasoning["max_completion_tokens"] == 50 and "max_tokens" not in reasoning
    assert reasoning["reasoning_effort"] == "high" and reasoning["temperature"] == 1


async def test_reasoning_effort_is_dropped_for_models_n8n_does_not_show_it_for(engine: Engine) -> None:
    with OpenAIPeer([Step(text="a")]) as peer:
        await chat(engine, model_node(peer, 1.2, tools=[], options={"reasoningEffort": "low", "maxTokens": 9}), "hi")
    body = peer.requests[0].json
    assert "reasoning_effort" not in body and body["max_tokens"] == 9


async def test_v13_talks_to_the_responses_api_with_tools_streamed(engine: Engine) -> None:
    script = [Step(tool_calls=[CALC_CALL], usage=(40, 6)), Step(text="It is 425.", usage=(60, 4))]
    with OpenAIPeer(script) as peer:
        tokens = TokenLog()
        state = await chat(engine, model_node(peer, 1.3, options={"maxTokens": 77}), "17*25?", tokens)
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "It is 425."
    assert tokens.text() == "It is 425."
    assert [r.path for r in peer.requests] == ["/v1/responses", "/v1/responses"]
    first, second = (r.json for r in peer.requests)
    assert first["stream"] is True and first["max_output_tokens"] == 77 and first["text"] == {}
    assert first["tools"][0]["type"] == "function" and first["tools"][0]["name"] == "Calculator"
    assert [i["role"] for i in first["input"]] == ["system", "user"]
    assert second["input"][-2:] == [
        # the v3 Agent replays a call with its id among the arguments and hands over the tool's items, as n8n
        {"type": "function_call", "name": "Calculator", "arguments": '{"input":"17 * 25","id":"call_abc"}', "call_id": "call_abc"},
        {"type": "function_call_output", "call_id": "call_abc", "output": '[{"response":"425"}]'},
    ]
    usage = [r.metadata["tokenUsage"] for r in model_runs(state)]
    assert usage == [{"promptTokens": 40, "completionTokens": 6}, {"promptTokens": 60, "completionTokens": 4}]
    assert peer.connections == 1


async def test_responses_api_without_streaming_and_its_options(engine: Engine) -> None:
    text_format = {"textOptions": {"type": "json_schema", "name": "a", "schema": '{"type": "object"}', "strict": True}}
    with OpenAIPeer([Step(text='{"x": 1}', usage=(5, 2))], model="o3-mini") as peer:
        wf = model_node(peer, 1.3, tools=[], options={"streaming": False, "reasoningEffort": "low", "textFormat": text_format,
                                                      "frequencyPenalty": 1})
        state = await chat(engine, wf, "json")
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == '{"x": 1}'
    body = peer.requests[0].json
    assert body["stream"] is False and "frequency_penalty" not in body
    assert body["reasoning"] == {"effort": "low"}
    assert body["text"] == {"format": {"type": "json_schema", "name": "a", "schema": {"type": "object"}}, "verbosity": "medium"}
    assert body["input"][0]["role"] == "developer"  # a reasoning model's system message


async def test_responses_api_off_uses_chat_completions(engine: Engine) -> None:
    with OpenAIPeer([Step(text="a")]) as peer:
        await chat(engine, model_node(peer, 1.3, tools=[], responsesApiEnabled=False), "hi")
    assert peer.requests[0].path == "/v1/chat/completions"


async def test_a_responses_api_error_body_names_the_server_and_its_message(engine: Engine) -> None:
    error = {"error": {"message": "Invalid schema for response_format 'a'", "type": "invalid_request_error",
                       "param": "text.format.schema", "code": "invalid_json_schema"}}
    with OpenAIPeer([Step("status", status=400, body=error)]) as peer:
        state = await chat(engine, model_node(peer, 1.3, tools=[]), "hi")
    assert state.status == "error"
    assert state.error.message == "Bad request - please check your parameters"
    assert "rejected the request (400 Bad Request): Invalid schema for response_format 'a'" in state.error.description


async def test_a_responses_stream_cut_mid_reply_is_an_error(engine: Engine) -> None:
    with OpenAIPeer([Step("cut", text="a long answer that is cut")]) as peer:
        state = await chat(engine, model_node(peer, 1.3, tools=[]), "hi")
    assert state.status == "error"
    assert "ended the stream mid-reply" in state.error.message


async def test_built_in_tools_are_refused_not_ignored(engine: Engine) -> None:
    with OpenAIPeer([Step(text="a")]) as peer:
        state = await chat(engine, model_node(peer, 1.3, tools=[], builtInTools={"webSearch": {"searchContextSize": "medium"}}), "hi")
    assert state.status == "error"
    assert "Built-in Tools" in state.error.description and not peer.requests
