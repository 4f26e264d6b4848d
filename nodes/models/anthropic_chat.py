"""Anthropic Chat Model (n8n's `lmChatAnthropic`, v1–v1.3): the Messages API over HTTP.

The request is the one n8n sends through LangChain's ChatAnthropic: `model`, `max_tokens` (the
node's Maximum Number of Tokens, else LangChain's default for the model), the options the node
sets (temperature, top_k, top_p), `thinking` (disabled, or enabled with its budget; then
temperature, top_k and top_p are not sent), the system message as `system`, tools with their
`input_schema`. Streams tokens when the editor shows them; usage from the reply. Errors name
the server, the model or the credential (never the key). The credential's URL (default
https://api.anthropic.com) is the server.
"""

from contextlib import aclosing
from typing import Any

from pydantic import Field, field_validator

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ModelReply, TokenCallback, ToolSpec
from engine.connection_types import AI_LANGUAGE_MODEL, PortSpec
from engine.context import SupplyContext
from engine.credentials import CredentialError, credential_ref, describe_credential
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from ._anthropic_wire import MessageStream, reply_from_message, split_messages, tools_of
from ._common import js_number, locator_value
from ._http import Endpoint, drain, join_url, lines, mid_reply_error, open_response, parse_json, read_json, within_deadline

ANTHROPIC_API = "https://api.anthropic.com"
CREDENTIAL_TYPE = "anthropicApi"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # n8n's, with thinking on
MIN_THINKING_BUDGET = 1024
# LangChain's default max_tokens by model prefix (its table, as it is), else 2048
_MODEL_MAX_TOKENS = (("claude-opus-4-1", 8192), ("claude-opus-4", 8192), ("claude-sonnet-4", 8192),
                     ("claude-sonnet-3-7-sonnet", 8192), ("claude-3-5-sonnet", 4096), ("claude-3-5-haiku", 4096),
                     ("claude-3-haiku", 2048))


class AnthropicOptions(NodeParams):
    maxTokensToSample: int = Field(DEFAULT_MAX_TOKENS, ge=1, title="Maximum Number of Tokens")
    temperature: float = Field(0.7, ge=0, le=1, title="Sampling Temperature", description="Sent only when set")
    topK: int = Field(-1, title="Top K")
    topP: float = Field(1, ge=0, le=1, title="Top P")
    thinking: bool = Field(False, title="Enable Thinking")
    thinkingBudget: int = Field(MIN_THINKING_BUDGET, ge=MIN_THINKING_BUDGET, title="Thinking Budget (Tokens)")
    timeout: int = Field(60000, ge=1, title="Timeout (ms)", description="Deadline of the whole call, retries included")
    idleTimeout: int = Field(30000, ge=1, title="Idle Timeout (ms)", description="How long a reply that has begun may pause")
    maxRetries: int = Field(2, ge=0, le=10, title="Max Retries")
    streaming: bool = Field(True, title="Stream Tokens")


class AnthropicParams(NodeParams):
    model: str = Field("claude-3-5-sonnet-20240620", title="Model", description="The model id, e.g. claude-sonnet-4-20250514")
    options: AnthropicOptions = Field(default_factory=AnthropicOptions, title="Options")

    @field_validator("model", mode="before")
    @classmethod
    def _resource_locator(cls, value: Any) -> Any:
        return locator_value(value)


def default_max_tokens(model: str) -> int:
    return next((n for prefix, n in _MODEL_MAX_TOKENS if model.startswith(prefix)), 2048)


def request_body(params: AnthropicParams, messages: list[ChatMessage], tools: list[ToolSpec], stream: bool) -> dict[str, Any]:
    opts = params.options
    given = opts.model_fields_set
    system, conversation = split_messages(messages)
    body: dict[str, Any] = {"model": params.model}
    if opts.thinking:
        body["max_tokens"] = opts.maxTokensToSample if "maxTokensToSample" in given else DEFAULT_MAX_TOKENS
        body["thinking"] = {"type": "enabled", "budget_tokens": opts.thinkingBudget}
    else:
        for option, key in (("temperature", "temperature"), ("topK", "top_k"), ("topP", "top_p")):
            if option in given:
                body[key] = js_number(getattr(opts, option))
        if "topP" in given and "temperature" not in given:
            body.pop("temperature", None)
        body["max_tokens"] = opts.maxTokensToSample if "maxTokensToSample" in given else default_max_tokens(params.model)
        body["thinking"] = {"type": "disabled"}
    body["stream"] = stream
    if tools:
        body["tools"] = tools_of(tools)
    if system is not None:
        body["system"] = system
    body["messages"] = conversation
    return body


