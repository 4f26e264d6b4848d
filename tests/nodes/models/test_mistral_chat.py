"""Mistral Cloud Chat Model against the loopback Mistral peer, inside agent workflows: the body
ChatMistralAI and Mistral's SDK send (always streamed, their defaults, the SDK's message shapes,
9-character tool-call ids), tool calls, usage, Mistral's error bodies, a stream cut mid-reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.chat import ChatMessage, ToolCall
from engine.credentials import FileCredentialStore
from engine.executor import Engine
from engine.registry import Registry
from engine.services import Services
from nodes.models.mistral_chat import SAFE_MODE_NOTE, mistral_tool_call_id, to_mistral_messages
from tests.peers.http_peer import Step
from tests.peers.mistral_peer import MistralPeer

from .model_workflows import TokenLog, chat, model_runs, with_model

MISTRAL = "@n8n/n8n-nodes-langchain.lmChatMistralCloud"
KEY = "mistral-test-key-12345"
CALC = {"id": "D681PevKs", "name": "Calculator", "arguments": {"input": "17 * 25"}}


def _engine(registry: Registry, tmp_path: Path, url: str, key: str = KEY) -> tuple[Engine, dict]:
    store = FileCredentialStore(tmp_path / "credentials.json")
    info = store.save("mistralCloudApi", "Mistral", {"apiKey": key, "url": url})
    return Engine(registry, Services(credentials=store)), info.reference()


def _params(**options: object) -> dict:
    return {"model": "mistral-peer", "options": options}


async def test_tool_call_then_answer_with_the_sdks_body(registry: Registry, tmp_path: Path) -> None:
    with MistralPeer([Step(tool_calls=[CALC], usage=(30, 8)), Step(text="It is 425.", usage=(50, 4))], api_key=KEY) as peer:
        engine, ref = _engine(registry, tmp_path, peer.base_url)
        tokens = TokenLog()
        state = await chat(engine, with_model(MISTRAL, _params(), credentials=ref), "17*25?", tokens)
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "It is 425."
    assert tokens.text() == "It is 425."
    first, second = peer.requests
    assert first.path == "/v1/chat/completions" and first.headers["authorization"] == f"Bearer {KEY}"
    body = first.json
    assert list(body) == ["model", "temperature", "top_p", "stream", "messages", "tools", "safe_prompt"]
    assert (body["temperature"], body["top_p"], body["stream"], body["safe_prompt"]) == (0.7, 1, True, False)
    assert body["messages"][0] == {"role": "system", "content": "You are a helpful assistant"}
    assert body["tools"][0]["function"]["name"] == "Calculator"
    call_turn, result_turn = second.json["messages"][2:]
    assert call_turn == {"role": "assistant", "tool_calls": [
        {"id": "D681PevKs", "type": "function", "function": {"name": "Calculator", "arguments": call_turn["tool_calls"][0]
                                                            ["function"]["arguments"]}, "index": 0}], "prefix": False}
    assert json.loads(call_turn["tool_calls"][0]["function"]["arguments"])["input"] == "17 * 25"
    assert ", " not in call_turn["tool_calls"][0]["function"]["arguments"]  # JSON.stringify's compact form
    assert result_turn == {"role": "tool", "content": '[{"response":"425"}]', "tool_call_id": "D681PevKs"}
    usage = [r.metadata["tokenUsage"] for r in model_runs(state)]
    assert usage == [{"promptTokens": 30, "completionTokens": 8}, {"promptTokens": 50, "completionTokens": 4}]


async def test_options_as_sent_and_safe_mode_noted(registry: Registry, tmp_path: Path) -> None:
    with MistralPeer([Step(text="ok", usage=(3, 2))]) as peer:
        engine, ref = _engine(registry, tmp_path, peer.base_url)
        params = _params(temperature=0.2, topP=0.5, maxTokens=64, randomSeed=7, safeMode=True)
        state = await chat(engine, with_model(MISTRAL, params, credentials=ref, tools=[]), "hi")
    assert state.status == "success", state.error
    body = peer.requests[0].json
    assert list(body) == ["model", "temperature", "top_p", "max_tokens", "stream", "random_seed", "messages", "safe_prompt"]
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["random_seed"]) == (0.2, 0.5, 64, 7)
    assert body["safe_prompt"] is False  # as n8n 1.123 sends it
    assert SAFE_MODE_NOTE in model_runs(state)[0].metadata.get("notes", [])


def test_tool_call_ids_and_unanswered_calls_as_langchain_writes_them() -> None:
    assert mistral_tool_call_id("abcDEF123") == "abcDEF123"
    assert mistral_tool_call_id("call_abc123") == "0000RJO35"  # computed by LangChain's own function
    assert mistral_tool_call_id("toolu_01A09q90qw90lq917835lq9") == "0001oRi0m"
    answered = ToolCall(id="call_abc123", name="a", args={"x": 1})
    unanswered = ToolCall(id="call_zzz", name="b", args={})
    messages = [ChatMessage(role="assistant", content="", toolCalls=[answered, unanswered]),
                ChatMessage(role="tool", content="1", toolCallId="call_abc123"),
                ChatMessage(role="assistant", content="", toolCalls=[unanswered]),
                ChatMessage(role="assistant", content="thinking aloud", toolCalls=[unanswered])]
    assert to_mistral_messages(messages) == [
        {"role": "assistant", "tool_calls": [{"id": "0000RJO35", "type": "function",
                                              "function": {"name": "a", "arguments": '{"x":1}'}, "index": 0}], "prefix": False},
        {"role": "tool", "content": "1", "tool_call_id": "0000RJO35"},
        {"role": "assistant", "content": "thinking aloud", "prefix": False},
    ]


@pytest.mark.parametrize(("step", "words"), [
    (Step("status", status=429, body={"message": "Requests rate limit exceeded"}),
     "is rate limiting requests (429 Too Many Requests): Requests rate limit exceeded"),
    (Step("status", status=422, body={"object": "error", "message": {"detail": [{"msg": "Field required"}]},
                                      "type": "invalid_request_error", "param": None, "code": None}),
     'rejected the request (422 Status): {"detail": [{"msg": "Field required"}]}'),
    (Step("cut", text="an answer that gets cut off"), "ended the stream mid-reply"),
])
async def test_errors_in_the_users_terms_without_the_key(registry: Registry, tmp_path: Path, step: Step, words: str) -> None:
    with MistralPeer([step]) as peer:
        engine, ref = _engine(registry, tmp_path, peer.base_url)
        state = await chat(engine, with_model(MISTRAL, _params(maxRetries=0), credentials=ref, tools=[]), "hi")
    assert state.status == "error"
    assert words in f"{state.error.message} {state.error.description}"
    assert KEY not in json.dumps(state.model_dump(mode="json"))


async def test_a_wrong_key_and_an_unknown_model_say_so(registry: Registry, tmp_path: Path) -> None:
    with MistralPeer(api_key="the-right-key") as peer:
        engine, ref = _engine(registry, tmp_path, peer.base_url)
        state = await chat(engine, with_model(MISTRAL, _params(), credentials=ref, tools=[]), "hi")
        assert state.status == "error"
        assert 'refused credential "Mistral" (mistralCloudApi) (401 Unauthorized): Unauthorized' in state.error.description
        engine, ref = _engine(registry, tmp_path, peer.base_url, key="the-right-key")
        state = await chat(engine, with_model(MISTRAL, {"model": "nope"}, credentials=ref, tools=[]), "hi")
    assert state.status == "error"
    assert "rejected the request (400 Bad Request): Invalid model: nope" in state.error.description


def test_bodies_are_byte_for_byte_what_langchain_and_mistrals_sdk_send() -> None:
    """Recorded from ChatMistralAI with Mistral's SDK as n8n 1.123 installs them
    (tests/fixtures/mistral/record_body.js), compared as bytes: keys in the SDK's order."""
    from pathlib import Path

    from engine.chat import ToolSpec
    from nodes.models.mistral_chat import MistralParams, mistral_body

    recorded = json.loads((Path(__file__).parents[2] / "fixtures" / "mistral" / "bodies.json").read_text())
    tool = ToolSpec(name="Calculator", description="Does math", parameters={
        "type": "object", "properties": {"input": {"type": "string"}}, "additionalProperties": False,
        "$schema": "http://json-schema.org/draft-07/schema#"})
    messages = [
        ChatMessage(role="system", content="You are a helpful assistant"),
        ChatMessage(role="user", content="What is 6 * 7?"),
        ChatMessage(role="assistant", content='Calling Calculator with input: {"input":"6 * 7","id":"call_abc123"}',
                    toolCalls=[ToolCall(id="call_abc123", name="Calculator", args={"input": "6 * 7", "id": "call_abc123"}),
                               ToolCall(id="D681PevKs", name="Calculator", args={"input": "1"})]),
        ChatMessage(role="tool", content='[{"response":"42"}]', toolCallId="call_abc123"),
    ]

    def wire(body: dict) -> str:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))

    assert wire(mistral_body(MistralParams(model="mistral-small"), messages, [tool])) == recorded["defaultsWithTools"]
    options = MistralParams.model_validate({"model": "mistral-small", "options": {
        "temperature": 0.2, "topP": 0.5, "maxTokens": 64, "randomSeed": 7, "safeMode": True, "maxRetries": 2}})
    assert wire(mistral_body(options, [ChatMessage(role="user", content="hi")], [])) == recorded["options"]
