"""The Anthropic Messages API wire format, as LangChain's ChatAnthropic (which n8n uses) writes it.

Out: system messages become the top-level `system`; an assistant turn with tool calls is a
content list (its text, then one `tool_use` block per call); tool results are `tool_result`
blocks of one user message, consecutive results together. In: a `message`'s content blocks
(text joined, `tool_use` as calls, `thinking` left out, as n8n's agent leaves it out), usage as
input/output tokens; streamed, the events from message_start to message_stop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from engine.chat import ChatMessage, ModelReply, TokenCallback, ToolCall, ToolSpec, Usage

from ._openai_wire import decode_args


def split_messages(messages: Sequence[ChatMessage]) -> tuple[str | None, list[dict[str, Any]]]:
    """(the system text, the conversation) in the wire format."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            system.append(m.content)
        elif m.parts is not None:
            out.append({"role": m.role, "content": [_block(p) for p in m.parts]})
        elif m.role == "tool":
            block = {"type": "tool_result", "content": m.content, "tool_use_id": m.tool_call_id or ""}
            last = out[-1] if out else None
            if last is not None and last["role"] == "user" and isinstance(last["content"], list) \
                    and all(b.get("type") == "tool_result" for b in last["content"]):
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m.role == "assistant" and m.tool_calls:
            content: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
            content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.args if isinstance(c.args, dict) else {}}
                        for c in m.tool_calls]
            out.append({"role": "assistant", "content": content})
        else:
            out.append({"role": m.role, "content": m.content})
    return ("\n\n".join(system) if system else None), out


def data_url(url: str) -> tuple[str, str]:
    """(media type, base64 data) of a `data:<type>;base64,<data>` URL."""
    head, _, data = url.partition(",")
    return head.removeprefix("data:").split(";")[0], data


def _block(part: dict[str, Any]) -> dict[str, Any]:
    """A text or image_url part as LangChain's ChatAnthropic writes it."""
    if part.get("type") == "image_url":
        media_type, data = data_url(str((part.get("image_url") or {}).get("url", "")))
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {"type": "text", "text": part.get("text", "")}


def tools_of(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


def _usage(doc: Any) -> Usage | None:
    usage = doc.get("usage") if isinstance(doc, dict) else None
    if not isinstance(usage, dict):
        return None
    return Usage(promptTokens=int(usage.get("input_tokens") or 0), completionTokens=int(usage.get("output_tokens") or 0))


def reply_from_message(doc: dict[str, Any]) -> ModelReply | None:
    content = doc.get("content")
    if not isinstance(content, list):
        return None
    texts = [str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
    calls = [ToolCall(id=str(b.get("id") or f"toolu_{i}"), name=str(b.get("name", "")),
                      args=b.get("input") if isinstance(b.get("input"), dict) else {})
             for i, b in enumerate(content) if isinstance(b, dict) and b.get("type") == "tool_use"]
    return ModelReply(content="\n".join(texts) if len(texts) > 1 else "".join(texts), toolCalls=calls, usage=_usage(doc) or Usage())


@dataclass
class MessageStream:
    """Builds one reply from the Messages API's stream events."""

    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int | None = None
    stopped: bool = False
    error: str | None = None

    def feed(self, event: dict[str, Any], on_token: TokenCallback | None) -> None:
        kind = event.get("type")
        if kind == "message_start":
            usage = (event.get("message") or {}).get("usage") or {}
            self.prompt_tokens = int(usage.get("input_tokens") or 0)
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            block["json"] = ""
            self.blocks[int(event.get("index", len(self.blocks)))] = block
        elif kind == "content_block_delta":
            block = self.blocks.setdefault(int(event.get("index", 0)), {"type": "text", "text": "", "json": ""})
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                piece = str(delta.get("text", ""))
                block["text"] = block.get("text", "") + piece
                if piece and on_token is not None:
                    on_token(piece)
            elif delta.get("type") == "input_json_delta":
                block["json"] += str(delta.get("partial_json", ""))
        elif kind == "message_delta":
            usage = event.get("usage") or {}
            if "output_tokens" in usage:
                self.completion_tokens = int(usage["output_tokens"])
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            error = event.get("error") or {}
            self.error = str(error.get("message") or error.get("type") or "error") if isinstance(error, dict) else str(error)

    def reply(self) -> ModelReply:
        content = []
        for _index, block in sorted(self.blocks.items()):
            if block.get("type") == "tool_use":
                args = decode_args(block["json"]) if block["json"] else block.get("input") or {}
                content.append({**block, "input": args})
            else:
                content.append(block)
        reply = reply_from_message({"content": content})
        assert reply is not None
        usage = Usage(promptTokens=self.prompt_tokens, completionTokens=self.completion_tokens or 0)
        return reply.model_copy(update={"usage": usage})
