"""Google Gemini Chat Model (n8n's `lmChatGoogleGemini` v1): the Gemini API over httpx.

The request is the one n8n sends through LangChain's ChatGoogleGenerativeAI and Google's JS
SDK: POST {host}/v1beta/models/<model>:generateContent (`:streamGenerateContent?alt=sse` when
the editor shows tokens), the key in `x-goog-api-key`; the body holds `generationConfig`
(`stopSequences: []` and the options the node sets: maxOutputTokens, temperature, topP, topK),
`safetySettings` (the node's Safety Settings, else []), the tools as `functionDeclarations`,
the system message as `systemInstruction`, and `contents`. The credential's `host` (default
https://generativelanguage.googleapis.com) is the server. Errors name the server, the model or
the credential (never the key), with the API's own message.
"""

from contextlib import aclosing
from typing import Any

from pydantic import Field, field_validator

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ModelReply, TokenCallback, ToolSpec
from engine.connection_types import AI_LANGUAGE_MODEL, PortSpec
from engine.context import SupplyContext
from engine.credentials import CredentialError, credential_ref, describe_credential
from engine.defaults import new_list
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from ._common import js_number, locator_value
from ._gemini_wire import ContentStream, blocked_reason, contents_of, model_id, model_path, reply_from_response, tools_of
from ._http import Endpoint, join_url, lines, mid_reply_error, open_response, parse_json, read_json, within_deadline

GEMINI_API = "https://generativelanguage.googleapis.com"
CREDENTIAL_TYPE = "googlePalmApi"
API_VERSION = "v1beta"
CLIENT_HEADER = "genai-js/0.24.1"  # the SDK n8n 1.123 sends with
HARM_CATEGORIES = ("HARM_CATEGORY_HARASSMENT", "HARM_CATEGORY_HATE_SPEECH", "HARM_CATEGORY_SEXUALLY_EXPLICIT",
                   "HARM_CATEGORY_DANGEROUS_CONTENT")
HARM_THRESHOLDS = ("HARM_BLOCK_THRESHOLD_UNSPECIFIED", "BLOCK_LOW_AND_ABOVE", "BLOCK_MEDIUM_AND_ABOVE", "BLOCK_ONLY_HIGH",
                   "BLOCK_NONE")


class SafetySetting(NodeParams):
    category: str = Field("HARM_CATEGORY_UNSPECIFIED", title="Safety Category", description=", ".join(HARM_CATEGORIES))
    threshold: str = Field("HARM_BLOCK_THRESHOLD_UNSPECIFIED", title="Safety Threshold", description=", ".join(HARM_THRESHOLDS))


