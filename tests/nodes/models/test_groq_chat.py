"""Groq Chat Model against the loopback OpenAI peer on Groq's path: ChatGroq's body (temperature
always, stop [], max_completion_tokens when set), tools, and GROQ_BASE_URL as the server."""

from __future__ import annotations

import pytest

from engine.credentials import FileCredentialStore
from engine.executor import Engine
from engine.registry import Registry
from engine.services import Services
from tests.parity.peer import ParityPeer
from tests.peers.http_peer import Step

from .model_workflows import chat, with_model

GROQ = "@n8n/n8n-nodes-langchain.lmChatGroq"


async def test_groq_body_and_base_url(registry: Registry, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    calc = {"id": "c1", "name": "Calculator", "arguments": {"expression": "2 * 3"}}
    with ParityPeer([Step(tool_calls=[calc]), Step(text="6")], model="llama3-8b-8192") as peer:
        monkeypatch.setenv("GROQ_BASE_URL", peer.url)
        store = FileCredentialStore(tmp_path / "credentials.json")
        info = store.save("groqApi", "Groq", {"apiKey": "gsk-test-1234"})
        wf = with_model(GROQ, {"options": {"maxTokensToSample": 64}}, credentials=info.reference())
        state = await chat(Engine(registry, Services(credentials=store)), wf, "2*3?")
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "6"
    first = peer.requests[0]
    assert first.path == "/openai/v1/chat/completions"
    assert first.headers["authorization"] == "Bearer gsk-test-1234"
    body = first.json
    assert (body["temperature"], body["max_completion_tokens"], body["stop"]) == (0.7, 64, [])
    assert body["tools"][0]["function"]["name"] == "Calculator"
