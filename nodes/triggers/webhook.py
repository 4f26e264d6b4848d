"""Webhook: starts a workflow with an HTTP request, as n8n's Webhook node (v1–v2.1).

Its output item is the request as n8n gives it: `{headers, params, query, body, webhookUrl,
executionMode}`. `mini-n8n serve` builds that item from each request (`request_item`); a run
from the editor or `mini-n8n run --trigger NAME --input JSON` starts with the item given or
pinned, as it is. How the server answers (responseMode, responseData, responseCode, options)
is read by `response_settings`.
"""

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ConfigDict, Field

from engine.connection_types import MAIN, PortSpec
from engine.context import NodeContext
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

METHODS = ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")
# what the server refuses or does not do, named when the workflow is served and in the run log
REFUSED_OPTIONS = {
    "rawBody": "the raw body (binary) is not supported",
    "binaryData": "receiving a binary file is not supported",
    "binaryPropertyName": "receiving a binary file is not supported",
    "ignoreBots": "ignoring bots is not supported",
}
MULTIPLE_METHODS = "listening to several HTTP methods (one output each) is not supported"


class WebhookParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    httpMethod: Literal["DELETE", "GET", "HEAD", "PATCH", "POST", "PUT"] = Field("GET", title="HTTP Method")
    path: str = Field("", title="Path")
    responseMode: Literal["onReceived", "lastNode", "responseNode"] = Field("onReceived", title="Respond")
    responseData: Literal["firstEntryJson", "allEntries", "noData"] = Field("firstEntryJson", title="Response Data")


def method_of(parameters: dict[str, Any]) -> str:
    """The HTTP method the node listens to."""
    value = parameters.get("httpMethod", "GET")
    return str(value[0] if isinstance(value, list) and value else value).upper()


def webhook_path(parameters: dict[str, Any], webhook_id: str | None) -> str:
    """The node's path under /webhook/, as n8n registers it: slashes trimmed; a path with
    `:param` segments is prefixed by the node's webhookId; an empty path is the webhookId."""
    path = str(parameters.get("path") or "").strip()
    path = path[1:] if path.startswith("/") else path
    path = path[:-1] if path.endswith("/") else path
    if not path:
        return webhook_id or ""
    if ":" in path and webhook_id:
        return f"{webhook_id}/{path}"
    return path


def request_item(headers: dict[str, str], params: dict[str, str], query: dict[str, Any], body: Any,
                 webhook_url: str, execution_mode: str = "production") -> Item:
    """The item n8n's Webhook node outputs for a request, keys in n8n's order."""
    return {"json": {"headers": headers, "params": params, "query": query, "body": body,
                     "webhookUrl": webhook_url, "executionMode": execution_mode}}


@dataclass(frozen=True)
class ResponseSettings:
    """How the server answers a request to this webhook (n8n's webhook description)."""

    mode: str  # onReceived, lastNode, responseNode (streaming refused)
    code: int
    data: str | None  # lastNode: firstEntryJson, allEntries, noData; onReceived: custom text or noData
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None
    property_name: str | None = None


def response_settings(parameters: dict[str, Any], version: float) -> ResponseSettings:
    """n8n's getResponseCode/getResponseData over the node's parameters."""
    options = parameters.get("options") if isinstance(parameters.get("options"), dict) else {}
    mode = str(parameters.get("responseMode", "onReceived"))
    code: Any = 200
    if version < 2 and parameters.get("responseCode"):
        code = parameters["responseCode"]
    elif isinstance(options.get("responseCode"), dict):
        values = options["responseCode"].get("values") or {}
        code = values.get("customCode") or values.get("responseCode", 200)
    data: str | None = None
    if mode == "lastNode":
        data = str(parameters.get("responseData") or "firstEntryJson")
    elif mode == "onReceived":
        data = options.get("responseData") or None
        if options.get("noResponseBody") is True:
            data = data or "noData"
    headers: dict[str, str] = {}
    entries = (options.get("responseHeaders") or {}).get("entries") if isinstance(options.get("responseHeaders"), dict) else None
    for entry in entries or []:
        headers[str(entry.get("name", "")).lower()] = str(entry.get("value", ""))
    return ResponseSettings(mode, int(code) if str(code).isdigit() else 200, data, headers,
                            options.get("responseContentType") or None, options.get("responsePropertyName") or None)


def refused(parameters: dict[str, Any], version: float) -> list[str]:
    """What of this node's settings mini-n8n does not do, each naming the setting."""
    out: list[str] = []
    options = parameters.get("options") if isinstance(parameters.get("options"), dict) else {}
    for name, why in REFUSED_OPTIONS.items():
        if options.get(name) not in (None, False, "", "*") and not (name == "binaryPropertyName" and options[name] == "data"):
            out.append(f'option "{name}": {why}')
    if parameters.get("multipleMethods") is True:
        out.append(MULTIPLE_METHODS)
    auth = parameters.get("authentication", "none")
    if auth != "none":
        out.append(f'authentication "{auth}" is not supported')
    mode = parameters.get("responseMode", "onReceived")
    if mode not in ("onReceived", "lastNode", "responseNode"):
        out.append(f'response mode "{mode}" is not supported')
    if mode == "lastNode" and parameters.get("responseData") == "firstEntryBinary":
        out.append('response data "firstEntryBinary" (a binary file) is not supported')
    return out


class WebhookTrigger(NodeType):
    type = "n8n-nodes-base.webhook"
    version = 2.1
    versions = (1, 1.1, 2, 2.1)
    display_name = "Webhook"
    default_name = "Webhook"
    description = "Starts the workflow when a webhook is called (served by `mini-n8n serve`)"
    group = "Triggers"
    icon = "webhook"
    inputs = ()
    outputs = (PortSpec(MAIN),)
    is_trigger = True
    Params = WebhookParams
    starts_with_request = True
    implemented_parameters = frozenset({
        "httpMethod", "path", "authentication", "responseMode", "responseCode", "responseData",
        "options", "options.responseData", "options.noResponseBody", "options.responseHeaders",
        "options.responseContentType", "options.responsePropertyName", "options.responseCode", "options.ipWhitelist",
    })
    unsupported_parameters = {
        "multipleMethods": MULTIPLE_METHODS + "; refused when served",
        "responseBinaryPropertyName": "responding with a binary file (firstEntryBinary) is refused when served",
        "options.rawBody": REFUSED_OPTIONS["rawBody"] + "; refused when served",
        "options.binaryData": REFUSED_OPTIONS["binaryData"] + "; refused when served",
        "options.binaryPropertyName": REFUSED_OPTIONS["binaryPropertyName"] + "; refused when served",
        "options.ignoreBots": REFUSED_OPTIONS["ignoreBots"] + "; refused when served",
    }

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        for reason in refused(ctx.node.parameters, float(ctx.node.typeVersion)):
            ctx.note(f'Webhook "{ctx.node.name}": {reason} (mini-n8n serve refuses to serve it)')
        return [[{**item, "json": dict(item.get("json", {}))} for item in ctx.items]]
