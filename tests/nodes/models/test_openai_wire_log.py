"""An agent's growing conversation goes out in the wire format without re-encoding past messages."""

from __future__ import annotations

from engine.chat import ChatMessage, ToolCall
from engine.shared_log import LogWindow
from nodes.models import _openai_wire
from nodes.models._openai_wire import to_wire_messages


def test_each_message_of_an_agents_log_is_encoded_once(monkeypatch) -> None:
    encoded: list[object] = []
    original = _openai_wire.encode_args
    monkeypatch.setattr(_openai_wire, "encode_args", lambda args: encoded.append(args) or original(args))

    def round_(i: int) -> list[ChatMessage]:
        call = ToolCall(id=f"c{i}", name="Calculator", args={"expression": f"{i} + 1"})
        return [ChatMessage(role="assistant", toolCalls=[call]), ChatMessage(role="tool", content=str(i + 1), toolCallId=f"c{i}")]

    window = LogWindow.of([ChatMessage(role="system", content="s"), ChatMessage(role="user", content="u")])
    requests = []
    for i in range(5):
        window = window.extended(round_(i))
        requests.append(to_wire_messages(window))
    assert len(encoded) == 5  # one tool call per round, each encoded once for all later requests
    assert requests[-1][2] is requests[0][2]
    assert requests[-1][-1] == {"role": "tool", "tool_call_id": "c4", "content": "5"}
    assert requests[-1][-2]["tool_calls"][0]["function"] == {"name": "Calculator", "arguments": '{"expression":"4 + 1"}'}
    # a plain list is encoded as it is
    assert to_wire_messages(list(window)) == requests[-1]


def test_a_request_body_is_the_json_of_the_whole_body_with_past_messages_encoded_once(monkeypatch) -> None:
    from nodes.models import _openai_request
    from nodes.models._common import encode_json
    from nodes.models._openai_request import ChatCompletionsBodies, chat_completions_json

    encoded: list[object] = []
    monkeypatch.setattr(_openai_request, "encode_json", lambda value: encoded.append(value) or encode_json(value))
    window = LogWindow.of([ChatMessage(role="system", content="Sé brief ✓"), ChatMessage(role="user", content='say "hi"\n')])
    for i in range(4):
        call = ToolCall(id=f"c{i}", name="Calculator", args={"expression": f"{i} × 2", "n": 1.5e16})
        window = window.extended([ChatMessage(role="assistant", toolCalls=[call]),
                                  ChatMessage(role="tool", content=f"{i * 2}", toolCallId=f"c{i}")])
        body = ChatCompletionsBodies("m", {"temperature": 0.5}).body(window, [], stream=True)
        assert chat_completions_json(body, window) == encode_json(body).encode()
    assert len(encoded) == 4 + 2 + 8  # each request's head, then every message once
