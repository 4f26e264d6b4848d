"""The Agent's Automatically Passthrough Binary Images option: the input item's images and text
files as one more user message after the prompt, in each provider's wire format; nothing when
the option is off; files n8n keeps by reference refused by name."""

from __future__ import annotations

import base64
from typing import Any

from engine.chat import ChatMessage
from engine.executor import Engine
from engine.registry import Registry
from nodes.agent.binary_input import binary_parts
from nodes.models._anthropic_wire import split_messages
from nodes.models._gemini_wire import contents_of
from nodes.models._openai_responses import input_items
from nodes.models.mistral_chat import to_mistral_messages
from nodes.models.ollama_chat import ollama_messages
from tests.peers.http_peer import Step
from tests.peers.openai_peer import OpenAIPeer

from .models.model_workflows import OPENAI, with_model

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
NOTE = base64.b64encode("line one\nzwei – drei".encode()).decode()
BINARY = {
    "photo": {"mimeType": "image/png", "fileName": "p.png", "data": PNG},
    "notes": {"mimeType": "text/plain", "fileName": "notes.txt", "data": NOTE},
    "archive": {"mimeType": "application/zip", "fileName": "a.zip", "data": "UEsDBA=="},
}
PARTS = [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
         {"type": "text", "text": "File: notes.txt\nContent:\nline one\nzwei – drei"}]


async def _run(registry: Registry, agent_options: dict[str, Any]) -> tuple[Any, Any]:
    with OpenAIPeer([Step(text="a picture and notes")]) as peer:
        params = {"model": peer.model, "options": {"baseURL": peer.base_url, "streaming": False}}
        wf = with_model(OPENAI, params, tools=[], agent_options=agent_options)
        item = {"json": {"chatInput": "What is in these?", "sessionId": "s"}, "binary": BINARY}
        state = await Engine(registry).run(wf, start="Chat", items=[item])
    return state, peer.requests[0].json


async def test_images_and_text_files_follow_the_prompt(registry: Registry) -> None:
    state, body = await _run(registry, {})
    assert state.status == "success", state.error
    assert body["messages"][-2:] == [{"role": "user", "content": "What is in these?"}, {"role": "user", "content": PARTS}]


async def test_nothing_is_sent_with_the_option_off(registry: Registry) -> None:
    state, body = await _run(registry, {"passthroughBinaryImages": False})
    assert state.status == "success", state.error
    assert body["messages"][-1] == {"role": "user", "content": "What is in these?"}


def test_each_provider_writes_the_parts_its_own_way() -> None:
    message = ChatMessage(role="user", content="", parts=PARTS)
    _system, anthropic = split_messages([message])
    assert anthropic == [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "text", "text": PARTS[1]["text"]}]}]
    _system, gemini = contents_of([message], "gemini-2.5-flash")
    assert gemini == [{"role": "user", "parts": [{"inlineData": {"data": PNG, "mimeType": "image/png"}},
                                                 {"text": PARTS[1]["text"]}]}]
    assert input_items([message], False) == [{"type": "message", "role": "user", "content": [
        {"type": "input_image", "image_url": PARTS[0]["image_url"]["url"]}, {"type": "input_text", "text": PARTS[1]["text"]}]}]
    assert to_mistral_messages([message]) == [{"role": "user", "content": [
        {"type": "image_url", "image_url": PARTS[0]["image_url"]}, {"type": "text", "text": PARTS[1]["text"]}]}]
    assert ollama_messages([message]) == [{"role": "user", "content": "", "images": [PNG]},
                                          {"role": "user", "content": PARTS[1]["text"]}]


def test_a_file_kept_by_reference_is_refused_by_name() -> None:
    try:
        binary_parts("AI Agent", {"scan": {"mimeType": "image/jpeg", "id": "filesystem-v2:abc"}})
    except Exception as exc:  # noqa: BLE001 - the error's words are the point
        assert 'The binary file "scan" of the input item is kept by reference' in str(exc)
    else:
        raise AssertionError("no error")
