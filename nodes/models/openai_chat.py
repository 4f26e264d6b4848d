"""OpenAI Chat Model: the Chat Completions API over HTTP, for OpenAI and compatible servers.

Works with llama.cpp's server, vLLM, LM Studio and Ollama's /v1 alike. Streams tokens over
server-sent events when a token callback is given, assembles tool-call deltas, reads usage
from the stream (`stream_options.include_usage`) or the response, estimated when a server
sends none (llama-cpp-python's server does not).
"""

import json
from contextlib import aclosing
from typing import Any, Callable, Literal

from orjson import JSONDecodeError
from orjson import loads as orjson_loads
from pydantic import Field, field_validator

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ModelReply, TokenCallback, ToolSpec
from engine.connection_types import AI_LANGUAGE_MODEL, PortSpec
from engine.context import SupplyContext
from engine.credentials import CredentialError, credential_ref, describe_credential
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from ._common import locator_value
from ._http import (Endpoint, drain, join_url, lines, mid_reply_error, open_response, parse_json, read_body, whole_body,
                    within_deadline)
from ._openai_request import ChatCompletionsBodies, OptionError, chat_completions_json, responses_body
from ._openai_responses import ResponsesStream, failure, reply_from_response
from ._openai_wire import (StreamAssembler, estimate_prompt_tokens, read_chunk, read_chunks, read_completion,
                           reply_from_completion, reply_from_read)
from ._sse import EventReader, Events, simple_payloads, sse_data
from .versions import OPENAI_VERSIONS, openai_default_model

OPENAI_API = "https://api.openai.com/v1"
CREDENTIAL_TYPE = "openAiApi"


class OpenAIOptions(NodeParams):
    """Only the options the node sets are sent (`model_fields_set`); the defaults are n8n's form's."""

    baseURL: str = Field("", title="Base URL", description=f"Empty: the credential's URL, else {OPENAI_API}")
    temperature: float = Field(0.7, ge=0, le=2, title="Sampling Temperature", description="Sent only when set")
    maxTokens: int = Field(-1, ge=-1, title="Maximum Number of Tokens", description="-1: no limit")
    topP: float = Field(1, ge=0, le=1, title="Top P")
    frequencyPenalty: float = Field(0, ge=-2, le=2, title="Frequency Penalty", description="Chat Completions only")
    presencePenalty: float = Field(0, ge=-2, le=2, title="Presence Penalty", description="Chat Completions only")
    responseFormat: Literal["text", "json_object"] = Field("text", title="Response Format", description="Chat Completions only")
    reasoningEffort: Literal["low", "medium", "high"] = Field(
        "medium", title="Reasoning Effort", description="o1, o3 and later, gpt-5 models only (n8n drops it for others)",
    )
    textFormat: dict[str, Any] | None = Field(
        None, title="Response Format (Responses API)", description="textOptions: type text, json_object or json_schema (name, schema), verbosity",
    )
    promptCacheKey: str | None = Field(None, title="Prompt Cache Key")
    safetyIdentifier: str | None = Field(None, title="Safety Identifier")
    serviceTier: Literal["auto", "flex", "default", "priority"] | None = Field(None, title="Service Tier")
    topLogprobs: int | None = Field(None, ge=0, le=20, title="Top Logprobs")
    conversationId: str | None = Field(None, title="Conversation ID")
    metadata: str | None = Field(None, title="Metadata", description="A JSON object", json_schema_extra={"multiline": True})
    promptConfig: dict[str, Any] | None = Field(None, title="Prompt", description="promptOptions: promptId, version, variables")
    timeout: int = Field(60000, ge=1, title="Timeout (ms)", description="Deadline of the whole call, retries included")
    idleTimeout: int = Field(30000, ge=1, title="Idle Timeout (ms)", description="How long a reply that has begun may pause")
    maxRetries: int = Field(2, ge=0, le=10, title="Max Retries")
    toolChoiceAuto: bool = Field(
        False, title="Send tool_choice auto",
        description="Not in n8n: for servers that call tools only when told (llama-cpp-python's chatml-function-calling)",
    )
    streaming: bool = Field(
        True, title="Stream Tokens",
        description="Off for servers that cannot stream tool calls (llama-cpp-python's chatml-function-calling)",
    )


    @field_validator("metadata", mode="before")
    @classmethod
    def _json_text(cls, value: Any) -> Any:
        """n8n keeps it as JSON text; a file may hold the object itself."""
        return value if value is None or isinstance(value, str) else json.dumps(value)


