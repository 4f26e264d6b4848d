"""OpenAI Chat Model against a loopback Chat Completions peer, inside real agent workflows."""

from __future__ import annotations

import asyncio
import gzip
import json
import time
import zlib
from urllib.parse import urlsplit

import pytest

from engine.abort import AbortSignal
from engine.credentials import ChainedCredentialStore, EnvCredentialStore, FileCredentialStore
from engine.executor import Engine
from engine.registry import Registry
from engine.services import Services
from nodes.triggers.chat_trigger import chat_item
from tests.peers.http_peer import Step
from tests.peers.openai_peer import OpenAIPeer

from .model_workflows import OPENAI, TokenLog, chat, model_runs, with_model

CALC_CALL = {"id": "call_abc", "name": "Calculator", "arguments": {"input": "17 * 25"}}


def openai_params(peer: OpenAIPeer, **options: object) -> dict:
    return {"model": {"__rl": True, "value": peer.model, "mode": "list"},
            "options": {"baseURL": peer.base_url, **options}}


@pytest.fixture
def no_env_key(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("MINI_N8N_CREDENTIALS", str(tmp_path / "credentials.json"))


async def test_streamed_tool_round_then_answer(engine: Engine, no_env_key: None) -> None:
    script = [Step(tool_calls=[CALC_CALL], usage=(50, 9)), Step(text="17 times 25 is 425.", usage=(80, 7))]
    with OpenAIPeer(script) as peer:
        tokens = TokenLog()
        state = await chat(engine, with_model(OPENAI, openai_params(peer)), "What is 17 * 25?", tokens)
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "17 times 25 is 425."
    assert tokens.text() == "17 times 25 is 425."
    first, second = (r.json for r in peer.requests)
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert first["model"] == peer.model and "tool_choice" not in first
    assert first["tools"][0]["function"]["name"] == "Calculator"
    assert first["tools"][0]["function"]["parameters"]["properties"] == {"input": {"type": "string"}}
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    # the second request carries the assistant's call (arguments JSON-encoded) and the tool result
    assistant, tool = second["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == "call_abc"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"input": "17 * 25", "id": "call_abc"}
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_abc" and "425" in tool["content"]
    runs = model_runs(state)
    assert [r.metadata["tokenUsage"] for r in runs] == [
        {"promptTokens": 50, "completionTokens": 9}, {"promptTokens": 80, "completionTokens": 7}]
    assert all(r.metadata["latencyMs"] > 0 for r in runs)
    call = runs[0].data["ai_languageModel"][0][0]["json"]["toolCalls"][0]
    assert call == {"id": "call_abc", "name": "Calculator", "args": {"input": "17 * 25"}}
    assert state.run_data["Calculator"][0].data["ai_tool"][0][0]["json"] == {"response": "425"}
    assert peer.connections == 1  # the stream was read to its end, so the connection was reused


async def test_tool_calls_split_across_deltas_are_assembled_by_index(engine: Engine, no_env_key: None) -> None:
    calls = [{"id": "call_1", "name": "Calculator", "arguments": {"input": "1 + 2 + 3 + 4"}},
             {"id": "call_2", "name": "Calculator", "arguments": {"input": "(7 - 2) * 9"}}]
    with OpenAIPeer([Step(tool_calls=calls), Step(text="10 and 45")]) as peer:
        state = await chat(engine, with_model(OPENAI, openai_params(peer)), "two sums")
    assert state.status == "success", state.error
    outputs = [r.data["ai_tool"][0][0]["json"]["response"] for r in state.run_data["Calculator"]]
    assert outputs == ["10", "45"]
    tool_messages = [m for m in peer.requests[1].json["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_1", "call_2"]


async def test_usage_is_estimated_when_the_stream_has_none(engine: Engine, no_env_key: None) -> None:
    with OpenAIPeer([Step(text="abcdefghijkl")], send_usage=False) as peer:  # four 3-character deltas
        state = await chat(engine, with_model(OPENAI, openai_params(peer), tools=[]), "hi")
    assert state.status == "success", state.error
    usage = model_runs(state)[0].metadata["tokenUsage"]
    sent = json.dumps(peer.requests[0].json["messages"], ensure_ascii=False)
    assert usage == {"promptTokens": (len(sent) + 3) // 4, "completionTokens": 4}


async def test_without_streaming_the_response_json_is_read(engine: Engine, no_env_key: None) -> None:
    script = [Step(tool_calls=[CALC_CALL], usage=(11, 2)), Step(text="425", usage=(12, 1))]
    with OpenAIPeer(script) as peer:
        state = await chat(engine, with_model(OPENAI, openai_params(peer, streaming=False)), "17*25?")
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "425"
    assert all(r.json["stream"] is False and "stream_options" not in r.json for r in peer.requests)
    assert model_runs(state)[1].metadata["tokenUsage"] == {"promptTokens": 12, "completionTokens": 1}


async def test_options_reach_the_request_body(engine: Engine, no_env_key: None) -> None:
    with OpenAIPeer([Step(text="{}")]) as peer:
        params = openai_params(peer, temperature=0.1, maxTokens=64, topP=0.5, responseFormat="json_object")
        state = await chat(engine, with_model(OPENAI, params, tools=[]), "json please")
    assert state.status == "success", state.error
    body = peer.requests[0].json
    assert (body["temperature"], body["max_tokens"], body["top_p"]) == (0.1, 64, 0.5)
    assert body["response_format"] == {"type": "json_object"}
    assert "tools" not in body and "tool_choice" not in body


async def test_arguments_that_are_not_json_become_an_observation_the_model_sees(engine: Engine, no_env_key: None) -> None:
    broken = {"id": "call_bad", "name": "Calculator", "arguments": '{"input": "17 * 25"'}
    with OpenAIPeer([Step(tool_calls=[broken]), Step(text="sorry")]) as peer:
        state = await chat(engine, with_model(OPENAI, openai_params(peer)), "17*25?")
    assert state.status == "success", state.error
    raw = model_runs(state)[0].data["ai_languageModel"][0][0]["json"]["toolCalls"][0]["args"]
    assert raw == '{"input": "17 * 25"'
    assert "Calculator" not in state.run_data
    tool = peer.requests[1].json["messages"][-1]
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_bad"
    assert tool["content"].startswith("Error:") and "not valid JSON" in tool["content"]


async def test_key_from_the_credential_file_is_sent_and_never_recorded(engine: Engine, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    store = FileCredentialStore(tmp_path / "credentials.json")
    info = store.save("openAiApi", "Peer account", {"apiKey": "sk-test-secret-1234"})
    services = Services(credentials=ChainedCredentialStore(store, EnvCredentialStore()))
    eng = Engine(engine.registry, services)
    with OpenAIPeer([Step(text="hi")], api_key="sk-test-secret-1234") as peer:
        wf = with_model(OPENAI, openai_params(peer), credentials=info.reference(), tools=[])
        state = await chat(eng, wf, "hello")
    assert state.status == "success", state.error
    assert peer.requests[0].headers["authorization"] == "Bearer sk-test-secret-1234"
    saved = json.dumps(state.to_json())
    assert "sk-test-secret-1234" not in saved
    assert wf.nodes[2].credentials == {"openAiApi": {"id": info.id, "name": "Peer account"}}


async def test_key_from_the_environment(engine: Engine, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MINI_N8N_CREDENTIALS", str(tmp_path / "none.json"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-5678")
    with OpenAIPeer([Step(text="hi")], api_key="sk-from-env-5678") as peer:
        state = await chat(Engine(engine.registry), with_model(OPENAI, openai_params(peer), tools=[]), "hello")
    assert state.status == "success", state.error


async def test_refused_key_names_the_credential_and_hides_the_key(engine: Engine, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    store = FileCredentialStore(tmp_path / "credentials.json")
    info = store.save("openAiApi", "Old key", {"apiKey": "sk-wrong-key-9999"})
    eng = Engine(engine.registry, Services(credentials=ChainedCredentialStore(store, EnvCredentialStore())))
    with OpenAIPeer([Step(text="never")], api_key="sk-right") as peer:
        state = await chat(eng, with_model(OPENAI, openai_params(peer), credentials=info.reference(), tools=[]), "hi")
    assert state.status == "error"
    assert state.error.node == "Model"
    assert state.error.message == "Authorization failed - please check your credentials"  # n8n's words
    explained = state.error.description
    assert 'refused credential "Old key" (openAiApi)' in explained and "401" in explained
    assert "sk-wrong-key-9999" not in json.dumps(state.to_json())
    assert model_runs(state)[0].error.description == explained


async def test_no_key_for_the_openai_api_is_a_clear_error(engine: Engine, no_env_key: None) -> None:
    state = await chat(engine, with_model(OPENAI, {"model": "gpt-4o-mini"}, tools=[]), "hi")
    assert state.status == "error"
    assert "No API key" in state.error.description and "OPENAI_API_KEY" in state.error.description


async def test_unknown_model_names_the_model(engine: Engine, no_env_key: None) -> None:
    with OpenAIPeer([Step(text="never")]) as peer:
        params = {"model": "gpt-9", "options": {"baseURL": peer.base_url}}
        state = await chat(engine, with_model(OPENAI, params, tools=[]), "hi")
    assert state.status == "error"
    assert state.error.message == "The resource you are requesting could not be found"
    assert 'does not know model "gpt-9"' in state.error.description and "404" in state.error.description
    assert "check the base URL" in state.error.description


async def test_rate_limit_is_retried_then_succeeds(engine: Engine, no_env_key: None) -> None:
    limited = Step("status", status=429, body={"error": {"message": "Rate limit reached"}}, headers={"retry-after-ms": "5"})
    with OpenAIPeer([limited, limited, Step(text="finally")]) as peer:
        state = await chat(engine, with_model(OPENAI, openai_params(peer), tools=[]), "hi")
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "finally"
    assert len(peer.requests) == 3


async def test_server_errors_are_reported_after_max_retries(engine: Engine, no_env_key: None) -> None:
    failing = Step("status", status=500, body={"error": {"message": "The server had an error"}}, headers={"retry-after": "0"})
    with OpenAIPeer([failing] * 4) as peer:
        state = await chat(engine, with_model(OPENAI, openai_params(peer, maxRetries=1), tools=[]), "hi")
    assert state.status == "error"
    assert len(peer.requests) == 2
    assert state.error.message == "The service was not able to process your request"
    message = state.error.description
    assert "500 Internal Server Error" in message and "after 1 retry" in message and "The server had an error" in message


async def test_unreachable_server(engine: Engine, no_env_key: None) -> None:
    with OpenAIPeer() as peer:
        url = peer.base_url
    state = await chat(engine, with_model(OPENAI, {"model": "m", "options": {"baseURL": url}}, tools=[]), "hi")
    assert state.status == "error"
    assert state.error.message == f"cannot reach the model server at {url}: Connection refused"


async def test_base_url_that_is_not_a_url(engine: Engine, no_env_key: None) -> None:
    state = await chat(engine, with_model(OPENAI, {"model": "m", "options": {"baseURL": "localhost:8080/v1"}}, tools=[]), "hi")
    assert state.status == "error"
    assert state.error.message == "the model server URL localhost:8080/v1 is not a valid http(s) URL"


async def test_timeout(engine: Engine, no_env_key: None) -> None:
    with OpenAIPeer([Step("hang")]) as peer:
        state = await chat(engine, with_model(OPENAI, openai_params(peer, timeout=200, maxRetries=0), tools=[]), "hi")
    assert state.status == "error"
    assert state.error.message == f"the model server at {peer.base_url} did not finish its reply within 200 ms"


async def test_stream_cut_mid_reply(engine: Engine, no_env_key: None) -> None:
    with OpenAIPeer([Step("cut", text="a long answer that will not arrive whole")]) as peer:
        state = await chat(engine, with_model(OPENAI, openai_params(peer), tools=[]), "hi")
    assert state.status == "error"
    assert state.error.message == f"the model server at {peer.base_url} ended the stream mid-reply"


@pytest.mark.parametrize("streaming", [True, False])
async def test_body_that_is_not_json(engine: Engine, no_env_key: None, streaming: bool) -> None:
    with OpenAIPeer([Step("garbage")]) as peer:
        state = await chat(engine, with_model(OPENAI, openai_params(peer, streaming=streaming), tools=[]), "hi")
    assert state.status == "error"
    assert "answered with text that is not JSON: '<html>502 proxy error</html>'" in state.error.message


async def test_stop_closes_the_stream(registry: Registry, no_env_key: None) -> None:
    engine = Engine(registry)
    signal = AbortSignal()
    with OpenAIPeer([Step("trickle")]) as peer:
        wf = with_model(OPENAI, openai_params(peer), tools=[])
        execution = engine.create(wf, start="Chat", items=[chat_item("talk forever", "s")], signal=signal)
        task = asyncio.create_task(execution.run())
        await asyncio.get_running_loop().run_in_executor(None, peer.answering.wait, 5)
        signal.abort()
        state = await task
        closed = await asyncio.get_running_loop().run_in_executor(None, peer.closed.wait, 5)
    assert state.status == "cancelled"
    assert closed, "the server never saw the connection closed"


async def test_loopback_servers_bypass_a_proxy_from_the_environment(engine: Engine, monkeypatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    with OpenAIPeer([Step(text="direct")]) as peer:
        state = await chat(engine, with_model(OPENAI, openai_params(peer), tools=[]), "hi")
    assert state.status == "success", state.error


COMPLETION = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000, "model": "peer-model",
              "choices": [{"index": 0, "message": {"role": "assistant", "content": "packed"}, "finish_reason": "stop"}],
              "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_compressed_reply_is_read(engine: Engine, no_env_key: None, encoding: str) -> None:
    raw = json.dumps(COMPLETION).encode()
    packed = gzip.compress(raw) if encoding == "gzip" else zlib.compress(raw)
    with OpenAIPeer([Step("status", status=200, body=packed, headers={"Content-Encoding": encoding})]) as peer:
        state = await chat(engine, with_model(OPENAI, openai_params(peer, streaming=False), tools=[]), "hi")
        asked = peer.requests[0].headers["accept-encoding"]
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "packed"
    assert asked == "gzip, deflate"


async def test_a_reply_in_an_encoding_not_asked_for_is_an_error(engine: Engine, no_env_key: None) -> None:
    body = json.dumps(COMPLETION).encode()
    with OpenAIPeer([Step("status", status=200, body=body, headers={"Content-Encoding": "br"})]) as peer:
        state = await chat(engine, with_model(OPENAI, openai_params(peer, streaming=False), tools=[]), "hi")
    assert state.status == "error"
    assert state.error.message == (f"the model server at {peer.base_url} sent a reply that cannot be read: "
                                   "it is encoded as 'br', which was not asked for")


class ForwardProxy(OpenAIPeer):
    """An HTTP forward proxy that answers for the origin itself: it records the absolute-form
    targets it is asked for and serves them as the Chat Completions peer would."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.targets: list[str] = []

    def respond(self, conn, request, step) -> bool:
        self.targets.append(request.path)
        request.path = urlsplit(request.path).path
        return super().respond(conn, request, step)


@pytest.mark.parametrize("streaming", [True, False])
async def test_other_hosts_go_through_the_proxy_from_the_environment(engine: Engine, no_env_key: None, monkeypatch,
                                                                     streaming: bool) -> None:
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with ForwardProxy([Step(text="via the proxy")]) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        params = {"model": proxy.model, "options": {"baseURL": "http://models.example/v1", "streaming": streaming}}
        state = await chat(engine, with_model(OPENAI, params, tools=[]), "hi")
    assert state.status == "success", state.error
    assert proxy.targets == ["http://models.example/v1/chat/completions"]


async def run_bounded(engine: Engine, wf, message: str = "hi", within_s: float = 15.0):
    """The chat run and its wall time; a run that would hang fails the test instead."""
    started = time.perf_counter()
    state = await asyncio.wait_for(chat(engine, wf, message), within_s)
    return state, time.perf_counter() - started


@pytest.mark.parametrize("kind", ["trickle", "drip"])
@pytest.mark.parametrize("streaming", [True, False])
async def test_deadline_ends_a_reply_that_never_ends(engine: Engine, no_env_key: None, kind: str, streaming: bool) -> None:
    """A server that keeps streaming tokens, or sends a byte every 0.2 s, is cut at the Timeout."""
    with OpenAIPeer([Step(kind, interval=0.2)]) as peer:
        wf = with_model(OPENAI, openai_params(peer, timeout=800, streaming=streaming), tools=[])
        state, elapsed = await run_bounded(engine, wf)
        closed = await asyncio.get_running_loop().run_in_executor(None, peer.closed.wait, 5)
    assert state.status == "error"
    assert state.error.node == "Model"
    assert state.error.message == f"the model server at {peer.base_url} did not finish its reply within 800 ms"
    assert "Timeout option" in state.error.description
    assert 0.7 < elapsed < 5
    assert closed, "the connection was left open"


async def test_idle_limit_ends_a_reply_that_pauses(engine: Engine, no_env_key: None) -> None:
    with OpenAIPeer([Step("drip", interval=30)]) as peer:  # one byte, then silence
        wf = with_model(OPENAI, openai_params(peer, idleTimeout=300), tools=[])
        state, elapsed = await run_bounded(engine, wf)
    assert state.status == "error"
    assert state.error.message == f"the model server at {peer.base_url} sent nothing for 300 ms in the middle of its reply"
    assert "Idle Timeout" in state.error.description
    assert elapsed < 5


async def test_the_idle_limit_starts_with_the_first_byte(engine: Engine, no_env_key: None) -> None:
    """Reading a long prompt before the first token is not a pause: only the deadline bounds it."""
    with OpenAIPeer([Step("late", text="ready", interval=0.6)]) as peer:
        wf = with_model(OPENAI, openai_params(peer, idleTimeout=200, timeout=5000), tools=[])
        state, _ = await run_bounded(engine, wf)
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "ready"
    assert peer.requests[0].json["stream"] is True


async def test_stop_wins_over_the_deadline(registry: Registry, no_env_key: None) -> None:
    signal = AbortSignal()
    with OpenAIPeer([Step("drip", interval=0.2)]) as peer:
        wf = with_model(OPENAI, openai_params(peer, timeout=60000), tools=[])
        execution = Engine(registry).create(wf, start="Chat", items=[chat_item("hi", "s")], signal=signal)
        task = asyncio.create_task(execution.run())
        await asyncio.get_running_loop().run_in_executor(None, peer.answering.wait, 5)
        signal.abort()
        state = await asyncio.wait_for(task, 5)
    assert state.status == "cancelled"


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_50_mb_reply_is_refused(engine: Engine, no_env_key: None, streaming: bool) -> None:
    with OpenAIPeer([Step("huge", size=50 * 1024 * 1024)]) as peer:
        wf = with_model(OPENAI, openai_params(peer, streaming=streaming), tools=[])
        state, _elapsed = await run_bounded(engine, wf)
    assert state.status == "error"
    assert state.error.message == (
        f"the model server at {peer.base_url} sent a reply larger than 16,777,216 bytes; it was refused")
    assert "MINI_N8N_MAX_REPLY_BYTES" in state.error.description
    assert len(json.dumps(state.to_json())) < 100_000  # nothing of the reply is kept


async def test_the_reply_cap_is_configurable(engine: Engine, no_env_key: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINI_N8N_MAX_REPLY_BYTES", "100000")
    with OpenAIPeer([Step("huge", size=200_000), Step("huge", size=50_000)]) as peer:
        state, _ = await run_bounded(engine, with_model(OPENAI, openai_params(peer), tools=[]))
        assert state.status == "error" and "larger than 100,000 bytes" in state.error.message
        state, _ = await run_bounded(engine, with_model(OPENAI, openai_params(peer), tools=[]))
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "x" * 50_000


async def test_the_cap_holds_for_a_reply_that_came_with_its_head(engine: Engine, no_env_key: None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINI_N8N_MAX_REPLY_BYTES", "1000")
    with OpenAIPeer([Step(text="x" * 2000), Step(text="x" * 500)]) as peer:  # one write each: head and body
        state, _ = await run_bounded(engine, with_model(OPENAI, openai_params(peer, streaming=False), tools=[]))
        assert state.status == "error" and "larger than 1,000 bytes" in state.error.message
        state, _ = await run_bounded(engine, with_model(OPENAI, openai_params(peer, streaming=False), tools=[]))
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "x" * 500


async def test_a_key_ending_in_a_newline_is_cleaned_and_never_shown(engine: Engine, tmp_path, monkeypatch, caplog) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    store = FileCredentialStore(tmp_path / "credentials.json")
    info = store.save("openAiApi", "Pasted key", {"apiKey": "sk-pasted-secret-77\n"})
    eng = Engine(engine.registry, Services(credentials=ChainedCredentialStore(store, EnvCredentialStore())))
    with OpenAIPeer([Step(text="hi")], api_key="sk-pasted-secret-77") as peer:
        state = await chat(eng, with_model(OPENAI, openai_params(peer), credentials=info.reference(), tools=[]), "hello")
    assert state.status == "success", state.error
    assert peer.requests[0].headers["authorization"] == "Bearer sk-pasted-secret-77"
    assert 'credential "Pasted key" (openAiApi)' in caplog.text and "line break" in caplog.text
    assert "sk-pasted-secret-77" not in caplog.text + json.dumps(state.to_json())


async def test_a_key_with_a_line_break_inside_is_a_clear_error(engine: Engine, tmp_path, monkeypatch) -> None:
    store = FileCredentialStore(tmp_path / "credentials.json")
    info = store.save("openAiApi", "Broken key", {"apiKey": "sk-broken\nsecret-88"})
    eng = Engine(engine.registry, Services(credentials=ChainedCredentialStore(store, EnvCredentialStore())))
    with OpenAIPeer([Step(text="never")]) as peer:
        state = await chat(eng, with_model(OPENAI, openai_params(peer), credentials=info.reference(), tools=[]), "hi")
    assert state.status == "error" and state.error.node == "Model"
    assert 'credential "Broken key" (openAiApi)' in state.error.description and "line break" in state.error.description
    saved = json.dumps(state.to_json())
    assert "sk-broken" not in saved and "secret-88" not in saved
    assert peer.requests == []
