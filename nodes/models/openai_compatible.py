"""OpenAI-compatible chat model nodes with their own n8n type and credential: OpenRouter and
DeepSeek. n8n builds each as LangChain's ChatOpenAI on the credential's URL (Chat Completions),
with the options the node sets; so do we, through the OpenAI Chat Model's request code.

Groq runs through its own SDK in n8n (LangChain's ChatGroq) on the same API at
https://api.groq.com/openai/v1 (or $GROQ_BASE_URL, which the SDK reads): its body always has a
temperature (0.7 unless set) and `stop: []`, and `max_completion_tokens` when set. Mistral Cloud
has a module of its own (mistral_chat.py): its SDK writes the body differently.
"""

import os
from typing import Any, ClassVar

from pydantic import Field, field_validator

from engine.connection_types import AI_LANGUAGE_MODEL, PortSpec
from engine.context import SupplyContext
from engine.credentials import CredentialError, credential_ref, describe_credential
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from engine.chat import ChatMessage, ToolSpec

from ._common import locator_value
from ._http import Endpoint, join_url
from ._openai_wire import to_wire_messages, to_wire_tools
from .openai_chat import OpenAIChat, OpenAIParams

_SENT = ("frequencyPenalty", "maxTokens", "presencePenalty", "temperature", "topP", "responseFormat", "timeout", "maxRetries")


class CompatibleOptions(NodeParams):
    frequencyPenalty: float = Field(0, ge=-2, le=2, title="Frequency Penalty")
    maxTokens: int = Field(-1, ge=-1, title="Maximum Number of Tokens", description="-1: no limit")
    responseFormat: str = Field("text", title="Response Format", description="text or json_object")
    presencePenalty: float = Field(0, ge=-2, le=2, title="Presence Penalty")
    temperature: float = Field(0.7, ge=0, le=2, title="Sampling Temperature", description="Sent only when set")
    timeout: int = Field(60000, ge=1, title="Timeout (ms)")
    maxRetries: int = Field(2, ge=0, le=10, title="Max Retries")
    topP: float = Field(1, ge=0, le=1, title="Top P")
    streaming: bool = Field(True, title="Stream Tokens")


class CompatibleParams(NodeParams):
    model: str = Field("", title="Model")
    options: CompatibleOptions = Field(default_factory=CompatibleOptions, title="Options")

    @field_validator("model", mode="before")
    @classmethod
    def _resource_locator(cls, value: Any) -> Any:
        return locator_value(value)


class OpenAICompatibleModel(NodeType):
    """Base of the nodes: a credential type with `apiKey` and `url`, and that URL's default."""

    credential_type: ClassVar[str]
    default_url: ClassVar[str]
    inputs = ()
    outputs = (PortSpec(AI_LANGUAGE_MODEL, "Model"),)
    group = "Models"
    icon = "openai"
    Params = CompatibleParams
    implemented_parameters = frozenset({"model", "options", "options.frequencyPenalty", "options.maxTokens",
                                        "options.responseFormat", "options.presencePenalty", "options.temperature",
                                        "options.timeout", "options.maxRetries", "options.topP"})

    async def supply_data(self, ctx: SupplyContext) -> OpenAIChat:
        params: CompatibleParams = ctx.params()
        name = ctx.node.name
        ref = credential_ref(ctx.node.credentials, self.credential_type)
        try:
            cred = ctx.services.credentials.get(self.credential_type, ref) or {}
        except CredentialError as exc:
            raise NodeOperationError(str(exc), node=name) from None
        key = cred.get("apiKey") or ""
        if not key:
            raise NodeOperationError(f"No API key: add a {self.credential_type} credential", node=name)
        base = str(cred.get("url") or self.default_url).rstrip("/")
        given = params.options.model_fields_set
        openai = OpenAIParams.model_validate({
            "model": params.model or self.Params.model_fields["model"].default,
            "options": {k: getattr(params.options, k) for k in (*_SENT, "streaming") if k in given},
        })
        endpoint = Endpoint(
            url=join_url(base, "chat/completions"), base_url=base, model=openai.model, node=name,
            credential=describe_credential(self.credential_type, ref) if ref else f"the {self.credential_type} credential",
            headers={"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {key}"},
            secret=key, timeout_ms=params.options.timeout, max_retries=params.options.maxRetries,
        )
        return OpenAIChat(openai, endpoint)


