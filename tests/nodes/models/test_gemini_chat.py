"""Google Gemini Chat Model against the loopback Gemini API peer, inside agent workflows: the
request LangChain's ChatGoogleGenerativeAI sends (URL, key header, generationConfig, safety
settings, system instruction, function declarations, functionCall/functionResponse turns),
streamed and plain replies, usage, the API's error bodies, a stream cut or failing mid-reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.chat import ChatMessage, ToolCall, ToolSpec
from engine.credentials import FileCredentialStore
from engine.executor import Engine
from engine.registry import Registry
from engine.services import Services
from nodes.models._gemini_wire import contents_of, tools_of
from tests.peers.gemini_peer import GeminiPeer, bad_key, error_body
from tests.peers.http_peer import Step

from .model_workflows import TokenLog, chat, model_runs, with_model

GEMINI = "@n8n/n8n-nodes-langchain.lmChatGoogleGemini"
KEY = "AIza-test-key-12345"
CALC = {"name": "Calculator", "arguments": {"input": "17 * 25"}}


def _engine(registry: Registry, tmp_path: Path, url: str, key: str = KEY) -> tuple[Engine, dict]:
    store = FileCredentialStore(tmp_path / "credentials.json")
    info = store.save("googlePalmApi", "Gemini", {"apiKey": key, "host": url})
    return Engine(registry, Services(credentials=store)), info.reference()


def _params(**options: object) -> dict:
    return {"modelName": "models/gemini-peer", "options": options}


async def test_streamed_function_call_then_answer(registry: Registry, tmp_path: Path) -> None:
    with GeminiPeer([Step(tool_calls=[CALC], usage=(30, 8)), Step(text="It is 425.", usage=(50, 4))], api_key=KEY) as peer:
        engine, ref = _engine(registry, tmp_path, peer.url)
        tokens = TokenLog()
        state = await chat(engine, with_model(GEMINI, _params(), credentials=ref), "17*25?", tokens)
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "It is 425."
    assert tokens.text() == "It is 425."
    first, second = peer.requests
    assert first.path == "/v1beta/models/gemini-peer:streamGenerateContent?alt=sse"
    assert first.headers["x-goog-api-key"] == KEY and first.headers["x-goog-api-client"] == "genai-js/0.24.1"
    body = first.json
    assert list(body) == ["generationConfig", "safetySettings", "tools", "systemInstruction", "contents"]
    assert body["generationConfig"] == {"stopSequences": []} and body["safetySettings"] == []
    assert body["systemInstruction"] == {"role": "system", "parts": [{"text": "You are a helpful assistant"}]}
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "Calculator" and "additionalProperties" not in json.dumps(declaration)
    assert body["contents"] == [{"role": "user", "parts": [{"text": "17*25?"}]}]
    call_turn, result_turn = second.json["contents"][1:]
    assert call_turn["role"] == "model" and call_turn["parts"][1]["functionCall"]["name"] == "Calculator"
    assert call_turn["parts"][0] == {"text": 'Calling Calculator with input: {"input":"17 * 25","id":"' +
                                     call_turn["parts"][1]["functionCall"]["args"]["id"] + '"}'}
    assert result_turn == {"role": "user", "parts": [
        {"functionResponse": {"name": "Calculator", "response": {"result": '[{"response":"425"}]'}}}]}
    usage = [r.metadata["tokenUsage"] for r in model_runs(state)]
    assert usage == [{"promptTokens": 30, "completionTokens": 8}, {"promptTokens": 50, "completionTokens": 4}]


async def test_plain_reply_with_the_options_set(registry: Registry, tmp_path: Path) -> None:
    safety = {"values": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}]}
    with GeminiPeer([Step(text="plain", usage=(3, 2))]) as peer:
        engine, ref = _engine(registry, tmp_path, peer.url)
        params = _params(streaming=False, temperature=0.2, maxOutputTokens=100, topK=20, topP=0.9, safetySettings=safety)
        state = await chat(engine, with_model(GEMINI, params, credentials=ref, tools=[]), "hi")
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "plain"
    request = peer.requests[0]
    assert request.path == "/v1beta/models/gemini-peer:generateContent"
    body = request.json
    assert body["generationConfig"] == {"stopSequences": [], "maxOutputTokens": 100, "temperature": 0.2, "topP": 0.9, "topK": 20}
    assert body["safetySettings"] == [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}]
    assert "tools" not in body
    assert model_runs(state)[0].metadata["tokenUsage"] == {"promptTokens": 3, "completionTokens": 2}


def test_old_models_get_the_system_message_in_the_first_user_turn() -> None:
    messages = [ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="hi")]
    assert contents_of(messages, "gemini-pro") == (None, [{"role": "user", "parts": [{"text": "Be brief."}, {"text": "hi"}]}])
    system, contents = contents_of(messages, "gemini-2.5-flash")
    assert system == {"role": "system", "parts": [{"text": "Be brief."}]}
    assert contents == [{"role": "user", "parts": [{"text": "hi"}]}]


def test_tool_turns_and_declarations() -> None:
    call = ToolCall(id="c1", name="lookup", args={"q": "x"})
    messages = [ChatMessage(role="user", content="find x"),
                ChatMessage(role="assistant", content="Looking.", toolCalls=[call]),
                ChatMessage(role="tool", content="found", toolCallId="c1")]
    _system, contents = contents_of(messages, "gemini-3-pro-preview")
    assert contents[1]["parts"][0] == {"text": "Looking."}
    assert contents[1]["parts"][1]["functionCall"] == {"name": "lookup", "args": {"q": "x"}}
    assert contents[1]["parts"][1]["thoughtSignature"]  # gemini-3 needs one; LangChain sends its placeholder
    assert contents[2] == {"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {"result": "found"}}}]}
    tools = [ToolSpec(name="now", description="the time"),
             ToolSpec(name="lookup", description="d", parameters={
                 "$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": False,
                 "properties": {"q": {"type": "string"}}, "required": ["q"]})]
    assert tools_of(tools) == [{"functionDeclarations": [
        {"name": "now", "description": "the time"},
        {"name": "lookup", "description": "d",
         "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}]}]


@pytest.mark.parametrize(("step", "words"), [
    (Step("status", status=429, body=error_body(429, "Resource has been exhausted (e.g. check quota).")),
     "is rate limiting requests (429 Too Many Requests): Resource has been exhausted (e.g. check quota)."),
    (Step("status", status=500, body=error_body(500, "An internal error has occurred.")),
     "failed (500 Internal Server Error): An internal error has occurred."),
    (Step("overloaded", text="partial answer here"),
     "reported an error mid-reply: The model is overloaded. Please try again later."),
    (Step("cut", text="an answer that gets cut off"), "ended the stream mid-reply"),
])
async def test_errors_in_the_users_terms_without_the_key(registry: Registry, tmp_path: Path, step: Step, words: str) -> None:
    with GeminiPeer([step]) as peer:
        engine, ref = _engine(registry, tmp_path, peer.url)
        state = await chat(engine, with_model(GEMINI, _params(maxRetries=0), credentials=ref, tools=[]), "hi")
    assert state.status == "error"
    assert words in f"{state.error.message} {state.error.description}"
    assert KEY not in json.dumps(state.model_dump(mode="json"))


async def test_a_wrong_key_and_an_unknown_model_say_so(registry: Registry, tmp_path: Path) -> None:
    with GeminiPeer(api_key="the-right-key") as peer:
        engine, ref = _engine(registry, tmp_path, peer.url)
        state = await chat(engine, with_model(GEMINI, _params(maxRetries=0), credentials=ref, tools=[]), "hi")
        assert state.status == "error"
        assert state.error.message == "Bad request - please check your parameters"
        assert bad_key()["error"]["message"] in state.error.description and "(400 Bad Request)" in state.error.description
        engine, ref = _engine(registry, tmp_path, peer.url, key="the-right-key")
        params = {"modelName": "models/gemini-nope", "options": {"maxRetries": 0}}
        state = await chat(engine, with_model(GEMINI, params, credentials=ref, tools=[]), "hi")
    assert state.status == "error"
    assert 'does not know model "gemini-nope" (404 Not Found): models/gemini-nope is not found' in state.error.description


async def test_repeated_safety_categories_are_refused_before_any_request(registry: Registry, tmp_path: Path) -> None:
    twice = {"values": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"},
                        {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}]}
    with GeminiPeer([Step(text="never")]) as peer:
        engine, ref = _engine(registry, tmp_path, peer.url)
        state = await chat(engine, with_model(GEMINI, _params(safetySettings=twice), credentials=ref, tools=[]), "hi")
    assert state.status == "error"
    assert "The categories in `safetySettings` array must be unique" in json.dumps(state.model_dump(mode="json"))
    assert peer.requests == []


def test_bodies_are_byte_for_byte_what_langchain_and_googles_sdk_send() -> None:
    """Recorded from ChatGoogleGenerativeAI with Google's JS SDK as n8n 1.123 installs them
    (tests/fixtures/gemini/record_body.js), compared as bytes: keys in the SDK's order."""
    from engine.chat import ToolSpec
    from nodes.models.gemini_chat import GeminiParams, request_body

    recorded = json.loads((Path(__file__).parents[2] / "fixtures" / "gemini" / "bodies.json").read_text())
    tool = ToolSpec(name="Calculator", description="Does math", parameters={
        "type": "object", "properties": {"input": {"type": "string"}}, "additionalProperties": False,
        "$schema": "http://json-schema.org/draft-07/schema#"})
    call = ToolCall(id="call_abc123", name="Calculator", args={"input": "6 * 7", "id": "call_abc123"})
    messages = [
        ChatMessage(role="system", content="You are a helpful assistant"),
        ChatMessage(role="user", content="What is 6 * 7?"),
        ChatMessage(role="assistant", content='Calling Calculator with input: {"input":"6 * 7","id":"call_abc123"}',
                    toolCalls=[call]),
        ChatMessage(role="tool", content='[{"response":"42"}]', toolCallId="call_abc123"),
    ]

    def wire(body: dict) -> str:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))

    assert wire(request_body(GeminiParams(), messages, [tool])) == recorded["defaultsWithTools"]["body"]
    options = GeminiParams.model_validate({"options": {
        "temperature": 0.2, "maxOutputTokens": 100, "topK": 20, "topP": 0.9,
        "safetySettings": {"values": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}]}}})
    assert wire(request_body(options, [ChatMessage(role="user", content="hi")], [])) == recorded["options"]["body"]