class OpenAIParams(NodeParams):
    model: str = Field("gpt-4o-mini", title="Model", description="The model id the server knows")
    responsesApiEnabled: bool = Field(
        True, title="Use Responses API", description="From typeVersion 1.3: POST /responses instead of /chat/completions",
    )
    builtInTools: dict[str, Any] = Field(default_factory=dict, title="Built-in Tools (Responses API)")
    options: OpenAIOptions = Field(default_factory=OpenAIOptions, title="Options")

    @field_validator("model", mode="before")
    @classmethod
    def _resource_locator(cls, value: Any) -> Any:
        return locator_value(value)


def set_options(params: OpenAIParams) -> dict[str, Any]:
    """The options the node sets, by n8n name (what n8n picks and sends)."""
    opts = params.options
    return {name: getattr(opts, name) for name in opts.model_fields_set}


def responses_request(params: OpenAIParams, messages: list[ChatMessage], tools: list[ToolSpec], stream: bool) -> dict[str, Any]:
    """The body of one Responses API call (a Chat Completions body: ChatCompletionsBodies)."""
    try:
        return responses_body(params.model, set_options(params), messages, tools, stream)
    except OptionError as exc:
        raise NodeOperationError(str(exc)) from None


class OpenAIChat:
    """The model object the node supplies: one Chat Completions (or Responses API) request per `invoke`."""

    def __init__(self, params: OpenAIParams, endpoint: Endpoint, responses_api: bool = False,
                 build_body: Callable[[list[ChatMessage], list[ToolSpec], bool], dict[str, Any]] | None = None,
                 always_stream: bool = False) -> None:
        self.params = params
        self.endpoint = endpoint
        self.responses_api = responses_api
        self.build_body = build_body  # another node's body for the same API (Groq's, Mistral's)
        self.always_stream = always_stream  # streamed whether or not tokens are shown (as n8n asks Mistral)
        # the node's own Chat Completions bodies: the fields its options fix, made once
        self._bodies = ChatCompletionsBodies(params.model, set_options(params)) \
            if build_body is None and not responses_api else None

    async def invoke(
        self,
        messages: list[ChatMessage],
        tools: list[ToolSpec],
        signal: AbortSignal,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        ep = self.endpoint
        stream = self.always_stream or (on_token is not None and self.params.options.streaming)
        bodies = self._bodies
        if bodies is not None:
            body = bodies.body(messages, tools, stream)
            content: dict[str, Any] | bytes = chat_completions_json(body, messages)
        else:
            try:
                body = (self.build_body(messages, tools, stream) if self.build_body is not None
                        else responses_request(self.params, messages, tools, stream))
            except NodeOperationError as exc:
                raise ep.error(exc.message) from None
            content = body
        with within_deadline(ep, signal):
            response = await open_response(ep, content)
            try:
                if stream and response.headers.get("content-type", "").startswith("text/event-stream"):
                    if self.responses_api:
                        estimate = (len(json.dumps(body.get("input") or body.get("messages"), ensure_ascii=False)) + 3) // 4
                        return await self._read_responses_stream(response, on_token, estimate)
                    return await self._read_stream(response, on_token, body)
                raw = await read_body(ep, response)
            finally:
                await response.aclose()
        return self._reply(raw, on_token)

    def _reply(self, raw: bytes, on_token: TokenCallback | None) -> ModelReply:
        """The reply of a non-streamed body: a Chat Completions reply read by msgspec when it reads
        it (read_completion), else as a dict, as a Responses API reply always is."""
        ep = self.endpoint
        read = None if self.responses_api else read_completion(raw)
        doc = parse_json(ep, raw) if read is None else None
        error = read.error if read is not None else doc.get("error") if isinstance(doc, dict) else None
        if error:
            raise ep.error(f"the model server at {ep.base_url} reported an error: {_error_text(error)}")
        if self.responses_api:
            problem = failure(doc) if isinstance(doc, dict) else None
            if problem is not None:
                raise ep.error(f"the model server at {ep.base_url} reported an error: {problem}")
            reply = reply_from_response(doc) if isinstance(doc, dict) else None
            if reply is None:
                raise ep.error(f"the model server at {ep.base_url} answered without a reply (no output)")
            if on_token is not None and reply.content:
                on_token(reply.content)
            return reply
        if read is not None:
            reply = reply_from_read(read)
        else:
            reply = reply_from_completion(doc) if isinstance(doc, dict) else None
        if reply is None:
            raise ep.error(f"the model server at {ep.base_url} answered without a reply (no choices)")
        if on_token is not None and reply.content:
            on_token(reply.content)
        return reply

    async def _read_stream(self, response: Any, on_token: TokenCallback | None, body: dict[str, Any]) -> ModelReply:
        ep = self.endpoint
        assembler = StreamAssembler()
        whole = whole_body(ep, response)
        if whole is not None:  # all of it came with the head (a fast server): read at once
            done = self._take_whole(whole, assembler, on_token)
        else:
            done = False
            async with aclosing(sse_data(ep, response)) as batches:
                async for events in batches:
                    if self._take(events, assembler, on_token):
                        done = True
                        if not response.body_read():  # what follows [DONE]: read, so the connection is reused
                            await drain(batches)
                        break
        if not done and assembler.finish_reason is None:
            raise ep.error(f"the model server at {ep.base_url} ended the stream mid-reply")
        # servers that send no usage get one estimated from the request (its JSON, made only then)
        return assembler.reply(estimate_prompt_tokens(body) if assembler.usage is None else 0)

    def _take_whole(self, whole: bytes, assembler: StreamAssembler, on_token: TokenCallback | None) -> bool:
        """The events of a body that came whole to the assembler; whether [DONE] came. The usual
        body (`data: ` events only, each chunk read by msgspec) is read at the bytes, without
        EventReader: all of its chunks are read before the first goes to the assembler, so that
        any other body is read from its start by EventReader and `_take`, as before."""
        payloads = simple_payloads(whole)
        read = read_chunks(payloads) if payloads is not None else None
        if read is None:
            reader = EventReader()
            return self._take(reader.feed(whole), assembler, on_token) or self._take(reader.end(), assembler, on_token)
        chunks, done = read
        if chunks and chunks[-1].error:  # only the last can report one (read_chunks): those before it go first
            assembler.feed_reads(chunks[:-1], on_token)
            raise mid_reply_error(self.endpoint, _error_text(chunks[-1].error))
        assembler.feed_reads(chunks, on_token)
        return done

    def _take(self, events: Events, assembler: StreamAssembler, on_token: TokenCallback | None) -> bool:
        """The chunks of these events to the assembler; whether [DONE] came."""
        ep = self.endpoint
        for payload, ended in events:
            if payload[-1:] != "}" and payload.strip() == "[DONE]":  # a chunk ends with its }
                return True
            read = read_chunk(payload)
            if read is not None:
                if ended and read.error:
                    raise mid_reply_error(ep, _error_text(read.error))
                assembler.feed_reads((read,), on_token)
                continue
            try:  # orjson alone when it reads the event as the standard library would
                chunk = orjson_loads(payload) if events.plain_numbers else parse_json(ep, payload)
            except JSONDecodeError:
                chunk = parse_json(ep, payload)
            if type(chunk) is dict:
                if ended and chunk.get("error"):
                    raise mid_reply_error(ep, _error_text(chunk["error"]))
                assembler.feed(chunk, on_token)
        return False

    async def _read_responses_stream(self, response: Any, on_token: TokenCallback | None, prompt_estimate: int) -> ModelReply:
        """Responses API events (`event:` and `data:` lines) up to response.completed."""
        ep = self.endpoint
        assembler = ResponsesStream()
        data: list[str] = []
        async with aclosing(lines(ep, response)) as stream:
            async for line in stream:
                if line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
                    if line:
                        continue
                if line or not data:
                    continue  # event names, comments, blank keep-alives
                payload, data = "\n".join(data), []
                event = parse_json(ep, payload)
                if isinstance(event, dict):
                    assembler.feed(event, on_token)
                if assembler.error is not None:
                    raise mid_reply_error(ep, assembler.error)
                if assembler.done:
                    await drain(stream)
                    break
        if data and not assembler.done:
            event = parse_json(ep, "\n".join(data))
            if isinstance(event, dict):
                assembler.feed(event, on_token)
        if assembler.error is not None:
            raise mid_reply_error(ep, assembler.error)
        if not assembler.done:
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
    implemented_parameters = frozenset({
        "model", "responsesApiEnabled", "builtInTools", "options", "options.baseURL", "options.temperature",
        "options.maxTokens", "options.topP", "options.frequencyPenalty", "options.presencePenalty", "options.responseFormat",
        "options.reasoningEffort", "options.textFormat", "options.promptCacheKey", "options.safetyIdentifier",
        "options.serviceTier", "options.topLogprobs", "options.conversationId", "options.metadata", "options.promptConfig",
        "options.timeout", "options.maxRetries"})
    credential_types = (CREDENTIAL_TYPE,)

    @classmethod
    def needs_credential(cls, parameters: dict[str, Any]) -> bool:
        """OpenAI's own API needs a key; a server named in the options may not."""
        options = parameters.get("options")
        return not (isinstance(options, dict) and options.get("baseURL"))

    async def supply_data(self, ctx: SupplyContext) -> OpenAIChat:
        params: OpenAIParams = ctx.params()
        if "model" not in ctx.node.parameters:  # each version has its own default model
            params = params.model_copy(update={"model": openai_default_model(ctx.node.typeVersion)})
        ref = credential_ref(ctx.node.credentials, CREDENTIAL_TYPE)
        try:
            cred = ctx.services.credentials.get(CREDENTIAL_TYPE, ref) or {}
        except CredentialError as exc:  # an unreadable file or a malformed key: say which, never what is in it
            raise NodeOperationError(str(exc), node=ctx.node.name) from None
        return chat_model(params, cred, ref, ctx.node.name, float(ctx.node.typeVersion))


def uses_responses_api(params: OpenAIParams, version: float) -> bool:
    """From typeVersion 1.3 the node talks to the Responses API unless "Use Responses API" is off."""
    return version >= 1.3 and params.responsesApiEnabled


def chat_model(params: OpenAIParams, cred: dict[str, Any], ref: dict[str, Any] | None, node: str,
               version: float = 1.2) -> OpenAIChat:
    """The model object for these parameters and credential data (what the node supplies)."""
    responses_api = uses_responses_api(params, version)
    if responses_api and any(params.builtInTools.get(k) for k in ("webSearch", "codeInterpreter", "fileSearch")):
        raise NodeOperationError(
            f'OpenAI Chat Model "{node}" has Built-in Tools (web search, code interpreter, file search), which mini-n8n '
            "does not support",
            node=node, description="Remove them, or connect tools to the Agent instead",
        )
    base = (params.options.baseURL or cred.get("url") or OPENAI_API).rstrip("/")
    key = cred.get("apiKey") or ""
    if not key and base == OPENAI_API:
        missing = f"{describe_credential(CREDENTIAL_TYPE, ref)} is not in your credential store and OPENAI_API_KEY is not set" \
            if ref else f"add an {CREDENTIAL_TYPE} credential or set OPENAI_API_KEY"
        raise NodeOperationError(f"No API key for {base}: {missing}", node=node)
    headers = {"Accept": "application/json, text/event-stream"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    if cred.get("organizationId"):
        headers["OpenAI-Organization"] = cred["organizationId"]
    endpoint = Endpoint(
        url=join_url(base, "responses" if responses_api else "chat/completions"),
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
    return OpenAIChat(params, endpoint, responses_api)
