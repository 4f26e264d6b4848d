"""Ollama Chat Model against a loopback /api/chat peer, inside real agent workflows."""

from __future__ import annotations

import asyncio
import time

import pytest

from engine.abort import AbortSignal
from engine.executor import Engine
from engine.registry import Registry
from nodes.triggers.chat_trigger import chat_item
from tests.peers.http_peer import Step
from tests.peers.ollama_peer import OllamaPeer

from .model_workflows import OLLAMA, TokenLog, chat, model_runs, with_model


def ollama_params(peer: OllamaPeer, **options: object) -> dict:
    return {"model": peer.model, "baseUrl": peer.url, "options": dict(options)}


@pytest.fixture(autouse=True)
def no_ollama_env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.setenv("MINI_N8N_CREDENTIALS", str(tmp_path / "credentials.json"))


async def test_streamed_tool_round_then_answer(engine: Engine) -> None:
    call = {"name": "Calculator", "arguments": {"input": "17 * 25"}}
    script = [Step(tool_calls=[call], usage=(40, 12)), Step(text="It is 425.", usage=(70, 5))]
    with OllamaPeer(script) as peer:
        tokens = TokenLog()
        params = ollama_params(peer, temperature=0.2, numCtx=4096, keepAlive="10m")
        state = await chat(engine, with_model(OLLAMA, params), "What is 17 * 25?", tokens)
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "It is 425."
    assert tokens.text() == "It is 425."
    first, second = (r.json for r in peer.requests)
    assert first["stream"] is True and first["keep_alive"] == "10m"
    assert first["options"] == {"temperature": 0.2, "num_ctx": 4096}
    assert first["tools"][0] == {"type": "function", "function": {
        "name": "Calculator", "description": first["tools"][0]["function"]["description"],
        "parameters": first["tools"][0]["function"]["parameters"]}}
    assistant, tool = second["messages"][-2:]
    # n8n's v3 agent replays the call with its id among the arguments
    [sent] = assistant["tool_calls"]
    assert sent["function"]["name"] == "Calculator" and sent["function"]["arguments"]["input"] == "17 * 25"
    assert tool["role"] == "tool" and tool["tool_name"] == "Calculator" and "425" in tool["content"]
    assert [r.metadata["tokenUsage"] for r in model_runs(state)] == [
        {"promptTokens": 40, "completionTokens": 12}, {"promptTokens": 70, "completionTokens": 5}]
    assert peer.connections == 1


async def test_format_json_and_default_base_url_option(engine: Engine) -> None:
    with OllamaPeer([Step(text='{"a": 1}')]) as peer:
        params = {"model": peer.model, "options": {"baseUrl": peer.url, "format": "json"}}
        state = await chat(engine, with_model(OLLAMA, params, tools=[]), "json")
    assert state.status == "success", state.error
    assert peer.requests[0].json["format"] == "json"
    assert "tools" not in peer.requests[0].json


async def test_model_not_pulled_names_the_model(engine: Engine) -> None:
    with OllamaPeer() as peer:
        params = {"model": "mistral", "baseUrl": peer.url}
        state = await chat(engine, with_model(OLLAMA, params, tools=[]), "hi")
    assert state.status == "error"
    assert state.error.message == "The resource you are requesting could not be found"
    assert 'does not know model "mistral"' in state.error.description
    assert "try pulling it first" in state.error.description


async def test_error_line_mid_stream(engine: Engine) -> None:
    with OllamaPeer([Step("midstream-error", text="abcdef")]) as peer:
        state = await chat(engine, with_model(OLLAMA, ollama_params(peer), tools=[]), "hi")
    assert state.status == "error"
    assert "an error was encountered while running the model" in state.error.message


async def test_stream_without_done_line(engine: Engine) -> None:
    with OllamaPeer([Step("cut", text="half of it")]) as peer:
        state = await chat(engine, with_model(OLLAMA, ollama_params(peer), tools=[]), "hi")
    assert state.status == "error"
    assert state.error.message == f"the model server at {peer.url} ended the stream mid-reply"


async def test_line_that_is_not_json(engine: Engine) -> None:
    with OllamaPeer([Step("garbage")]) as peer:
        state = await chat(engine, with_model(OLLAMA, ollama_params(peer), tools=[]), "hi")
    assert state.status == "error"
    assert "not JSON: 'Internal proxy failure'" in state.error.message


async def test_service_unavailable_retried(engine: Engine) -> None:
    busy = Step("status", status=503, body={"error": "server busy"}, headers={"retry-after": "0"})
    with OllamaPeer([busy, Step(text="ok")]) as peer:
        state = await chat(engine, with_model(OLLAMA, ollama_params(peer), tools=[]), "hi")
    assert state.status == "success", state.error
    assert len(peer.requests) == 2


