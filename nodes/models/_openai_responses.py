"""The Responses API wire format (POST /v1/responses), as n8n's OpenAI Chat Model (LangChain's
ChatOpenAI with `useResponsesApi`) speaks it: messages out as `input` items, replies and stream
events back in.

Out: system and user messages are `message` items (system becomes `developer` for reasoning
models), an assistant turn is a `message` item followed by one `function_call` item per call, a
tool result a `function_call_output` item; tools are `{type: "function", name, description,
parameters, strict}`. In: the `output` items of a `response` (its `message` text, its
`function_call`s), usage as input/output tokens; streamed, the events up to `response.completed`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from engine.chat import ChatMessage, ModelReply, TokenCallback, ToolCall, ToolSpec, Usage

from ._openai_wire import decode_args, encode_args


def input_items(messages: Sequence[ChatMessage], reasoning_model: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"type": "function_call_output", "call_id": m.tool_call_id or "", "output": m.content})
        elif m.role == "assistant":
            out.append({"type": "message", "role": "assistant", "content": m.content})
            for call in m.tool_calls or []:
                out.append({"type": "function_call", "name": call.name, "arguments": encode_args(call.args), "call_id": call.id})
        elif m.parts is not None:  # LangChain's input_text / input_image parts
            content = [{"type": "input_text", "text": p.get("text", "")} if p.get("type") == "text"
                       else {"type": "input_image", "image_url": (p.get("image_url") or {}).get("url")} for p in m.parts]
            out.append({"type": "message", "role": m.role, "content": content})
        else:
            role = "developer" if m.role == "system" and reasoning_model else m.role
            out.append({"type": "message", "role": role, "content": m.content})
    return out


def tools_of(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters, "strict": None}
            for t in tools]


def usage_of(doc: Any) -> Usage | None:
    usage = doc.get("usage") if isinstance(doc, dict) else None
    if not isinstance(usage, dict):
        return None
    return Usage(promptTokens=int(usage.get("input_tokens") or 0), completionTokens=int(usage.get("output_tokens") or 0))


def failure(doc: dict[str, Any]) -> str | None:
    """Why a response did not complete (its error, or why it is incomplete), if it did not."""
    error = doc.get("error")
    if error:
        return str(error.get("message") or error) if isinstance(error, dict) else str(error)
    if doc.get("status") in ("failed", "cancelled"):
        return f"the response {doc['status']}"
    if doc.get("status") == "incomplete":
        reason = (doc.get("incomplete_details") or {}).get("reason") or "unknown"
        return f"the response is incomplete ({reason})"
    return None


def reply_from_response(doc: dict[str, Any]) -> ModelReply | None:
    """A `response` object as a ModelReply; None when it is not one."""
    output = doc.get("output")
    if not isinstance(output, list):
        return None
    texts: list[str] = []
    calls: list[ToolCall] = []
    for item in output:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "output_text":
                    texts.append(str(part.get("text", "")))
        elif item.get("type") == "function_call":
            calls.append(ToolCall(id=str(item.get("call_id") or item.get("id") or f"call_{len(calls) + 1}"),
                                  name=str(item.get("name", "")), args=decode_args(item.get("arguments"))))
    return ModelReply(content="".join(texts), toolCalls=calls, usage=usage_of(doc) or Usage())


@dataclass
class ResponsesStream:
    """Builds one reply from Responses API stream events."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, str]] = field(default_factory=dict)  # by output_index
    final: dict[str, Any] | None = None
    error: str | None = None
    deltas: int = 0

    def feed(self, event: dict[str, Any], on_token: TokenCallback | None) -> None:
        kind = event.get("type")
        if kind == "response.output_text.delta":
            piece = event.get("delta")
            if isinstance(piece, str) and piece:
                self.deltas += 1
                self.text.append(piece)
                if on_token is not None:
                    on_token(piece)
        elif kind == "response.output_item.added":
            item = event.get("item") or {}
            if item.get("type") == "function_call":
                self.calls[int(event.get("output_index", len(self.calls)))] = {
                    "id": str(item.get("call_id") or ""), "name": str(item.get("name") or ""), "arguments": ""}
        elif kind == "response.function_call_arguments.delta":
            call = self.calls.get(int(event.get("output_index", -1)))
            if call is not None and isinstance(event.get("delta"), str):
                self.deltas += 1
                call["arguments"] += event["delta"]
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self.final = event.get("response") if isinstance(event.get("response"), dict) else {}
            if kind != "response.completed":
                self.error = failure(self.final) or kind
        elif kind == "error":
            self.error = str(event.get("message") or event.get("code") or "error")

    @property
    def done(self) -> bool:
        return self.final is not None or self.error is not None

    def reply(self, prompt_estimate: int = 0) -> ModelReply:
        """The reply: the completed response's output when it has one, else what streamed."""
        if self.final is not None:
            whole = reply_from_response(self.final)
            if whole is not None and (whole.content or whole.tool_calls):
                return whole
        calls = [ToolCall(id=c["id"] or f"call_{i + 1}", name=c["name"], args=decode_args(c["arguments"]))
                 for i, (_index, c) in enumerate(sorted(self.calls.items()))]
        usage = usage_of(self.final) or Usage(promptTokens=prompt_estimate, completionTokens=self.deltas)
        return ModelReply(content="".join(self.text), toolCalls=calls, usage=usage)