class AnthropicChat:
    """The model object the node supplies: one Messages API request per `invoke`."""

    def __init__(self, params: AnthropicParams, endpoint: Endpoint) -> None:
        self.params = params
        self.endpoint = endpoint

    async def invoke(self, messages: list[ChatMessage], tools: list[ToolSpec], signal: AbortSignal,
                     on_token: TokenCallback | None = None) -> ModelReply:
        ep = self.endpoint
        stream = on_token is not None and self.params.options.streaming
        body = request_body(self.params, messages, tools, stream)
        with within_deadline(ep, signal):
            response = await open_response(ep, body)
            try:
                if stream and response.headers.get("content-type", "").startswith("text/event-stream"):
                    return await self._read_stream(response, on_token)
                doc = await read_json(ep, response)
            finally:
                await response.aclose()
        if not isinstance(doc, dict) or doc.get("type") == "error":
            error = doc.get("error") if isinstance(doc, dict) else None
            said = error.get("message") if isinstance(error, dict) else doc
            raise ep.error(f"the model server at {ep.base_url} reported an error: {said}")
        reply = reply_from_message(doc)
        if reply is None:
            raise ep.error(f"the model server at {ep.base_url} answered without a reply (no content)")
        if on_token is not None and reply.content:
            on_token(reply.content)
        return reply

    async def _read_stream(self, response: Any, on_token: TokenCallback | None) -> ModelReply:
        ep = self.endpoint
        assembler = MessageStream()
        data: list[str] = []
        async with aclosing(lines(ep, response)) as stream:
            async for line in stream:
                if line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
                    continue
                if line or not data:
                    continue  # event names, comments, blank keep-alives
                payload, data = "\n".join(data), []
                event = parse_json(ep, payload)
                if isinstance(event, dict):
                    assembler.feed(event, on_token)
                if assembler.error is not None:
                    raise mid_reply_error(ep, assembler.error)
                if assembler.stopped:
                    await drain(stream)
                    break
        if data and not assembler.stopped:
            event = parse_json(ep, "\n".join(data))
            if isinstance(event, dict):
                assembler.feed(event, on_token)
        if assembler.error is not None:
            raise mid_reply_error(ep, assembler.error)
        if not assembler.stopped:
            raise ep.error(f"the model server at {ep.base_url} ended the stream mid-reply")
        return assembler.reply()


class AnthropicChatModel(NodeType):
    type = "@n8n/n8n-nodes-langchain.lmChatAnthropic"
    version = 1.3
    versions = (1, 1.1, 1.2, 1.3)
    display_name = "Anthropic Chat Model"
    description = "Claude models through Anthropic's Messages API"
    group = "Models"
    icon = "node"
    inputs = ()
    outputs = (PortSpec(AI_LANGUAGE_MODEL, "Model"),)
    Params = AnthropicParams
    implemented_parameters = frozenset({"model", "options", "options.maxTokensToSample", "options.temperature", "options.topK",
                                        "options.topP", "options.thinking", "options.thinkingBudget"})
    credential_types = (CREDENTIAL_TYPE,)

    async def supply_data(self, ctx: SupplyContext) -> AnthropicChat:
        params: AnthropicParams = ctx.params()
        name = ctx.node.name
        ref = credential_ref(ctx.node.credentials, CREDENTIAL_TYPE)
        try:
            cred = ctx.services.credentials.get(CREDENTIAL_TYPE, ref) or {}
        except CredentialError as exc:
            raise NodeOperationError(str(exc), node=name) from None
        key = cred.get("apiKey") or ""
        if not key:
            raise NodeOperationError(f"No API key: add an {CREDENTIAL_TYPE} credential", node=name)
        base = str(cred.get("url") or ANTHROPIC_API).rstrip("/")
        headers = {"Accept": "application/json, text/event-stream", "x-api-key": key, "anthropic-version": API_VERSION}
        if cred.get("header") and cred.get("headerName") and isinstance(cred.get("headerValue"), str):
            headers[str(cred["headerName"])] = cred["headerValue"]
        endpoint = Endpoint(
            url=join_url(base, "v1/messages"), base_url=base, model=params.model, node=name,
            credential=describe_credential(CREDENTIAL_TYPE, ref) if ref else f"the {CREDENTIAL_TYPE} credential",
            headers=headers, secret=key, timeout_ms=params.options.timeout, idle_ms=params.options.idleTimeout,
            max_retries=params.options.maxRetries,
        )
        return AnthropicChat(params, endpoint)
