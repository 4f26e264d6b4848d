"""The request body n8n's OpenAI Chat Model sends, for Chat Completions and the Responses API.

Only options the user set are sent (n8n picks them from the node's options; LangChain leaves the
rest out): no default temperature. `tool_choice: "auto"` (the API's default, which n8n leaves
out) only with the option *Send tool_choice auto* (ours), for servers that call tools only when
told (llama-cpp-python's chatml-function-calling). `maxTokens` goes as `max_completion_tokens` to reasoning models
(o1, o3…, gpt-5 but not gpt-5-chat; LangChain's rule) and `max_tokens` to others, as
`max_output_tokens` to the Responses API. `reasoningEffort` exists only for the models n8n shows it
for (`^o1([-\\d]+)?$`, `^o[3-9]`, `^gpt-5`); for another model n8n drops it, and so do we. The
Responses API takes no frequency or presence penalty (LangChain does not send them) and always
gets a `text` object; `textFormat`, the prompt, metadata and caching options go as n8n builds them.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from engine.chat import ChatMessage, ToolSpec

from engine.shared_log import LogWindow

from ._common import encode_json, encode_json_bytes, js_number
from ._openai_responses import input_items, tools_of
from ._openai_wire import WIRE, to_wire_messages, to_wire_tools, wire_message

_EFFORT_MODELS = re.compile(r"(^o1([-\d]+)?$)|(^o[3-9].*)|(^gpt-5.*)")
EFFORTS = ("low", "medium", "high")


class OptionError(ValueError):
    """An option's value n8n would refuse (JSON that does not parse): the message names it."""


def is_reasoning_model(model: str) -> bool:
    """LangChain's isReasoningModel."""
    return bool(re.match(r"^o\d", model)) or (model.startswith("gpt-5") and not model.startswith("gpt-5-chat"))


def effort_applies(model: str) -> bool:
    """Whether n8n shows (and so sends) Reasoning Effort for this model."""
    return _EFFORT_MODELS.search(model) is not None


def _given(options: dict[str, Any], name: str) -> bool:
    return name in options and options[name] is not None


def chat_completions_head(model: str, options: dict[str, Any], stream: bool) -> dict[str, Any]:
    """The fields of a Chat Completions body before its tools and messages, in the order sent: the
    node's options fix them, so they are the same for every call with the same `stream`."""
    body: dict[str, Any] = {"model": model}
    for option, key in (("temperature", "temperature"), ("topP", "top_p"), ("frequencyPenalty", "frequency_penalty"),
                        ("presencePenalty", "presence_penalty")):
        if _given(options, option):
            body[key] = js_number(options[option])
    if _given(options, "maxTokens") and options["maxTokens"] != -1:
        body["max_completion_tokens" if is_reasoning_model(model) else "max_tokens"] = options["maxTokens"]
    if options.get("responseFormat"):
        body["response_format"] = {"type": options["responseFormat"]}
    if options.get("reasoningEffort") in EFFORTS and effort_applies(model):
        body["reasoning_effort"] = options["reasoningEffort"]
    body["stream"] = stream
    if stream:
        body["stream_options"] = {"include_usage": True}
    return body


class ChatCompletionsBodies:
    """The Chat Completions bodies of one model object: the fields its options fix are made once
    for each `stream` (chat_completions_head), a call adds its tools and messages. The bodies
    share the objects inside those fields: treat a body as read-only."""

    __slots__ = ("_heads", "_tool_choice")

    def __init__(self, model: str, options: dict[str, Any]) -> None:
        self._heads = (chat_completions_head(model, options, False), chat_completions_head(model, options, True))
        self._tool_choice = bool(options.get("toolChoiceAuto"))

    def body(self, messages: Sequence[ChatMessage], tools: list[ToolSpec], stream: bool) -> dict[str, Any]:
        body = dict(self._heads[1 if stream else 0])
        if tools:
            body["tools"] = to_wire_tools(tools)
            if self._tool_choice:
                body["tool_choice"] = "auto"
        body["messages"] = to_wire_messages(messages)
        return body


