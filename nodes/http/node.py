"""The HTTP Request node (`n8n-nodes-base.httpRequest`, typeVersion 3–4.3) and the same node used as
an agent's tool (`n8n-nodes-base.httpRequestTool`, its parameters filled by the model's
`$fromAI()` arguments). One request per input item, sent concurrently as n8n sends them (the
Batching option spaces them out), output in item order, each item paired with its input item."""

import asyncio
from typing import Any, Literal

from pydantic import ConfigDict, Field

from engine.chat import ToolSpec
from engine.connection_types import AI_TOOL, PortSpec
from engine.context import NodeContext, SupplyContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item
from nodes.tools.naming import node_name_to_tool_name

from .build import HttpCall, build_call, node_auth, options_of
from .pagination import Pagination, paginate, pagination_of
from .shape import UNDEFINED, items_of, reply_error
from .transport import Reply, send

HTTP_DESCRIPTION = "Makes an HTTP request and returns the response data"


def _shown(**conditions: list[Any]) -> dict[str, Any]:
    return {"displayOptions": {"show": conditions}}


class HttpRequestParams(NodeParams):
    """The form of the node; values are read as n8n reads them (nodes/http/build.py)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    method: Literal["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"] = Field("GET", title="Method")
    url: str = Field("", title="URL")
    authentication: Literal["none", "predefinedCredentialType", "genericCredentialType"] = Field(
        "none", title="Authentication", description="The credential comes from the credentials store")
    nodeCredentialType: str = Field("", title="Credential Type", json_schema_extra=_shown(
        authentication=["predefinedCredentialType"]))
    genericAuthType: str = Field("", title="Generic Auth Type", description=(
        "httpBasicAuth, httpBearerAuth, httpDigestAuth, httpHeaderAuth, httpQueryAuth or httpCustomAuth"),
        json_schema_extra=_shown(authentication=["genericCredentialType"]))
    sendQuery: bool = Field(False, title="Send Query Parameters")
    specifyQuery: Literal["keypair", "json"] = Field("keypair", title="Specify Query Parameters", json_schema_extra=_shown(sendQuery=[True]))
    queryParameters: dict[str, Any] = Field(default_factory=dict, title="Query Parameters",
                                            json_schema_extra=_shown(sendQuery=[True], specifyQuery=["keypair"]))
    jsonQuery: Any = Field("", title="Query Parameters (JSON)", json_schema_extra=_shown(sendQuery=[True], specifyQuery=["json"]))
    sendHeaders: bool = Field(False, title="Send Headers")
    specifyHeaders: Literal["keypair", "json"] = Field("keypair", title="Specify Headers", json_schema_extra=_shown(sendHeaders=[True]))
    headerParameters: dict[str, Any] = Field(default_factory=dict, title="Headers",
                                             json_schema_extra=_shown(sendHeaders=[True], specifyHeaders=["keypair"]))
    jsonHeaders: Any = Field("", title="Headers (JSON)", json_schema_extra=_shown(sendHeaders=[True], specifyHeaders=["json"]))
    sendBody: bool = Field(False, title="Send Body")
    contentType: Literal["json", "form-urlencoded", "multipart-form-data", "binaryData", "raw"] = Field(
        "json", title="Body Content Type", json_schema_extra=_shown(sendBody=[True]))
    specifyBody: Literal["keypair", "json", "string"] = Field("keypair", title="Specify Body", json_schema_extra=_shown(sendBody=[True]))
    bodyParameters: dict[str, Any] = Field(default_factory=dict, title="Body Parameters", json_schema_extra=_shown(sendBody=[True]))
    jsonBody: Any = Field("", title="Body (JSON)", json_schema_extra=_shown(sendBody=[True], specifyBody=["json"]))
    body: str = Field("", title="Body", json_schema_extra=_shown(sendBody=[True]))
    rawContentType: str = Field("", title="Content Type", json_schema_extra=_shown(sendBody=[True], contentType=["raw"]))
    options: dict[str, Any] = Field(default_factory=dict, title="Options", description=(
        "response (format, full response, never error), timeout, redirect, batching, pagination, proxy, "
        "allowUnauthorizedCerts, queryParameterArrays, lowercaseHeaders"))


class HttpToolParams(HttpRequestParams):
    toolDescription: str = Field(HTTP_DESCRIPTION, title="Description", json_schema_extra={"multiline": True})


V1_V2 = ("allowUnauthorizedCerts", "binaryPropertyName", "bodyParametersJson", "bodyParametersUi", "dataPropertyName",
         "headerParametersJson", "headerParametersUi", "jsonParameters", "options.batchInterval", "options.batchSize",
         "options.bodyContentCustomMimeType", "options.bodyContentType", "options.followAllRedirects",
         "options.followRedirect", "options.fullResponse", "options.ignoreResponseCode", "options.splitIntoItems",
         "options.useQueryString", "queryParametersJson", "queryParametersUi", "requestMethod", "responseFormat",
         "sendBinaryData")
# shown only when the node is an agent's tool; n8n ignores them in a workflow run, and so do we
TOOL_RESPONSE = ("optimizeResponse", "responseType", "dataField", "fieldsToInclude", "fields", "cssSelector",
                 "onlyContent", "elementsToOmit", "truncateResponse", "maxLength")


class HttpRequestNode(NodeType):
    type = "n8n-nodes-base.httpRequest"
    version = 4.3  # n8n 1.123 gives new nodes 4.3
    versions = (1, 2, 3, 4, 4.1, 4.2, 4.3)
    display_name = "HTTP Request"
    description = HTTP_DESCRIPTION
    group = "Core"
    icon = "http-request"
    Params = HttpRequestParams
    implemented_parameters = frozenset({
        "method", "url", "authentication", "nodeCredentialType", "genericAuthType", "sendQuery", "specifyQuery",
        "queryParameters", "jsonQuery", "sendHeaders", "specifyHeaders", "headerParameters", "jsonHeaders", "sendBody",
        "contentType", "specifyBody", "bodyParameters", "jsonBody", "body", "rawContentType", "options",
        "options.allowUnauthorizedCerts", "options.batching", "options.lowercaseHeaders", "options.pagination",
        "options.proxy", "options.queryParameterArrays", "options.redirect", "options.response", "options.timeout",
        "curlImport",  # the editor's cURL import: nothing at run time
        *TOOL_RESPONSE,
    })
    unsupported_parameters = {
        "provideSslCertificates": "SSL client certificates are refused with an error naming the node",
        "sslCertificate": "SSL client certificates are refused with an error naming the node",
        "inputDataFieldName": "sending binary files is refused with an error naming the node",
        **dict.fromkeys(V1_V2, "typeVersion 1 and 2 of the HTTP Request node are refused with an error naming the node"),
    }

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        return [await run_requests(ctx)]


class HttpRequestToolNode(HttpRequestNode):
    """The HTTP Request node as an agent's tool: each call is one request, made of the node's
    parameters with the model's `$fromAI()` arguments filled in."""

    type = "n8n-nodes-base.httpRequestTool"
    versions = (3, 4, 4.1, 4.2, 4.3)
    display_name = "HTTP Request Tool"
    group = "Tools"
    default_name = "HTTP Request"
    inputs = ()
    outputs = (PortSpec(AI_TOOL, "Tool"),)
    Params = HttpToolParams
    implemented_parameters = HttpRequestNode.implemented_parameters - set(TOOL_RESPONSE) | {"toolDescription"}
    unsupported_parameters = {
        **{k: v for k, v in HttpRequestNode.unsupported_parameters.items() if k not in V1_V2},
        "optimizeResponse": "Optimize Response is refused with an error naming the node",
        **dict.fromkeys(TOOL_RESPONSE[1:], "read only with Optimize Response, which is refused"),
    }

    async def supply_data(self, ctx: SupplyContext) -> ToolSpec:
        parameters = ctx.node.parameters
        if parameters.get("optimizeResponse"):
            raise NodeOperationError(f'HTTP Request Tool "{ctx.node.name}": Optimize Response is not supported by mini-n8n',
                                     node=ctx.node.name, description="Turn Optimize Response off")
        described = parameters.get("toolDescription")
        description = described if isinstance(described, str) and described.strip() and \
            parameters.get("descriptionType") != "auto" else HTTP_DESCRIPTION
        return ToolSpec(name=node_name_to_tool_name(ctx.node.name), description=description,
                        parameters={"type": "object", "properties": {}, "required": []})