class SafetySettings(NodeParams):
    values: list[SafetySetting] = Field(default_factory=new_list, title="Values")

    @field_validator("values", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        """n8n keeps a fixed collection with one entry as that entry when it was never a list."""
        return [value] if isinstance(value, dict) else value


class GeminiOptions(NodeParams):
    maxOutputTokens: int = Field(2048, ge=1, title="Maximum Number of Tokens", description="Sent only when set")
    temperature: float = Field(0.4, ge=0, le=1, title="Sampling Temperature", description="Sent only when set")
    topK: float = Field(32, ge=-1, le=40, title="Top K", description="Sent only when set")
    topP: float = Field(1, ge=0, le=1, title="Top P", description="Sent only when set")
    safetySettings: SafetySettings = Field(default_factory=SafetySettings, title="Safety Settings")
    timeout: int = Field(60000, ge=1, title="Timeout (ms)", description="Deadline of the whole call, retries included")
    idleTimeout: int = Field(30000, ge=1, title="Idle Timeout (ms)", description="How long a reply that has begun may pause")
    maxRetries: int = Field(6, ge=0, le=10, title="Max Retries", description="LangChain's default: 6")
    streaming: bool = Field(True, title="Stream Tokens")


class GeminiParams(NodeParams):
    modelName: str = Field("models/gemini-2.5-flash", title="Model", description="A Gemini model, e.g. models/gemini-2.5-flash")
    options: GeminiOptions = Field(default_factory=GeminiOptions, title="Options")

    @field_validator("modelName", mode="before")
    @classmethod
    def _resource_locator(cls, value: Any) -> Any:
        return locator_value(value)


def generation_config(opts: GeminiOptions) -> dict[str, Any]:
    config: dict[str, Any] = {"stopSequences": []}
    for name in ("maxOutputTokens", "temperature", "topP", "topK"):
        if name in opts.model_fields_set:
            config[name] = js_number(getattr(opts, name))
    return config


def request_body(params: GeminiParams, messages: list[ChatMessage], tools: list[ToolSpec]) -> dict[str, Any]:
    opts = params.options
    system, contents = contents_of(messages, model_id(params.modelName))
    body: dict[str, Any] = {
        "generationConfig": generation_config(opts),
        "safetySettings": [{"category": s.category, "threshold": s.threshold} for s in opts.safetySettings.values]
        if "safetySettings" in opts.model_fields_set else [],
    }
    if tools:
        body["tools"] = tools_of(tools)
    if system is not None:
        body["systemInstruction"] = system
    body["contents"] = contents
    return body


def check_safety_settings(params: GeminiParams, node: str) -> None:
    """What LangChain refuses before any request: a category given twice."""
    categories = [s.category for s in params.options.safetySettings.values]
    if len(set(categories)) != len(categories):
        raise NodeOperationError("The categories in `safetySettings` array must be unique", node=node)


class GeminiChat:
    """The model object the node supplies: one generateContent request per `invoke`."""

    def __init__(self, params: GeminiParams, endpoint: Endpoint, stream_endpoint: Endpoint) -> None:
        self.params = params
        self.endpoint = endpoint
        self.stream_endpoint = stream_endpoint

    async def invoke(self, messages: list[ChatMessage], tools: list[ToolSpec], signal: AbortSignal,
                     on_token: TokenCallback | None = None) -> ModelReply:
        stream = on_token is not None and self.params.options.streaming
        ep = self.stream_endpoint if stream else self.endpoint
        try:
            body = request_body(self.params, messages, tools)
        except ValueError as exc:
            raise ep.error(str(exc)) from None
        with within_deadline(ep, signal):
            response = await open_response(ep, body)
            try:
                if stream and response.headers.get("content-type", "").startswith("text/event-stream"):
                    return await self._read_stream(ep, response, on_token)
                doc = await read_json(ep, response)
            finally:
                await response.aclose()
        if isinstance(doc, list):  # a stream asked for without alt=sse comes as one JSON array
            assembler = ContentStream()
            for chunk in doc:
                if isinstance(chunk, dict):
                    assembler.feed(chunk, on_token)
            return assembler.reply()
        if isinstance(doc, dict) and isinstance(doc.get("error"), dict):
            raise ep.error(f"the model server at {ep.base_url} reported an error: {doc['error'].get('message')}")
        reply = reply_from_response(doc) if isinstance(doc, dict) else None
        if reply is None:
            raise ep.error(f"the model server at {ep.base_url} answered without a reply: {blocked_reason(doc)}")
        if on_token is not None and reply.content:
            on_token(reply.content)
        return reply

    @staticmethod
    async def _read_stream(ep: Endpoint, response: Any, on_token: TokenCallback | None) -> ModelReply:
        """Server-sent events, one `data:` line per chunk, until the body ends."""
        assembler = ContentStream()
        data: list[str] = []

        def take(payload: str) -> None:
            chunk = parse_json(ep, payload)
            if isinstance(chunk, dict) and isinstance(chunk.get("error"), dict):
                raise mid_reply_error(ep, chunk["error"].get("message"))
            if isinstance(chunk, dict):
                assembler.feed(chunk, on_token)

        async with aclosing(lines(ep, response)) as stream:
            async for line in stream:
                if line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
                elif not line and data:
                    payload, data = "\n".join(data), []
                    take(payload)
        if data:
            take("\n".join(data))
        if assembler.finish_reason is None:
            raise ep.error(f"the model server at {ep.base_url} ended the stream mid-reply")
        return assembler.reply()


class GoogleGeminiChatModel(NodeType):
    type = "@n8n/n8n-nodes-langchain.lmChatGoogleGemini"
    version = 1
    display_name = "Google Gemini Chat Model"
    description = "Gemini models through Google's Gemini API (generateContent)"
    group = "Models"
    icon = "node"
    inputs = ()
    outputs = (PortSpec(AI_LANGUAGE_MODEL, "Model"),)
    Params = GeminiParams
    credential_types = (CREDENTIAL_TYPE,)
    implemented_parameters = frozenset({"modelName", "options", "options.maxOutputTokens", "options.temperature",
                                        "options.topK", "options.topP", "options.safetySettings"})

    @classmethod
    def needs_credential(cls, parameters: dict[str, Any]) -> bool:
        return True

    async def supply_data(self, ctx: SupplyContext) -> GeminiChat:
        params: GeminiParams = ctx.params()
        name = ctx.node.name
        check_safety_settings(params, name)
        ref = credential_ref(ctx.node.credentials, CREDENTIAL_TYPE)
        try:
            cred = ctx.services.credentials.get(CREDENTIAL_TYPE, ref) or {}
        except CredentialError as exc:
            raise NodeOperationError(str(exc), node=name) from None
        key = cred.get("apiKey") or ""
        if not key:
            raise NodeOperationError(f"No API key: add a {CREDENTIAL_TYPE} credential (Google Gemini(PaLM) API)", node=name)
        base = str(cred.get("host") or GEMINI_API).rstrip("/")
        url = join_url(base, f"{API_VERSION}/{model_path(params.modelName)}")
        headers = {"x-goog-api-client": CLIENT_HEADER, "x-goog-api-key": key}
        opts = params.options

        def endpoint(task: str) -> Endpoint:
            return Endpoint(
                url=f"{url}:{task}", base_url=base, model=model_id(params.modelName), node=name,
                credential=describe_credential(CREDENTIAL_TYPE, ref) if ref else f"the {CREDENTIAL_TYPE} credential",
                headers=headers, secret=key, timeout_ms=opts.timeout, idle_ms=opts.idleTimeout, max_retries=opts.maxRetries,
            )

        return GeminiChat(params, endpoint("generateContent"), endpoint("streamGenerateContent?alt=sse"))