class OpenRouterParams(CompatibleParams):
    model: str = Field("openai/gpt-4.1-mini", title="Model", description="An OpenRouter model id")


class OpenRouterChatModel(OpenAICompatibleModel):
    type = "@n8n/n8n-nodes-langchain.lmChatOpenRouter"
    version = 1
    display_name = "OpenRouter Chat Model"
    description = "Chat models through OpenRouter (its OpenAI-compatible API)"
    credential_type = "openRouterApi"
    credential_types = ("openRouterApi",)
    default_url = "https://openrouter.ai/api/v1"
    Params = OpenRouterParams


class DeepSeekParams(CompatibleParams):
    model: str = Field("deepseek-chat", title="Model", description="deepseek-chat or deepseek-reasoner")


class DeepSeekChatModel(OpenAICompatibleModel):
    type = "@n8n/n8n-nodes-langchain.lmChatDeepSeek"
    version = 1
    display_name = "DeepSeek Chat Model"
    description = "DeepSeek's chat models (its OpenAI-compatible API)"
    credential_type = "deepSeekApi"
    credential_types = ("deepSeekApi",)
    default_url = "https://api.deepseek.com"
    Params = DeepSeekParams


class GroqOptions(NodeParams):
    maxTokensToSample: int = Field(4096, ge=1, title="Maximum Number of Tokens")
    temperature: float = Field(0.7, ge=0, le=1, title="Sampling Temperature")
    timeout: int = Field(60000, ge=1, title="Timeout (ms)")
    maxRetries: int = Field(2, ge=0, le=10, title="Max Retries")
    streaming: bool = Field(True, title="Stream Tokens")


class GroqParams(NodeParams):
    model: str = Field("llama3-8b-8192", title="Model")
    options: GroqOptions = Field(default_factory=GroqOptions, title="Options")


def groq_body(params: GroqParams, messages: list[ChatMessage], tools: list[ToolSpec], stream: bool) -> dict[str, Any]:
    """ChatGroq's request: temperature always, `stop: []`, max_completion_tokens when set."""
    opts = params.options
    temperature = opts.temperature
    body: dict[str, Any] = {"model": params.model, "temperature": int(temperature) if float(temperature).is_integer() else temperature}
    if "maxTokensToSample" in opts.model_fields_set:
        body["max_completion_tokens"] = opts.maxTokensToSample
    body["stop"] = []
    body["stream"] = stream
    if stream:
        body["stream_options"] = {"include_usage": True}
    if tools:
        body["tools"] = to_wire_tools(tools)
    body["messages"] = to_wire_messages(messages, call_text=True)
    return body


class GroqChatModel(NodeType):
    type = "@n8n/n8n-nodes-langchain.lmChatGroq"
    version = 1
    display_name = "Groq Chat Model"
    description = "Models served by Groq (its OpenAI-compatible API)"
    group = "Models"
    icon = "openai"
    inputs = ()
    outputs = (PortSpec(AI_LANGUAGE_MODEL, "Model"),)
    Params = GroqParams
    implemented_parameters = frozenset({"model", "options", "options.maxTokensToSample", "options.temperature"})
    credential_types = ("groqApi",)

    async def supply_data(self, ctx: SupplyContext) -> OpenAIChat:
        params: GroqParams = ctx.params()
        name = ctx.node.name
        ref = credential_ref(ctx.node.credentials, "groqApi")
        try:
            cred = ctx.services.credentials.get("groqApi", ref) or {}
        except CredentialError as exc:
            raise NodeOperationError(str(exc), node=name) from None
        key = cred.get("apiKey") or ""
        if not key:
            raise NodeOperationError("No API key: add a groqApi credential", node=name)
        root = str(cred.get("url") or os.environ.get("GROQ_BASE_URL") or "https://api.groq.com").rstrip("/")
        base = join_url(root, "openai/v1")
        openai = OpenAIParams.model_validate({"model": params.model, "options": {"streaming": params.options.streaming}})
        endpoint = Endpoint(
            url=join_url(base, "chat/completions"), base_url=base, model=params.model, node=name,
            credential=describe_credential("groqApi", ref) if ref else "the groqApi credential",
            headers={"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {key}"},
            secret=key, timeout_ms=params.options.timeout, max_retries=params.options.maxRetries,
        )
        return OpenAIChat(openai, endpoint, build_body=lambda m, t, s: groq_body(params, m, t, s))
