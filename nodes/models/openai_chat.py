"""OpenAI Chat Model: the Chat Completions API over httpx, for OpenAI and compatible servers.

Works with llama.cpp's server, vLLM, LM Studio and Ollama's /v1 alike. Streams tokens over
server-sent events when a token callback is given, assembles tool-call deltas, reads usage
from the stream (`stream_options.include_usage`) or the response, estimated when a server
sends none (llama-cpp-python's server does not).
"""

from __future__ import annotations

from contextlib import aclosing
from typing import Any, Literal

from pydantic import Field, field_validator

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ModelReply, TokenCallback, ToolSpec
from engine.connection_types import AI_LANGUAGE_MODEL, PortSpec
from engine.context import SupplyContext
from engine.credentials import CredentialError, credential_ref, describe_credential
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from ._common import cancel_on_abort, locator_value
from ._http import Endpoint, drain, join_url, lines, open_response, parse_json, read_json, within_deadline
from ._openai_wire import StreamAssembler, estimate_prompt_tokens, reply_from_completion, to_wire_messages, to_wire_tools
from .versions import OPENAI_VERSIONS, openai_default_model, openai_version_notes

OPENAI_API = "https://api.openai.com/v1"
CREDENTIAL_TYPE = "openAiApi"


class OpenAIOptions(NodeParams):
    baseURL: str = Field("", title="Base URL", description=f"Empty: the credential's URL, else {OPENAI_API}")
    temperature: float = Field(0.7, ge=0, le=2, title="Sampling Temperature")
    maxTokens: int = Field(-1, ge=-1, title="Maximum Number of Tokens", description="-1: no limit")
    topP: float = Field(1, ge=0, le=1, title="Top P")
    frequencyPenalty: float = Field(0, ge=-2, le=2, title="Frequency Penalty")
    presencePenalty: float = Field(0, ge=-2, le=2, title="Presence Penalty")
    responseFormat: Literal["text", "json_object"] = Field("text", title="Response Format")
    timeout: int = Field(60000, ge=1, title="Timeout (ms)", description="Deadline of the whole call, retries included")
    idleTimeout: int = Field(30000, ge=1, title="Idle Timeout (ms)", description="How long a reply that has begun may pause")
    maxRetries: int = Field(2, ge=0, le=10, title="Max Retries")
    streaming: bool = Field(
        True, title="Stream Tokens",
        description="Off for servers that cannot stream tool calls (llama-cpp-python's chatml-function-calling)",
    )


class OpenAIParams(NodeParams):
    model: str = Field("gpt-4o-mini", title="Model", description="The model id the server knows")
    options: OpenAIOptions = Field(default_factory=OpenAIOptions, title="Options")

    @field_validator("model", mode="before")
    @classmethod
    def _resource_locator(cls, value: Any) -> Any:
        return locator_value(value)


