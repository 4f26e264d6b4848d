"""A message's JSON is made once and shared by every run that records it; it is not part of the
message's value."""

from __future__ import annotations

import copy
import pickle

from engine.chat import ChatMessage, ToolCall


def message(content: str = "calling") -> ChatMessage:
    return ChatMessage(role="assistant", content=content, toolCalls=[ToolCall(id="c1", name="calc", args={"input": "1 + 1"})])


def test_the_json_is_made_once_per_message() -> None:
    sent = message()
    made = sent.to_json()
    assert made == {"role": "assistant", "content": "calling", "toolCalls": [{"id": "c1", "name": "calc", "args": {"input": "1 + 1"}}]}
    assert sent.to_json() is made


def test_the_kept_json_is_no_part_of_the_message() -> None:
    sent = message()
    sent.to_json()
    assert sent == message()  # one made its JSON, the other not: still equal
    assert sent.model_dump(by_alias=True, exclude_none=True) == message().model_dump(by_alias=True, exclude_none=True)
    assert pickle.loads(pickle.dumps(sent)) == sent and copy.deepcopy(sent) == sent


def test_a_changed_copy_makes_its_own_json() -> None:
    sent = message()
    sent.to_json()
    assert sent.model_copy(update={"content": "other"}).to_json()["content"] == "other"
    assert ChatMessage(role="tool", content="2", toolCallId="c1").to_json() == {"role": "tool", "content": "2", "toolCallId": "c1"}


def test_making_the_json_does_not_go_through_pydantics_getattr(monkeypatch) -> None:
    """Reading the not yet made JSON the usual way fell through to BaseModel.__getattr__ (twice
    the cost of making the JSON): the slot is read through its descriptor."""
    asked: list[str] = []
    pydantic_getattr = ChatMessage.__getattr__

    def counting(self: ChatMessage, name: str) -> object:
        asked.append(name)
        return pydantic_getattr(self, name)

    monkeypatch.setattr(ChatMessage, "__getattr__", counting)
    sent = message()
    assert sent.to_json()["content"] == "calling" and sent.to_json() is sent.to_json()
    assert asked == []