def chat_completions_json(body: dict[str, Any], messages: Sequence[ChatMessage]) -> bytes:
    """`body` (ChatCompletionsBodies.body for `messages`) as the JSON that is sent. An agent's
    messages (a window on its append-only log) are each encoded once for all its requests, not
    again with every request after them; the bytes are those of encoding the whole body."""
    if not isinstance(messages, LogWindow) or next(reversed(body)) != "messages":
        return encode_json_bytes(body)
    head = encode_json({key: value for key, value in body.items() if key != "messages"})
    encoded = messages.mapped(WIRE, wire_message).mapped("json", encode_json).to_list()
    return f'{head[:-1]},"messages":[{",".join(encoded)}]}}'.encode()


def _json_option(options: dict[str, Any], path: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        raise OptionError(f"Failed to parse {path}") from None


def text_options(options: dict[str, Any]) -> dict[str, Any] | None:
    """`textFormat` as n8n stores it (an object, or a list from an older editor), else None."""
    found = (options.get("textFormat") or {}).get("textOptions") if isinstance(options.get("textFormat"), dict) else None
    if isinstance(found, list):
        found = found[0] if found else {}
    return found if isinstance(found, dict) else None


def responses_extras(options: dict[str, Any]) -> dict[str, Any]:
    """n8n's prepareAdditionalResponsesParams: what goes into the body beside LangChain's fields."""
    extra: dict[str, Any] = {}
    for option, key in (("promptCacheKey", "prompt_cache_key"), ("safetyIdentifier", "safety_identifier"),
                        ("serviceTier", "service_tier"), ("topLogprobs", "top_logprobs")):
        if _given(options, option):
            extra[key] = options[option]
    if options.get("conversationId"):
        extra["conversation"] = options["conversationId"]
    if options.get("metadata"):
        extra["metadata"] = _json_option(options, "metadata", options["metadata"])
    prompt_config = options.get("promptConfig")
    if prompt_config:
        prompt = (prompt_config.get("promptOptions") or {}) if isinstance(prompt_config, dict) else {}
        if isinstance(prompt, list):
            prompt = prompt[0] if prompt else {}
        built = {"id": prompt.get("promptId"), "version": prompt.get("version")}
        if prompt.get("variables"):
            built["variables"] = _json_option(options, "prompt variables", prompt["variables"])
        extra["prompt"] = {k: v for k, v in built.items() if v not in ("", None) and v != {}}
    text = text_options(options)
    if "textFormat" in options:
        text = text or {}
        kind = text.get("type", "")
        fmt: dict[str, Any] = {"type": kind}
        if kind == "json_schema":
            fmt = {"type": kind, "name": text.get("name", "my_schema"),
                   "schema": _json_option(options, "schema", text.get("schema", "{}"))}
        config: dict[str, Any] = {"format": {k: v for k, v in fmt.items() if v not in ("", None) and v != {}}}
        config["verbosity"] = text.get("verbosity", "medium")
        extra["text"] = config
    if options.get("reasoningEffort"):
        extra["reasoning"] = {"effort": options["reasoningEffort"]}
    return extra


def responses_body(model: str, options: dict[str, Any], messages: Sequence[ChatMessage], tools: list[ToolSpec],
                   stream: bool) -> dict[str, Any]:
    shown = dict(options)
    if not effort_applies(model):
        shown.pop("reasoningEffort", None)  # n8n does not keep the option for this model
    body: dict[str, Any] = {"model": model}
    for option, key in (("temperature", "temperature"), ("topP", "top_p")):
        if _given(shown, option):
            body[key] = js_number(shown[option])
    body["stream"] = stream
    if tools:
        body["tools"] = tools_of(tools)
    body["text"] = {}
    if _given(shown, "maxTokens") and shown["maxTokens"] != -1:
        body["max_output_tokens"] = shown["maxTokens"]
    body.update(responses_extras(shown))
    body["input"] = input_items(messages, is_reasoning_model(model))
    return body
