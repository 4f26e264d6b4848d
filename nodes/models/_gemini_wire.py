"""The Gemini API's generateContent wire format, as LangChain's ChatGoogleGenerativeAI (n8n's
Google Gemini Chat Model) writes and reads it through Google's JS SDK.

Out: the system message becomes `systemInstruction` (`{"role": "system", "parts": [...]}`), or,
for the old models without system instructions (gemini-pro, gemini-1.0-pro...), the first
parts of the next user turn; the assistant is `model`, its tool calls `functionCall` parts
(after its text); each tool result is a `user` turn with one `functionResponse` part
(`{"name", "response": {"result": ...}}`). Tools are one `functionDeclarations` list whose
schemas lose `additionalProperties`, `$schema` and `strict`; a tool without properties has no
`parameters`. In: the first candidate's parts (texts joined, `functionCall` parts as calls),
`usageMetadata` as tokens; streamed, each chunk adds its parts and the last usage counts.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Sequence

from engine.chat import ChatMessage, ModelReply, TokenCallback, ToolCall, ToolSpec, Usage

# models LangChain sends no system instruction to (its computeUseSystemInstruction)
_NO_SYSTEM_INSTRUCTION = ("gemini-1.0-pro-001", "gemini-pro")
_NO_SYSTEM_PREFIXES = ("gemini-pro-vision", "gemini-1.0-pro-vision")
# what LangChain sends as a gemini-3 call's thought signature when it holds none
DUMMY_SIGNATURE = (
    "ErYCCrMCAdHtim9kOoOkrPiCNVsmlpMIKd7ZMxgiFbVQOkgp7nlLcDMzVsZwIzvuT7nQROivoXA72ccC2lSDvR0Gh7dkWaGuj7ctv6t7ZceHnecx0QYa+"
    "ix8tYpRfjhyWozQ49lWiws6+YGjCt10KRTyWsZ2h6O7iHTYJwKIRwGUHRKy/qK/6kFxJm5ML00gLq4D8s5Z6DBpp2ZlR+uF4G8jJgeWQgyHWVdx2wGY"
    "ElaceVAc66tZdPQRdOHpWtgYSI1YdaXgVI8KHY3/EfNc2YqqMIulvkDBAnuMhkAjV9xmBa54Tq+ih3Im4+r3DzqhGqYdsSkhS0kZMwte4Hjs65dZzCw9"
    "lANxIqYi1DJ639WNPYihp/DCJCos7o+/EeSPJaio5sgWDyUnMGkY1atsJZ+m7pj7DD5tvQ=="
)
_SCHEMA_KEYS_DROPPED = ("additionalProperties", "$schema", "strict")


def model_id(name: str) -> str:
    """The model as LangChain keeps it: without the `models/` prefix n8n's list gives it."""
    return name.removeprefix("models/")


def model_path(name: str) -> str:
    """The model's path in the URL, as the SDK writes it (`models/` unless a path is given)."""
    name = model_id(name)
    return name if "/" in name else f"models/{name}"


def uses_system_instruction(model: str) -> bool:
    return not (model in _NO_SYSTEM_INSTRUCTION or model.startswith(_NO_SYSTEM_PREFIXES))


