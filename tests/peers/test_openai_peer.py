"""The Chat Completions peer sends the same bytes whether its streamed reply goes in one write or
event by event."""

from __future__ import annotations

import json
import socket

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
