"""Anthropic Chat Model against the loopback Messages API peer, inside agent workflows: streamed
and plain replies, tool use, usage, error bodies, a stream cut or failing mid-reply. (The request
n8n sends is compared in the parity corpus: anthropic-*.json.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.credentials import FileCredentialStore
from engine.executor import Engine
from engine.registry import Registry
from engine.services import Services
from tests.peers.anthropic_peer import AnthropicPeer
from tests.peers.http_peer import Step

from .model_workflows import TokenLog, chat, model_runs, with_model

ANTHROPIC = "@n8n/n8n-nodes-langchain.lmChatAnthropic"
KEY = "sk-ant-test-12345"
CALC = {"id": "toolu_1", "name": "Calculator", "arguments": {"input": "17 * 25"}}


def _engine(registry: Registry, tmp_path: Path, url: str) -> tuple[Engine, dict]:
    store = FileCredentialStore(tmp_path / "credentials.json")
    info = store.save("anthropicApi", "Claude", {"apiKey": KEY, "url": url})
    return Engine(registry, Services(credentials=store)), info.reference()


def _params(**options: object) -> dict:
    return {"model": {"__rl": True, "value": "claude-peer", "mode": "list"}, "options": options}


async def test_streamed_tool_use_then_answer(registry: Registry, tmp_path: Path) -> None:
    with AnthropicPeer([Step(tool_calls=[CALC], usage=(30, 8)), Step(text="It is 425.", usage=(50, 4))], api_key=KEY) as peer:
        engine, ref = _engine(registry, tmp_path, peer.url)
        tokens = TokenLog()
        state = await chat(engine, with_model(ANTHROPIC, _params(), credentials=ref), "17*25?", tokens)
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "It is 425."
    assert tokens.text() == "It is 425."
    first, second = (r.json for r in peer.requests)
    assert first["stream"] is True and first["max_tokens"] == 2048 and first["thinking"] == {"type": "disabled"}
    assert "temperature" not in first and first["system"] == "You are a helpful assistant"
    assert first["tools"][0]["name"] == "Calculator" and "input_schema" in first["tools"][0]
    assert second["messages"][1] == {"role": "assistant", "content": [
        {"type": "text", "text": 'Calling Calculator with input: {"input":"17 * 25","id":"toolu_1"}'},
        {"type": "tool_use", "id": "toolu_1", "name": "Calculator", "input": {"input": "17 * 25", "id": "toolu_1"}}]}
    assert second["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "content": '[{"response":"425"}]', "tool_use_id": "toolu_1"}]}
    assert peer.requests[0].headers["anthropic-version"] == "2023-06-01"
    usage = [r.metadata["tokenUsage"] for r in model_runs(state)]
    assert usage == [{"promptTokens": 30, "completionTokens": 8}, {"promptTokens": 50, "completionTokens": 4}]


async def test_plain_reply_and_thinking_options(registry: Registry, tmp_path: Path) -> None:
    with AnthropicPeer([Step(text="thought through", usage=(3, 2))]) as peer:
        engine, ref = _engine(registry, tmp_path, peer.url)
        params = _params(streaming=False, thinking=True, thinkingBudget=2000, temperature=0.5)
        state = await chat(engine, with_model(ANTHROPIC, params, credentials=ref, tools=[]), "think")
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "thought through"
    body = peer.requests[0].json
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2000} and body["max_tokens"] == 4096
    assert "temperature" not in body and body["stream"] is False


@pytest.mark.parametrize(("step", "words"), [
    (Step("status", status=404, body={"type": "error", "error": {"type": "not_found_error", "message": "model: claude-peer"}}),
     'does not know model "claude-peer" (404 Not Found): model: claude-peer'),
    (Step("status", status=401, body={"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
     'refused credential "Claude" (anthropicApi) (401 Unauthorized): invalid x-api-key'),
    (Step("overloaded", text="partial answer here"), "reported an error mid-reply: Overloaded"),
    (Step("cut", text="an answer that gets cut off"), "ended the stream mid-reply"),
])
async def test_errors_in_the_users_terms_without_the_key(registry: Registry, tmp_path: Path, step: Step, words: str) -> None:
    with AnthropicPeer([step]) as peer:
        engine, ref = _engine(registry, tmp_path, peer.url)
        state = await chat(engine, with_model(ANTHROPIC, _params(maxRetries=0), credentials=ref, tools=[]), "hi")
    assert state.status == "error"
    assert words in f"{state.error.message} {state.error.description}"
    assert KEY not in json.dumps(state.model_dump(mode="json"))