def _call_parts(message: ChatMessage, model: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for call in message.tool_calls or []:
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": call.args if isinstance(call.args, dict) else {}}}
        if "gemini-3" in model:
            part["thoughtSignature"] = DUMMY_SIGNATURE
        parts.append(part)
    return parts


def contents_of(messages: Sequence[ChatMessage], model: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(systemInstruction or None, contents) for these messages."""
    system_instruction = uses_system_instruction(model)
    names: dict[str, str] = {}
    contents: list[dict[str, Any]] = []
    merge_next = False
    for index, m in enumerate(messages):
        if m.role == "system" and index != 0:
            raise ValueError("System message should be the first one")
        if m.role == "tool":
            result = {"functionResponse": {"name": names.get(m.tool_call_id or "", ""), "response": {"result": m.content}}}
            parts, role = [result], "user"
        elif m.parts is not None:
            parts, role = [_part(p, model) for p in m.parts], "user"
        else:
            parts = [{"text": m.content}] if m.content else []
            if m.role == "assistant":
                for call in m.tool_calls or []:
                    names[call.id] = call.name
                parts += _call_parts(m, model)
            role = {"assistant": "model", "user": "user"}.get(m.role, "system" if system_instruction else "user")
        if merge_next and contents:
            contents[-1]["parts"].extend(parts)
            merge_next = False
            continue
        contents.append({"role": role, "parts": parts})
        merge_next = m.role == "system" and not system_instruction
    if contents and contents[0]["role"] == "system":
        return contents[0], contents[1:]
    return None, contents


def _multimodal(model: str) -> bool:
    """LangChain's _isMultimodalModel: the models it sends images to."""
    return ("vision" in model or model.startswith(("gemini-1.5", "gemini-2", "gemini-3"))
            or (model.startswith("gemma-3-") and not model.startswith("gemma-3-1b")))


def _part(part: dict[str, Any], model: str) -> dict[str, Any]:
    if part.get("type") != "image_url":
        return {"text": part.get("text", "")}
    if not _multimodal(model):
        raise ValueError("This model does not support images")
    head, _, data = str((part.get("image_url") or {}).get("url", "")).partition(",")
    mime, _, encoding = head.removeprefix("data:").partition(";")
    if not head.startswith("data:") or encoding != "base64":
        raise ValueError("Please provide image as base64 encoded data URL")
    return {"inlineData": {"data": data, "mimeType": mime}}


def _gemini_schema(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _gemini_schema(v) for k, v in value.items() if k not in _SCHEMA_KEYS_DROPPED}
    if isinstance(value, list):
        return [_gemini_schema(v) for v in value]
    return value


def tools_of(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    declarations = []
    for tool in tools:
        schema = _gemini_schema(tool.parameters)
        declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
        if not (schema.get("type") == "object" and not schema.get("properties")):
            declaration["parameters"] = schema
        declarations.append(declaration)
    return [{"functionDeclarations": declarations}]


def usage_of(doc: Any) -> Usage | None:
    usage = doc.get("usageMetadata") if isinstance(doc, dict) else None
    if not isinstance(usage, dict):
        return None
    return Usage(promptTokens=int(usage.get("promptTokenCount") or 0),
                 completionTokens=int(usage.get("candidatesTokenCount") or 0))


def candidate_parts(doc: Any) -> list[dict[str, Any]] | None:
    """The first candidate's parts; None when the reply has no candidate (a blocked prompt)."""
    candidates = doc.get("candidates") if isinstance(doc, dict) else None
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        return None
    content = candidates[0].get("content") or {}
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def blocked_reason(doc: Any) -> str:
    """Why a reply has no candidate: the prompt feedback's block reason, as the API words it."""
    feedback = doc.get("promptFeedback") if isinstance(doc, dict) else None
    reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
    return f"the prompt was blocked ({reason})" if reason else "the reply has no candidates"


def _calls(parts: list[dict[str, Any]]) -> list[ToolCall]:
    calls = []
    for part in parts:
        call = part.get("functionCall")
        if isinstance(call, dict):
            given = call.get("id")
            calls.append(ToolCall(id=given if isinstance(given, str) and given else str(uuid.uuid4()),
                                  name=str(call.get("name", "")),
                                  args=call.get("args") if isinstance(call.get("args"), dict) else {}))
    return calls


def _text(parts: list[dict[str, Any]]) -> str:
    return "".join(str(p["text"]) for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))


def reply_from_response(doc: dict[str, Any]) -> ModelReply | None:
    parts = candidate_parts(doc)
    if parts is None:
        return None
    return ModelReply(content=_text(parts), toolCalls=_calls(parts), usage=usage_of(doc) or Usage())


@dataclass
class ContentStream:
    """Builds one reply from streamGenerateContent's chunks (each a whole response of its own)."""

    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None

    def feed(self, chunk: dict[str, Any], on_token: TokenCallback | None) -> None:
        self.usage = usage_of(chunk) or self.usage
        candidates = chunk.get("candidates")
        if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
            reason = candidates[0].get("finishReason")
            if isinstance(reason, str):
                self.finish_reason = reason
        parts = candidate_parts(chunk) or []
        piece = _text(parts)
        if piece:
            self.texts.append(piece)
            if on_token is not None:
                on_token(piece)
        self.calls += _calls(parts)

    def reply(self) -> ModelReply:
        return ModelReply(content="".join(self.texts), toolCalls=self.calls, usage=self.usage or Usage())