async def test_unreachable(engine: Engine) -> None:
    with OllamaPeer() as peer:
        url = peer.url
    state = await chat(engine, with_model(OLLAMA, {"model": "x", "baseUrl": url}, tools=[]), "hi")
    assert state.status == "error"
    assert state.error.message == f"cannot reach the model server at {url}: Connection refused"


async def test_stop_closes_the_stream(registry: Registry) -> None:
    engine = Engine(registry)
    signal = AbortSignal()
    with OllamaPeer([Step("trickle")]) as peer:
        wf = with_model(OLLAMA, ollama_params(peer), tools=[])
        task = asyncio.create_task(engine.create(wf, start="Chat", items=[chat_item("go on", "s")], signal=signal).run())
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(None, peer.answering.wait, 5)
        signal.abort()
        state = await task
        closed = await loop.run_in_executor(None, peer.closed.wait, 5)
    assert state.status == "cancelled"
    assert closed, "the server never saw the connection closed"


async def test_base_url_and_key_from_an_ollama_credential(registry: Registry, tmp_path) -> None:
    from engine.credentials import ChainedCredentialStore, EnvCredentialStore, FileCredentialStore
    from engine.services import Services

    store = FileCredentialStore(tmp_path / "credentials.json")
    with OllamaPeer([Step(text="hi")]) as peer:
        info = store.save("ollamaApi", "Lab box", {"baseUrl": peer.url, "apiKey": "ollama-key-42"})
        engine = Engine(registry, Services(credentials=ChainedCredentialStore(store, EnvCredentialStore())))
        wf = with_model(OLLAMA, {"model": peer.model}, credentials=info.reference(), tools=[])
        state = await chat(engine, wf, "hello")
    assert state.status == "success", state.error
    assert peer.requests[0].headers["authorization"] == "Bearer ollama-key-42"


@pytest.mark.parametrize("kind", ["trickle", "drip"])
@pytest.mark.parametrize("streaming", [True, False])
async def test_deadline_ends_a_reply_that_never_ends(engine: Engine, kind: str, streaming: bool) -> None:
    with OllamaPeer([Step(kind, interval=0.2)]) as peer:
        wf = with_model(OLLAMA, ollama_params(peer, timeout=800), tools=[])
        tokens = TokenLog() if streaming else None
        started = time.perf_counter()
        state = await asyncio.wait_for(chat(engine, wf, "hi", tokens), 15)
        elapsed = time.perf_counter() - started
    assert state.status == "error" and state.error.node == "Model"
    assert state.error.message == f"the model server at {peer.url} did not finish its reply within 800 ms"
    assert 0.7 < elapsed < 5


async def test_idle_limit_ends_a_reply_that_pauses(engine: Engine) -> None:
    with OllamaPeer([Step("drip", interval=30)]) as peer:
        wf = with_model(OLLAMA, ollama_params(peer, idleTimeout=300), tools=[])
        state = await asyncio.wait_for(chat(engine, wf, "hi", TokenLog()), 15)
    assert state.status == "error"
    assert state.error.message == f"the model server at {peer.url} sent nothing for 300 ms in the middle of its reply"


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_50_mb_reply_is_refused(engine: Engine, streaming: bool) -> None:
    with OllamaPeer([Step("huge", size=50 * 1024 * 1024)]) as peer:
        wf = with_model(OLLAMA, ollama_params(peer), tools=[])
        state = await asyncio.wait_for(chat(engine, wf, "hi", TokenLog() if streaming else None), 30)
    assert state.status == "error"
    assert "sent a reply larger than 16,777,216 bytes" in state.error.message


async def test_a_reply_under_the_cap_streams_whole(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINI_N8N_MAX_REPLY_BYTES", "1000000")
    with OllamaPeer([Step("huge", size=300_000)]) as peer:
        state = await chat(engine, with_model(OLLAMA, ollama_params(peer), tools=[]), "hi", TokenLog())
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "x" * 300_000


async def test_sampling_options_are_sent_and_use_mlock_is_noted(engine: Engine) -> None:
    with OllamaPeer([Step(text="ok")]) as peer:
        params = ollama_params(peer, temperature=0.2, numCtx=4096, topK=20, numPredict=64, repeatPenalty=1.3,
                               penalizeNewline=False, useMLock=True)
        state = await chat(engine, with_model(OLLAMA, params, tools=[]), "hi")
    assert state.status == "success", state.error
    # n8n's Ollama client writes the options it was given, in its own order
    assert peer.requests[0].json["options"] == {"temperature": 0.2, "num_ctx": 4096, "num_predict": 64, "top_k": 20,
                                                "repeat_penalty": 1.3, "penalize_newline": False}
    [note] = model_runs(state)[0].metadata["notes"]
    assert note.startswith('Node "Model" sets the parameter "options.useMLock", which mini-n8n does not implement')
