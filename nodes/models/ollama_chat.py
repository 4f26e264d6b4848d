"""Ollama Chat Model: Ollama's native /api/chat with tools and NDJSON streaming.

Each streamed line is a JSON object; the last has `done: true` with `prompt_eval_count` and
`eval_count` (the token usage). Tool calls come whole, with arguments as JSON objects.
"""

import json
from contextlib import aclosing
from typing import Any, Literal

from pydantic import Field, field_validator

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ModelReply, TokenCallback, ToolCall, ToolSpec, Usage
from engine.connection_types import AI_LANGUAGE_MODEL, PortSpec
from engine.context import SupplyContext
from engine.credentials import CredentialError, credential_ref, describe_credential
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from nodes.ignored_parameters import note_ignored

from ._common import locator_value
from ._http import Endpoint, drain, join_url, lines, open_response, parse_json, read_json, within_deadline
from ._openai_wire import decode_args, to_wire_tools
from .versions import OLLAMA_VERSIONS

OLLAMA_DEFAULT = "http://127.0.0.1:11434"
CREDENTIAL_TYPE = "ollamaApi"


class OllamaOptions(NodeParams):
    baseUrl: str = Field("", title="Base URL", description=f"Empty: the credential's URL, else {OLLAMA_DEFAULT}")
    temperature: float = Field(0.7, ge=0, le=2, title="Sampling Temperature")
    numCtx: int = Field(2048, ge=1, title="Context Length")
    keepAlive: str = Field("5m", title="Keep Alive", description="How long the model stays loaded, e.g. 5m, 1h, -1")
    format: Literal["default", "json"] = Field("default", title="Output Format")
    timeout: int = Field(
        300000, ge=1, title="Timeout (ms)", description="Deadline of the whole call, retries included; loading a model can take a while",
    )
    idleTimeout: int = Field(30000, ge=1, title="Idle Timeout (ms)", description="How long a reply that has begun may pause")
    maxRetries: int = Field(2, ge=0, le=10, title="Max Retries")
    # sent in the request's `options` only when set (n8n's Ollama client leaves unset ones out)
    numPredict: int | None = Field(None, title="Max Tokens to Generate", description="-1: no limit")
    topK: int | None = Field(None, title="Top K")
    topP: float | None = Field(None, ge=0, le=1, title="Top P")
    frequencyPenalty: float | None = Field(None, title="Frequency Penalty")
    presencePenalty: float | None = Field(None, title="Presence Penalty")
    repeatPenalty: float | None = Field(None, title="Repetition Penalty")
    penalizeNewline: bool | None = Field(None, title="Penalize Newlines")
    lowVram: bool | None = Field(None, title="Low VRAM Mode")
    mainGpu: int | None = Field(None, title="Main GPU ID")
    numBatch: int | None = Field(None, title="Context Batch Size")
    numGpu: int | None = Field(None, title="Number of GPUs")
    numThread: int | None = Field(None, title="Number of CPU Threads")
    vocabOnly: bool | None = Field(None, title="Load Vocabulary Only")


# n8n's option -> the key of Ollama's request `options`, in the order n8n's client writes them
SAMPLING_OPTIONS = {
    "numBatch": "num_batch", "numGpu": "num_gpu", "mainGpu": "main_gpu", "lowVram": "low_vram",
    "vocabOnly": "vocab_only", "numThread": "num_thread", "numPredict": "num_predict", "topK": "top_k",
    "topP": "top_p", "repeatPenalty": "repeat_penalty", "presencePenalty": "presence_penalty",
    "frequencyPenalty": "frequency_penalty", "penalizeNewline": "penalize_newline",
}


class OllamaParams(NodeParams):
    model: str = Field("llama3.2", title="Model", description="A model the Ollama server has pulled")
    baseUrl: str = Field("", title="Base URL", description=f"Empty: options or credential, else {OLLAMA_DEFAULT}")
    options: OllamaOptions = Field(default_factory=OllamaOptions, title="Options")

    @field_validator("model", mode="before")
    @classmethod
    def _resource_locator(cls, value: Any) -> Any:
        return locator_value(value)


