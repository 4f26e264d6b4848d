"""Chat Completions and Ollama message shapes, stream assembly and error texts, without a server."""

from __future__ import annotations

import json
from functools import partial

import httpx
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.chat import ChatMessage, ToolCall
from nodes.models._http import Endpoint, retry_delay, server_message, status_error
from nodes.models._openai_wire import (StreamAssembler, decode_args, read_chunk, read_completion, reply_from_completion,
                                       reply_from_read, to_wire_messages)
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


# what a field of a streamed chunk may hold: mostly the type servers send, now and then another one
_odd = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False),
                 st.text(max_size=3), st.integers(2**64 - 2, 2**64 + 2), st.just({}), st.just([]), st.just({"a": 1}))
_ABSENT = object()


def _field(draw: st.DrawFn, usual: st.SearchStrategy) -> object:
    """Mostly a value of `usual`; else none (_ABSENT) or an odd one."""
    kind = draw(st.sampled_from(["usual"] * 8 + ["absent", "odd"]))
    return draw(usual) if kind == "usual" else _ABSENT if kind == "absent" else draw(_odd)


def _present(**fields: object) -> dict:
    """The fields that are there."""
    return {key: value for key, value in fields.items() if value is not _ABSENT}


@st.composite
def _chunks(draw: st.DrawFn) -> dict:
    """A chunk whose every field is there with the type servers send, mostly; else absent or odd."""
    field = partial(_field, draw)

    def piece() -> dict:
        function = _present(name=field(st.sampled_from(["", "Calc", "ulator"])), arguments=field(st.text(max_size=4)))
        return _present(index=field(st.integers(0, 1)), id=field(st.sampled_from(["", "a", "b"])), type="function",
                       function=field(st.just(function)))

    def choice() -> dict:
        delta = _present(role="assistant", content=field(st.text(max_size=4)),
                        tool_calls=field(st.just([piece() for _ in range(draw(st.integers(0, 2)))])))
        return _present(index=0, delta=field(st.just(delta)), logprobs=None,
                       finish_reason=field(st.sampled_from([None, "stop", "tool_calls", ""])))

    usage = _present(prompt_tokens=field(st.integers(0, 99)), completion_tokens=field(st.integers(0, 99)))
    return _present(id="chatcmpl-1", object="chat.completion.chunk",
                   choices=field(st.just([choice() for _ in range(draw(st.integers(0, 2)))])),
                   usage=field(st.sampled_from([usage, None])),
                   error=draw(st.one_of(st.just(_ABSENT), st.sampled_from([{"message": "overloaded"}, "boom", 0, ""]), _odd)))


def _assembled(texts: list[str], typed: bool) -> tuple[object, ...]:
    """What the assembler holds after these chunks, fed as dicts or, where msgspec reads them, typed;
    with whether each chunk reads as an error, or the exception the chunks raised."""
    asm, errors = StreamAssembler(), []
    try:
        for text in texts:
            read = read_chunk(text) if typed else None
            if read is not None:
                errors.append(bool(read.error))
                asm.feed_reads([read], None)
                continue
            value = json.loads(text)
            if type(value) is dict:
                errors.append(bool(value.get("error")))
                asm.feed(value, None)
    except Exception as exc:  # an odd shape the dict path fails on: both ways fail alike
        return (type(exc).__name__,)
    calls = [(key, call.id, call.name, call.arguments) for key, call in sorted(asm.calls.items())]
    return asm.text, calls, asm.usage, asm.finish_reason, asm.deltas, errors


@settings(max_examples=400, deadline=None)
@given(st.lists(_chunks(), min_size=1, max_size=3).flatmap(lambda few: st.lists(st.sampled_from(few), max_size=8)))
def test_a_chunk_msgspec_reads_is_assembled_as_its_dict_is(chunks: list[dict]) -> None:
    """(Chunks drawn from a few, so that pieces of the same call, names and ids repeat.) Text
    written as servers write it, and with every character beyond ASCII escaped."""
    for ascii_only in (False, True):
        texts = [json.dumps(chunk, ensure_ascii=ascii_only) for chunk in chunks]
        assert _assembled(texts, typed=True) == _assembled(texts, typed=False)