def _refuse_version(node: str, version: float) -> NodeOperationError:
    return NodeOperationError(
        f'HTTP Request "{node}" has typeVersion {version:g}, which mini-n8n does not run',
        node=node, description="Versions 3 to 4.3 run; replace the node with a new HTTP Request node (n8n converts none)")


async def _one(ctx: NodeContext, call: HttpCall, pagination: Pagination | None, index: int,
               version: float) -> list[tuple[Reply, Any]]:
    if pagination is not None:
        return await paginate(ctx, call, pagination, index, version)
    reply = await send(call, ctx.node.name)
    if not call.never_error and not 200 <= reply.status < 300:
        raise reply_error(ctx.node.name, reply)
    return [(reply, UNDEFINED)]


async def run_requests(ctx: NodeContext) -> list[Item]:
    """Every input item's request, made concurrently; the output items in input order."""
    node = ctx.node.name
    version = float(ctx.node.typeVersion)
    if version < 3:
        raise _refuse_version(node, version)
    auth = node_auth(ctx)
    pagination = pagination_of(ctx)
    tasks: list[asyncio.Task[list[tuple[Reply, Any]]]] = []
    calls: list[HttpCall] = []
    try:
        try:
            for index in range(len(ctx.items)):
                batching = options_of(ctx, index).get("batching") if index else None
                batch = (batching or {}).get("batch") or {} if isinstance(batching, dict) else {}
                size = batch.get("batchSize") if isinstance(batch.get("batchSize"), (int, float)) and batch["batchSize"] > 0 else 1
                interval = batch.get("batchInterval")
                if index and isinstance(interval, (int, float)) and interval > 0 and index % size == 0:
                    await asyncio.sleep(interval / 1000.0)
                call = build_call(ctx, index, version, auth)
                calls.append(call)
                tasks.append(asyncio.ensure_future(_one(ctx, call, pagination, index, version)))
            results = await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            for task in tasks:
                task.cancel()
        out: list[Item] = []
        for index, (call, result) in enumerate(zip(calls, results)):
            if isinstance(result, BaseException):
                raise result
            for reply, resolved in result:
                out.extend(items_of(call, reply, node, index, resolved))
        return out
    except NodeOperationError as exc:  # never a secret in an error
        exc.message = auth.scrub(exc.message)
        exc.description = auth.scrub(exc.description) if exc.description else exc.description
        raise


__all__ = ["HttpRequestNode", "HttpRequestToolNode"]
