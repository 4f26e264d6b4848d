"""The Chat Completions peer sends the same bytes whether its streamed reply goes in one write or
event by event."""

from __future__ import annotations

import json
import socket
from typing import Any

from tests.peers.http_peer import Step
from tests.peers.openai_peer import OpenAIPeer

CALL = {"id": "call_1", "name": "Calculator", "arguments": {"input": "1 * 2"}}


def raw_reply(token_delay: float) -> bytes:
    body = json.dumps({"model": "peer-model", "stream": True, "stream_options": {"include_usage": True},
                       "messages": [{"role": "user", "content": "go"}]}).encode()
    with OpenAIPeer([Step(text="Hello there", tool_calls=[CALL], usage=(3, 4))], token_delay=token_delay) as peer:
        with socket.create_connection(("127.0.0.1", peer.port)) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body) + body)
            received = b""
            while not received.endswith(b"0\r\n\r\n"):
                data = sock.recv(65536)
                assert data, received
                received += data
    return received


def test_a_streamed_reply_is_the_same_bytes_in_one_write_or_many() -> None:
    at_once, paced = raw_reply(0.0), raw_reply(1e-6)
    assert at_once == paced
    assert at_once.startswith(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n")
    assert at_once.count(b"data: ") > 5 and b"data: [DONE]\n\n\r\n0\r\n\r\n" in at_once


def documented_chunk(choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> bytes:
    doc: dict[str, Any] = {"id": "chatcmpl-peer", "object": "chat.completion.chunk", "created": 1_700_000_000,
                           "model": "peer-model", "system_fingerprint": "fp_peer", "choices": choices}
    if usage is not None:
        doc["usage"] = usage
    return b"data: " + json.dumps(doc, separators=(",", ":")).encode() + b"\n\n"


def delta(d: dict[str, Any], reason: str | None = None) -> list[dict[str, Any]]:
    return [{"index": 0, "delta": d, "logprobs": None, "finish_reason": reason}]


def test_streamed_events_are_the_chunk_objects_encoded_compactly() -> None:
    text = 'Héllo "x"\\\n😀'
    calls = [CALL, {"name": "Lookup", "arguments": '{"q": "é"}'}]
    body = {"model": "peer-model", "stream": True, "stream_options": {"include_usage": True}, "messages": []}
    with OpenAIPeer() as peer:
        events = peer.chunks(body, Step(text=text, tool_calls=calls, usage=(3, 4)))
    expected = [documented_chunk(delta({"role": "assistant", "content": ""}))]
    expected += [documented_chunk(delta({"content": text[i:i + 3]})) for i in range(0, len(text), 3)]
    for index, call in enumerate(calls):
        args = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
        first = {"index": index, "id": call.get("id", f"call_{index}"), "type": "function",
                 "function": {"name": call["name"], "arguments": ""}}
        expected.append(documented_chunk(delta({"tool_calls": [first]})))
        expected += [documented_chunk(delta({"tool_calls": [{"index": index, "function": {"arguments": args[j:j + 4]}}]}))
                     for j in range(0, len(args), 4)]
    expected.append(documented_chunk(delta({}, "tool_calls")))
    expected.append(documented_chunk([], {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}))
    assert events == [*expected, b"data: [DONE]\n\n"]