def ollama_messages(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    names = {c.id: c.name for m in messages for c in (m.tool_calls or [])}
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.parts is not None:  # one message per part, as LangChain's ChatOllama writes them
            out += [{"role": m.role, "content": "", "images": [str((p.get("image_url") or {}).get("url", "")).partition(",")[2]]}
                    if p.get("type") == "image_url" else {"role": m.role, "content": p.get("text", "")} for p in m.parts]
            continue
        entry: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.role == "assistant" and m.tool_calls:
            entry["tool_calls"] = [
                {"function": {"name": c.name, "arguments": c.args if isinstance(c.args, dict) else {"input": c.args}}}
                for c in m.tool_calls
            ]
        if m.role == "tool" and m.tool_call_id in names:
            entry["tool_name"] = names[m.tool_call_id]
        out.append(entry)
    return out


def request_body(params: OllamaParams, messages: list[ChatMessage], tools: list[ToolSpec], stream: bool) -> dict[str, Any]:
    opts = params.options
    body: dict[str, Any] = {
        "model": params.model,
        "messages": ollama_messages(messages),
        "stream": stream,
        "options": {"temperature": opts.temperature, "num_ctx": opts.numCtx,
                    **{key: getattr(opts, name) for name, key in SAMPLING_OPTIONS.items() if getattr(opts, name) is not None}},
        "keep_alive": int(opts.keepAlive) if opts.keepAlive.lstrip("-").isdigit() else opts.keepAlive,
    }
    if tools:
        body["tools"] = to_wire_tools(tools)
    if opts.format == "json":
        body["format"] = "json"
    return body


class _Reply:
    """Collects the pieces of one /api/chat reply, streamed or not."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.usage = Usage()
        self.done = False

    def feed(self, line: dict[str, Any], on_token: TokenCallback | None) -> None:
        message = line.get("message") or {}
        piece = message.get("content")
        if isinstance(piece, str) and piece:
            self.text.append(piece)
            if on_token is not None:
                on_token(piece)
        for call in message.get("tool_calls") or []:
            fn = call.get("function") or {} if isinstance(call, dict) else {}
            raw = fn.get("arguments")
            args = decode_args(raw if isinstance(raw, (dict, str)) else json.dumps(raw))
            call_id = call.get("id") or f"call_{len(self.calls) + 1}"
            self.calls.append(ToolCall(id=str(call_id), name=str(fn.get("name", "")), args=args))
        if line.get("done"):
            self.done = True
            self.usage = Usage(
                promptTokens=int(line.get("prompt_eval_count") or 0),
                completionTokens=int(line.get("eval_count") or 0),
            )

    def reply(self) -> ModelReply:
        return ModelReply(content="".join(self.text), toolCalls=self.calls, usage=self.usage)


class OllamaChat:
    """The model object the node supplies: one /api/chat request per `invoke`."""

    def __init__(self, params: OllamaParams, endpoint: Endpoint) -> None:
        self.params = params
        self.endpoint = endpoint

    async def invoke(
        self,
        messages: list[ChatMessage],
        tools: list[ToolSpec],
        signal: AbortSignal,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        ep = self.endpoint
        stream = on_token is not None
        reply = _Reply()
        body = request_body(self.params, messages, tools, stream)
        with within_deadline(ep, signal):
            response = await open_response(ep, body)
            try:
                if not stream:
                    self._feed(reply, await read_json(ep, response), None)
                else:
                    async with aclosing(lines(ep, response)) as body_lines:
                        async for line in body_lines:
                            if line.strip():
                                self._feed(reply, parse_json(ep, line), on_token)
                                if reply.done:
                                    break
                        if reply.done:
                            await drain(body_lines)
            finally:
                await response.aclose()
        if not reply.done:
            raise ep.error(f"the model server at {ep.base_url} ended the stream mid-reply")
        return reply.reply()

    def _feed(self, reply: _Reply, doc: Any, on_token: TokenCallback | None) -> None:
        ep = self.endpoint
        if not isinstance(doc, dict):
            raise ep.error(f"the model server at {ep.base_url} answered with JSON that is not a chat reply")
        if doc.get("error"):
            raise ep.error(f"the model server at {ep.base_url} reported an error: {doc['error']}")
        reply.feed(doc, on_token)


class OllamaChatModel(NodeType):
    type = "@n8n/n8n-nodes-langchain.lmChatOllama"
    version = 1
    versions = OLLAMA_VERSIONS
    display_name = "Ollama Chat Model"
    description = "A model served by Ollama (native /api/chat, tools, streaming)"
    group = "Models"
    icon = "ollama"
    inputs = ()
    outputs = (PortSpec(AI_LANGUAGE_MODEL, "Model"),)
    Params = OllamaParams
    credential_types = (CREDENTIAL_TYPE,)
    implemented_parameters = frozenset({"model", "options", "options.temperature", "options.numCtx", "options.keepAlive",
                                        "options.format", *(f"options.{name}" for name in SAMPLING_OPTIONS)})
    unsupported_parameters = dict.fromkeys(
        ("options.useMLock", "options.useMMap"),
        "not sent to Ollama, as in n8n, whose node passes it under a name its Ollama client does not read "
        "(a run-log note names it)")

    async def supply_data(self, ctx: SupplyContext) -> OllamaChat:
        params: OllamaParams = ctx.params()
        note_ignored(ctx, self.unsupported_parameters, self.unsupported_parameters)
        ref = credential_ref(ctx.node.credentials, CREDENTIAL_TYPE)
        try:
            cred = ctx.services.credentials.get(CREDENTIAL_TYPE, ref) or {}
        except CredentialError as exc:
            raise NodeOperationError(str(exc), node=ctx.node.name) from None
        base = (params.baseUrl or params.options.baseUrl or cred.get("baseUrl") or OLLAMA_DEFAULT).rstrip("/")
        if "://" not in base:
            base = "http://" + base
        key = cred.get("apiKey") or ""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        endpoint = Endpoint(
            url=join_url(base, "api/chat"),
            base_url=base,
            model=params.model,
            node=ctx.node.name,
            credential=describe_credential(CREDENTIAL_TYPE, ref),
            headers=headers,
            secret=key or None,
            timeout_ms=params.options.timeout,
            idle_ms=params.options.idleTimeout,
            max_retries=params.options.maxRetries,
        )
        return OllamaChat(params, endpoint)
