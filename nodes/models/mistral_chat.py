"""Mistral Cloud Chat Model (n8n's `lmChatMistralCloud` v1): Mistral's chat completions API.

n8n talks to it through LangChain's ChatMistralAI and Mistral's TypeScript SDK. What goes out,
as they write it: always streamed (`stream: true`: LangChain streams whenever the agent passes an
abort signal, which n8n's agents always do); LangChain's defaults `temperature: 0.7`, `top_p: 1`
unless the node sets them; `max_tokens` and `random_seed` when set; `safe_prompt: false`
always (n8n passes its "Enable Safe Mode" as `safeMode`, which LangChain no longer reads: the
option changes nothing, in n8n as here, and a run that sets it says so in the run log). Message
and tool shapes are the SDK's: an assistant turn with tool calls has no content and each call
`index: 0`; a call without a result is dropped; tool-call ids are Mistral's 9 letters and
digits, any other id turned into one as LangChain does. Replies are chat completion chunks
(server-sent events up to `[DONE]`), read by the OpenAI Chat Model's code.

The URL is Mistral's (https://api.mistral.ai/v1); a credential's `url` (not in n8n's
credential type) points it at another server with the same API.
"""

import json
from typing import Any, Sequence

from pydantic import Field, field_validator

from engine.chat import ChatMessage, ToolSpec
from engine.connection_types import AI_LANGUAGE_MODEL, PortSpec
from engine.context import SupplyContext
from engine.credentials import CredentialError, credential_ref, describe_credential
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from ._common import js_number, locator_value
from ._http import Endpoint, join_url
from ._openai_wire import to_wire_tools
from .openai_chat import OpenAIChat, OpenAIParams

MISTRAL_API = "https://api.mistral.ai/v1"
CREDENTIAL_TYPE = "mistralCloudApi"
_BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
SAFE_MODE_NOTE = ("Enable Safe Mode is on, but n8n 1.123 sends safe_prompt: false whatever it says (LangChain reads "
                  "safePrompt, the node sets safeMode); mini-n8n sends what n8n sends")


class MistralOptions(NodeParams):
    maxTokens: int = Field(-1, le=32768, title="Maximum Number of Tokens", description="Sent only when set")
    temperature: float = Field(0.7, ge=0, le=1, title="Sampling Temperature")
    maxRetries: int = Field(2, ge=0, le=10, title="Max Retries")
    topP: float = Field(1, ge=0, le=1, title="Top P")
    safeMode: bool = Field(False, title="Enable Safe Mode", description="Changes nothing in n8n 1.123 (see the run log)")
    randomSeed: int | None = Field(None, title="Random Seed")
    timeout: int = Field(60000, ge=1, title="Timeout (ms)", description="Deadline of the whole call, retries included")
    idleTimeout: int = Field(30000, ge=1, title="Idle Timeout (ms)", description="How long a reply that has begun may pause")


class MistralParams(NodeParams):
    model: str = Field("mistral-small", title="Model", description="A Mistral model id, e.g. mistral-small-latest")
    options: MistralOptions = Field(default_factory=MistralOptions, title="Options")

    @field_validator("model", mode="before")
    @classmethod
    def _resource_locator(cls, value: Any) -> Any:
        return locator_value(value)


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def mistral_tool_call_id(call_id: str) -> str:
    """LangChain's _convertToolCallIdToMistralCompatible: 9 letters or digits kept, any other id
    hashed (its 32-bit string hash, in base 62, cut or zero-padded to 9)."""
    if len(call_id) == 9 and call_id.isascii() and call_id.isalnum():
        return call_id
    h = 0
    units = call_id.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h = _int32(_int32(h << 5) - h + int.from_bytes(units[i:i + 2], "little"))
    h = abs(h)
    digits = ""
    while h:
        digits = _BASE62[h % 62] + digits
        h //= 62
    digits = digits or "0"
    return digits[:9] if len(digits) >= 9 else digits.rjust(9, "0")