def test_chunks_of_the_types_servers_send_are_read_typed_and_others_as_dicts() -> None:
    piece = {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"a'}}]},
                          "logprobs": None, "finish_reason": None}], "usage": None, "system_fingerprint": "fp"}
    assert read_chunk(json.dumps(piece)) is not None
    assert read_chunk('{"choices": [], "usage": {"prompt_tokens": 123456789012345678901234567890}}') is not None
    for odd in ({"choices": [{"delta": {"content": ["a"]}}]}, {"choices": [{"finish_reason": 1}]}, ["a"],
                {"choices": [{"delta": {"tool_calls": [{"index": True}]}}]}):
        assert read_chunk(json.dumps(odd)) is None
    assert read_chunk('{"choices": [], "x": NaN}') is None  # the standard library reads it: so does the dict path


@st.composite
def _completions(draw: st.DrawFn) -> dict:
    """A non-streamed reply whose every field is there with the type servers send, mostly."""
    field = partial(_field, draw)

    def call() -> dict:
        function = _present(name=field(st.sampled_from(["", "Calculator"])),
                           arguments=field(st.sampled_from(['{"a": 1}', "", "  ", "not json", "[1]", '{"n": 1e400}'])))
        return _present(id=field(st.sampled_from(["", "call_a"])), type="function", function=field(st.just(function)))

    message = _present(role="assistant", content=field(st.sampled_from([None, "", "hi"])),
                      tool_calls=field(st.just([call() for _ in range(draw(st.integers(0, 2)))])))
    choices = [_present(index=0, message=field(st.just(message)), finish_reason="stop") for _ in range(draw(st.integers(0, 2)))]
    usage = _present(prompt_tokens=field(st.integers(0, 99)), completion_tokens=field(st.integers(0, 99)))
    return _present(id="chatcmpl-1", object="chat.completion", choices=field(st.just(choices)),
                   usage=field(st.sampled_from([usage, None])),
                   error=draw(st.one_of(st.just(_ABSENT), st.sampled_from([{"message": "overloaded"}, "boom", 0, ""]), _odd)))


def _replied(text: str, typed: bool) -> object:
    """The reply of a non-streamed body read as a dict or, where msgspec reads it, typed, with
    whether it reads as an error; or the exception reading it raised."""
    try:
        read = read_completion(text.encode()) if typed else None
        if read is not None:
            return bool(read.error), reply_from_read(read)
        doc = json.loads(text)
        return bool(isinstance(doc, dict) and doc.get("error")), reply_from_completion(doc) if isinstance(doc, dict) else None
    except Exception as exc:  # content of another type than text: the reply's validation refuses it either way
        return type(exc).__name__


@settings(max_examples=400, deadline=None)
@given(_completions())
@example({"choices": [{"message": {"tool_calls": [{"id": None, "function": {"name": None, "arguments": None}}]}}]})
@example({"choices": [{"message": {"tool_calls": [{"id": 7, "function": {"name": 5, "arguments": {"a": 1}}}, "x"]}}]})
@example({"choices": [{"message": None}, 1], "usage": {"prompt_tokens": 1.5}})
def test_a_reply_msgspec_reads_is_the_reply_its_dict_makes(completion: dict) -> None:
    for ascii_only in (False, True):
        text = json.dumps(completion, ensure_ascii=ascii_only)
        assert _replied(text, typed=True) == _replied(text, typed=False)


_json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
              st.text(max_size=5)),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=12)


def _as_json_loads(raw: str) -> dict | str:
    """decode_args by its definition: the standard library's reading of the text."""
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return raw
    return parsed if isinstance(parsed, dict) else raw


@settings(max_examples=400, deadline=None)
@given(_json_values, st.booleans())
@example({"big": 2**64, "tiny": 5e-324, "max": 1.7976931348623157e308, "neg": -0.0}, False)
def test_tool_call_arguments_are_read_as_the_standard_library_reads_them(value: object, ascii_only: bool) -> None:
    """(repr: 1 and 1.0, 0.0 and -0.0 told apart.)"""
    for raw in (json.dumps(value, ensure_ascii=ascii_only), json.dumps({"v": value}), '{"n": 1e400}', '{"s": "\\ud800"}',
                '{"a": 1, "a": 2}', '{"n": NaN}', "[1]", "not json", '{"a": 1} x'):
        assert repr(decode_args(raw)) == repr(_as_json_loads(raw)), raw