def request_body(params: OpenAIParams, messages: list[ChatMessage], tools: list[ToolSpec], stream: bool) -> dict[str, Any]:
    opts = params.options
    body: dict[str, Any] = {"model": params.model, "messages": to_wire_messages(messages), "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    if tools:
        body["tools"] = to_wire_tools(tools)
        body["tool_choice"] = "auto"  # the API's default; some compatible servers only call tools when told
    body["temperature"] = opts.temperature
    if opts.topP != 1:
        body["top_p"] = opts.topP
    if opts.maxTokens > 0:
        body["max_tokens"] = opts.maxTokens
    if opts.frequencyPenalty:
        body["frequency_penalty"] = opts.frequencyPenalty
    if opts.presencePenalty:
        body["presence_penalty"] = opts.presencePenalty
    if opts.responseFormat == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


class OpenAIChat:
    """The model object the node supplies: one Chat Completions request per `invoke`."""

    def __init__(self, params: OpenAIParams, endpoint: Endpoint) -> None:
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
        stream = on_token is not None and self.params.options.streaming
        body = request_body(self.params, messages, tools, stream)
        with cancel_on_abort(signal):
            async with within_deadline(ep):
                response = await open_response(ep, body)
                try:
                    if stream and response.headers.get("content-type", "").startswith("text/event-stream"):
                        return await self._read_stream(response, on_token, estimate_prompt_tokens(body))
                    doc = await read_json(ep, response)
                finally:
                    await response.aclose()
        return self._reply(doc, on_token)

    def _reply(self, doc: Any, on_token: TokenCallback | None) -> ModelReply:
        ep = self.endpoint
        if isinstance(doc, dict) and doc.get("error"):
            raise ep.error(f"the model server at {ep.base_url} reported an error: {_error_text(doc['error'])}")
        reply = reply_from_completion(doc) if isinstance(doc, dict) else None
        if reply is None:
            raise ep.error(f"the model server at {ep.base_url} answered without a reply (no choices)")
        if on_token is not None and reply.content:
            on_token(reply.content)
        return reply

    async def _read_stream(self, response: Any, on_token: TokenCallback | None, prompt_estimate: int) -> ModelReply:
        ep = self.endpoint
        assembler = StreamAssembler()
        data: list[str] = []
        done = False
        async with aclosing(lines(ep, response)) as stream:
            async for line in stream:
                if line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
                    continue
                if line or not data:
                    continue  # comments (":"), event names, blank keep-alives
                payload, data = "\n".join(data), []
                if payload.strip() == "[DONE]":
                    done = True
                    break
                chunk = parse_json(ep, payload)
                if isinstance(chunk, dict) and chunk.get("error"):
                    raise ep.error(f"the model server at {ep.base_url} reported an error mid-reply: {_error_text(chunk['error'])}")
                if isinstance(chunk, dict):
                    assembler.feed(chunk, on_token)
            if done:
                await drain(stream)
        if data and not done:
            payload = "\n".join(data)
            done = payload.strip() == "[DONE]"
            if not done:
                chunk = parse_json(ep, payload)
                if isinstance(chunk, dict):
                    assembler.feed(chunk, on_token)
        if not done and assembler.finish_reason is None:
            raise ep.error(f"the model server at {ep.base_url} ended the stream mid-reply")
        return assembler.reply(prompt_estimate)


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


class OpenAIChatModel(NodeType):
    type = "@n8n/n8n-nodes-langchain.lmChatOpenAi"
    version = 1.2
    versions = OPENAI_VERSIONS
    display_name = "OpenAI Chat Model"
    description = "Chat Completions API: OpenAI, or any compatible server (llama.cpp, vLLM, LM Studio, Ollama /v1)"
    group = "Models"
    icon = "openai"
    inputs = ()
    outputs = (PortSpec(AI_LANGUAGE_MODEL, "Model"),)
    Params = OpenAIParams
    credential_types = (CREDENTIAL_TYPE,)

    async def supply_data(self, ctx: SupplyContext) -> OpenAIChat:
        params: OpenAIParams = ctx.params()
        if "model" not in ctx.node.parameters:  # each version has its own default model
            params = params.model_copy(update={"model": openai_default_model(ctx.node.typeVersion)})
        for note in openai_version_notes(ctx.node.typeVersion, ctx.node.parameters):
            ctx.note(note)
        ref = credential_ref(ctx.node.credentials, CREDENTIAL_TYPE)
        try:
            cred = ctx.services.credentials.get(CREDENTIAL_TYPE, ref) or {}
        except CredentialError as exc:  # an unreadable file or a malformed key: say which, never what is in it
            raise NodeOperationError(str(exc), node=ctx.node.name) from None
        return chat_model(params, cred, ref, ctx.node.name)


def chat_model(params: OpenAIParams, cred: dict[str, Any], ref: dict[str, Any] | None, node: str) -> OpenAIChat:
    """The model object for these parameters and credential data (what the node supplies)."""
    base = (params.options.baseURL or cred.get("url") or OPENAI_API).rstrip("/")
    key = cred.get("apiKey") or ""
    if not key and base == OPENAI_API:
        raise NodeOperationError(
            f"No API key for {base}: add an {CREDENTIAL_TYPE} credential or set OPENAI_API_KEY",
            node=node,
        )
    headers = {"Accept": "application/json, text/event-stream"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    if cred.get("organizationId"):
        headers["OpenAI-Organization"] = cred["organizationId"]
    endpoint = Endpoint(
        url=join_url(base, "chat/completions"),
        base_url=base,
        model=params.model,
        node=node,
        credential=describe_credential(CREDENTIAL_TYPE, ref) if ref else "the API key (openAiApi credential or OPENAI_API_KEY)",
        headers=headers,
        secret=key or None,
        timeout_ms=params.options.timeout,
        idle_ms=params.options.idleTimeout,
        max_retries=params.options.maxRetries,
    )
    return OpenAIChat(params, endpoint)