def _arguments(args: dict[str, Any] | str) -> str:
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def to_mistral_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    answered = {mistral_tool_call_id(m.tool_call_id) for m in messages if m.role == "tool" and m.tool_call_id is not None}
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.parts is not None:  # the SDK's text and image_url chunks
            out.append({"role": m.role, "content": [
                {"type": "image_url", "image_url": p.get("image_url")} if p.get("type") == "image_url"
                else {"type": "text", "text": p.get("text", "")} for p in m.parts]})
        elif m.role == "tool":
            out.append({"role": "tool", "content": m.content, "tool_call_id": mistral_tool_call_id(m.tool_call_id or "")})
        elif m.role == "assistant" and m.tool_calls:
            calls = [{"id": mistral_tool_call_id(c.id), "type": "function",
                      "function": {"name": c.name, "arguments": _arguments(c.args)}, "index": 0}
                     for c in m.tool_calls if mistral_tool_call_id(c.id) in answered]
            if calls:
                out.append({"role": "assistant", "tool_calls": calls, "prefix": False})
            elif m.content.strip():
                out.append({"role": "assistant", "content": m.content, "prefix": False})
        elif m.role == "assistant":
            out.append({"role": "assistant", "content": m.content, "prefix": False})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def mistral_body(params: MistralParams, messages: Sequence[ChatMessage], tools: list[ToolSpec]) -> dict[str, Any]:
    """The SDK's ChatCompletionStreamRequest, its keys in the SDK's order."""
    opts = params.options
    given = opts.model_fields_set
    body: dict[str, Any] = {"model": params.model, "temperature": js_number(opts.temperature), "top_p": js_number(opts.topP)}
    if "maxTokens" in given:
        body["max_tokens"] = opts.maxTokens
    body["stream"] = True
    if opts.randomSeed is not None:
        body["random_seed"] = opts.randomSeed
    body["messages"] = to_mistral_messages(messages)
    if tools:
        body["tools"] = to_wire_tools(tools)
    body["safe_prompt"] = False
    return body


class MistralCloudChatModel(NodeType):
    type = "@n8n/n8n-nodes-langchain.lmChatMistralCloud"
    version = 1
    display_name = "Mistral Cloud Chat Model"
    description = "Mistral's models through its chat completions API"
    group = "Models"
    icon = "node"
    inputs = ()
    outputs = (PortSpec(AI_LANGUAGE_MODEL, "Model"),)
    Params = MistralParams
    credential_types = (CREDENTIAL_TYPE,)
    implemented_parameters = frozenset({"model", "options", "options.maxTokens", "options.temperature", "options.maxRetries",
                                        "options.topP", "options.safeMode", "options.randomSeed"})

    @classmethod
    def needs_credential(cls, parameters: dict[str, Any]) -> bool:
        return True

    async def supply_data(self, ctx: SupplyContext) -> OpenAIChat:
        params: MistralParams = ctx.params()
        name = ctx.node.name
        ref = credential_ref(ctx.node.credentials, CREDENTIAL_TYPE)
        try:
            cred = ctx.services.credentials.get(CREDENTIAL_TYPE, ref) or {}
        except CredentialError as exc:
            raise NodeOperationError(str(exc), node=name) from None
        key = cred.get("apiKey") or ""
        if not key:
            raise NodeOperationError(f"No API key: add a {CREDENTIAL_TYPE} credential (Mistral Cloud API)", node=name)
        if params.options.safeMode:
            ctx.note(SAFE_MODE_NOTE)
        base = str(cred.get("url") or MISTRAL_API).rstrip("/")
        opts = params.options
        endpoint = Endpoint(
            url=join_url(base, "chat/completions"), base_url=base, model=params.model, node=name,
            credential=describe_credential(CREDENTIAL_TYPE, ref) if ref else f"the {CREDENTIAL_TYPE} credential",
            headers={"Accept": "text/event-stream", "Authorization": f"Bearer {key}"},
            secret=key, timeout_ms=opts.timeout, idle_ms=opts.idleTimeout, max_retries=opts.maxRetries,
        )
        reader = OpenAIParams.model_validate({"model": params.model, "options": {"streaming": True}})
        return OpenAIChat(reader, endpoint, build_body=lambda m, t, _stream: mistral_body(params, m, t), always_stream=True)
