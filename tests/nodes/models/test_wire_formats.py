"""Chat Completions and Ollama message shapes, stream assembly and error texts, without a server."""

from __future__ import annotations

import httpx

from engine.chat import ChatMessage, ToolCall
from nodes.models._http import Endpoint, retry_delay, server_message, status_error
from nodes.models._openai_wire import StreamAssembler, decode_args, to_wire_messages
from nodes.models.ollama_chat import ollama_messages


def chunk(delta: dict, finish: str | None = None) -> dict:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_tool_call_deltas_by_index_interleaved() -> None:
    tokens: list[str] = []
    asm = StreamAssembler()
    asm.feed(chunk({"role": "assistant", "content": "Let me "}), tokens.append)
    asm.feed(chunk({"content": "check."}), tokens.append)
    asm.feed(chunk({"tool_calls": [{"index": 1, "id": "b", "type": "function", "function": {"name": "Calc", "arguments": ""}}]}), None)
    asm.feed(chunk({"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "Think", "arguments": '{"th'}}]}), None)
    asm.feed(chunk({"tool_calls": [{"index": 1, "function": {"name": "ulator", "arguments": '{"expression"'}}]}), None)
    asm.feed(chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ought": "hm"}'}}]}), None)
    asm.feed(chunk({"tool_calls": [{"index": 1, "function": {"arguments": ': "2+2"}'}}]}), None)
    asm.feed(chunk({}, "tool_calls"), None)
    asm.feed({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}}, None)
    reply = asm.reply()
    assert tokens == ["Let me ", "check."] and reply.content == "Let me check."
    assert [(c.id, c.name, c.args) for c in reply.tool_calls] == [
        ("a", "Think", {"thought": "hm"}), ("b", "Calculator", {"expression": "2+2"})]
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (9, 4)


def test_a_name_repeated_on_every_delta_is_not_doubled() -> None:
    asm = StreamAssembler()
    for part in ('{"a"', ': 1}'):
        asm.feed(chunk({"tool_calls": [{"index": 0, "id": "x", "function": {"name": "Calculator", "arguments": part}}]}), None)
    assert asm.reply().tool_calls[0].name == "Calculator"


def test_arguments_that_are_not_a_json_object_stay_raw() -> None:
    assert decode_args('{"a": 1}') == {"a": 1}
    assert decode_args("") == {}
    assert decode_args('{"a": ') == '{"a": '
    assert decode_args("[1, 2]") == "[1, 2]"


def test_message_shapes() -> None:
    messages = [
        ChatMessage(role="user", content="q"),
        ChatMessage(role="assistant", content="", toolCalls=[ToolCall(id="c", name="Calculator", args={"expression": "1"}),
                                                               ToolCall(id="d", name="Calculator", args="{broken")]),
        ChatMessage(role="tool", content="1", toolCallId="c"),
    ]
    openai = to_wire_messages(messages)
    assert openai[1] == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "Calculator", "arguments": '{"expression":"1"}'}},
        {"id": "d", "type": "function", "function": {"name": "Calculator", "arguments": "{broken"}}]}
    assert openai[2] == {"role": "tool", "tool_call_id": "c", "content": "1"}
    said = [ChatMessage(role="assistant", content="Calling Calculator", toolCalls=[ToolCall(id="c", name="Calculator")])]
    assert to_wire_messages(said)[0]["content"] == ""  # LangChain's ChatOpenAI drops it
    assert to_wire_messages(said, call_text=True)[0]["content"] == "Calling Calculator"  # ChatGroq keeps it
    ollama = ollama_messages(messages)
    assert ollama[1]["tool_calls"][0] == {"function": {"name": "Calculator", "arguments": {"expression": "1"}}}
    assert ollama[2] == {"role": "tool", "content": "1", "tool_name": "Calculator"}


def test_error_texts_name_the_thing_and_hide_the_key() -> None:
    ep = Endpoint(url="http://h/v1/chat/completions", base_url="http://h/v1", model="m", node="Model",
                  credential='credential "Work" (openAiApi)', secret="sk-secret-123")
    body = b'{"error": {"message": "Incorrect API key provided: sk-secret-123."}}'
    assert server_message(body) == "Incorrect API key provided: sk-secret-123."
    refused = status_error(ep, 401, "Unauthorized", body, 0)
    assert refused.message == "Authorization failed - please check your credentials"  # NodeApiError's, as in n8n
    assert refused.description == ('the model server at http://h/v1 refused credential "Work" (openAiApi) '
                                   "(401 Unauthorized): Incorrect API key provided: ***.")
    limited = status_error(ep, 429, "Too Many Requests", b'{"error": {"message": "slow down"}}', 2)
    assert limited.message == "The service is receiving too many requests from you"
    assert limited.description == ("the model server at http://h/v1 is rate limiting requests (429 Too Many Requests) "
                                   "after 2 retries: slow down")
    assert status_error(ep, 418, "Teapot", b"", 0).message == "Your request is invalid or could not be processed by the service"


def test_retry_delay_honours_the_server_then_backs_off() -> None:
    assert retry_delay(1, httpx.Headers({"retry-after-ms": "250"})) == 0.25
    assert retry_delay(1, httpx.Headers({"retry-after": "3"})) == 3.0
    assert retry_delay(1, httpx.Headers({"retry-after": "9999"})) == 20.0
    assert [retry_delay(n, httpx.Headers()) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
