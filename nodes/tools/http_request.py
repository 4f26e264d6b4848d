"""HTTP Request Tool: one HTTP call the model may make, with `{placeholders}` the model fills in.

n8n's `toolHttpRequest` parameters. Only http and https URLs are fetched; the response is read
up to a size limit and cut before it reaches the model; a non-2xx answer is a tool error. The
Timeout option is the deadline of the whole call (connection, redirects, body); n8n's SSRF
settings (ssrf_guard) can refuse private and link-local addresses.
"""

import asyncio
import json
import weakref
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
from pydantic import Field

from nodes.http_transport import MAX_REPLY_ENV, LazyTLSTransport, failure_reason, max_reply_bytes

from engine.chat import ToolSpec
from engine.connection_types import AI_TOOL, PortSpec
from engine.context import NodeContext, SupplyContext
from engine.defaults import new_list
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

from .http_auth import GENERIC, RequestAuth, check_host, request_auth
from .http_optimize import default_text, optimize_json
from .http_placeholders import PlaceholderError, fill_json, fill_text, fill_url, names_in, schema_entry, unused
from .naming import node_name_to_tool_name
from .ssrf_guard import GuardedBackend, SsrfBlocked, SsrfPolicy

ALLOWED_SCHEMES = ("http", "https")
ERROR_BODY_CHARS = 300
LIMITS = httpx.Limits(max_keepalive_connections=8)

_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[SsrfPolicy | None, httpx.AsyncClient]]" = (
    weakref.WeakKeyDictionary()
)


def shared_client(policy: SsrfPolicy | None) -> httpx.AsyncClient:
    """The keep-alive client of the running loop for this SSRF policy (None: protection off)."""
    per_loop = _clients.setdefault(asyncio.get_running_loop(), {})
    client = per_loop.get(policy)
    if client is None or client.is_closed:
        backend = GuardedBackend(policy) if policy is not None else None
        client = per_loop[policy] = LazyTLSTransport.client(LIMITS, network_backend=backend, follow_redirects=True)
    return client


class Parameter(NodeParams):
    name: str = ""
    valueProvider: Literal["modelRequired", "modelOptional", "fieldValue"] = "modelRequired"
    value: str = ""


class ParameterList(NodeParams):
    values: list[Parameter] = Field(default_factory=new_list)


class PlaceholderDefinition(NodeParams):
    name: str = ""
    description: str = ""
    type: Literal["not specified", "string", "number", "boolean", "json"] = "not specified"


class PlaceholderList(NodeParams):
    values: list[PlaceholderDefinition] = Field(default_factory=new_list)


class HttpToolOptions(NodeParams):
    timeout: int = Field(
        30000, ge=1, title="Timeout (ms)", description="Deadline of the whole call: connecting, redirects and the body",
    )
    maxResponseLength: int = Field(
        20000, ge=1, title="Max Response Length",
        description="Characters of the response the model gets; the rest is cut off",
    )


Specify = Literal["keypair", "json", "model"]


class HttpToolParams(NodeParams):
    toolDescription: str = Field("", title="Description", json_schema_extra={"multiline": True})
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] = Field("GET", title="Method")
    url: str = Field("", title="URL", description="Use a {placeholder} for any part the model fills in")
    sendQuery: bool = Field(False, title="Send Query Parameters")
    specifyQuery: Specify = Field("keypair", title="Specify Query Parameters", json_schema_extra={
        "displayOptions": {"show": {"sendQuery": [True]}}})
    parametersQuery: ParameterList = Field(default_factory=ParameterList, title="Query Parameters", json_schema_extra={
        "displayOptions": {"show": {"sendQuery": [True], "specifyQuery": ["keypair"]}}})
    jsonQuery: str = Field("", title="Query Parameters (JSON)", json_schema_extra={
        "displayOptions": {"show": {"sendQuery": [True], "specifyQuery": ["json"]}}})
    sendHeaders: bool = Field(False, title="Send Headers")
    specifyHeaders: Specify = Field("keypair", title="Specify Headers", json_schema_extra={
        "displayOptions": {"show": {"sendHeaders": [True]}}})
    parametersHeaders: ParameterList = Field(default_factory=ParameterList, title="Headers", json_schema_extra={
        "displayOptions": {"show": {"sendHeaders": [True], "specifyHeaders": ["keypair"]}}})
    jsonHeaders: str = Field("", title="Headers (JSON)", json_schema_extra={
        "displayOptions": {"show": {"sendHeaders": [True], "specifyHeaders": ["json"]}}})
    sendBody: bool = Field(False, title="Send Body")
    specifyBody: Specify = Field("keypair", title="Specify Body", json_schema_extra={
        "displayOptions": {"show": {"sendBody": [True]}}})
    parametersBody: ParameterList = Field(default_factory=ParameterList, title="Body Parameters", json_schema_extra={
        "displayOptions": {"show": {"sendBody": [True], "specifyBody": ["keypair"]}}})
    jsonBody: str = Field("", title="Body (JSON)", json_schema_extra={
        "displayOptions": {"show": {"sendBody": [True], "specifyBody": ["json"]}}})
    placeholderDefinitions: PlaceholderList = Field(default_factory=PlaceholderList, title="Placeholder Definitions")
    authentication: Literal["none", "predefinedCredentialType", "genericCredentialType"] = Field(
        "none", title="Authentication", description="The credential is applied here and never shown to the model",
    )
    genericAuthType: str = Field("", title="Generic Auth Type", description=", ".join(GENERIC))
    nodeCredentialType: str = Field("", title="Credential Type", description="A predefined credential type, e.g. openAiApi")
    optimizeResponse: bool = Field(False, title="Optimize Response")
    responseType: Literal["json", "html", "text"] = Field("json", title="Expected Response Type")
    dataField: str = Field("", title="Field Containing Data")
    fieldsToInclude: Literal["all", "selected", "except"] = Field("all", title="Include Fields")
    fields: str = Field("", title="Fields", description="Comma-separated field names; dot notation")
    options: HttpToolOptions = Field(default_factory=HttpToolOptions, title="Options")


PARTS = (("query", "Query"), ("headers", "Headers"), ("body", "Body"))


def _part(params: HttpToolParams, part: str) -> tuple[bool, str, ParameterList, str]:
    cap = dict(PARTS)[part]
    return (
        getattr(params, f"send{cap}"),
        getattr(params, f"specify{cap}"),
        getattr(params, f"parameters{cap}"),
        getattr(params, f"json{cap}"),
    )


def tool_schema(params: HttpToolParams, node: str) -> dict[str, Any]:
    """The JSON schema of the model's arguments: every placeholder, and model-provided fields."""
    definitions = {d.name: d for d in params.placeholderDefinitions.values if d.name}
    properties: dict[str, Any] = {}
    required: list[str] = []

    def add(name: str, kind: str = "not specified", description: str = "", optional: bool = False) -> None:
        if name in properties:
            return
        definition = definitions.get(name)
        if definition is not None:
            kind = definition.type if definition.type != "not specified" else kind
            description = definition.description or description
        properties[name] = schema_entry(kind, description)
        if not optional:
            required.append(name)

    used: list[str] = []
    for name in names_in(params.url):
        add(name)
        used.append(name)
    for part, _cap in PARTS:
        send, specify, values, template = _part(params, part)
        if not send:
            continue
        if specify == "model":
            add(part, "json", f"The {part} of the request as a JSON object")
            used.append(part)
        elif specify == "json":
            for name in names_in(template):
                add(name)
                used.append(name)
        else:
            for p in values.values:
                if not p.name:
                    continue
                if p.valueProvider == "fieldValue":
                    for name in names_in(p.value):
                        add(name)
                        used.append(name)
                else:
                    add(p.name, optional=p.valueProvider == "modelOptional")
                    used.append(p.name)
    stray = unused(definitions, used)
    if stray:
        raise NodeOperationError(
            f"Misconfigured placeholder '{stray[0]}': it is defined but not used in the URL, query, headers or body",
            node=node,
        )
    return {"type": "object", "properties": properties, "required": required}


def _part_value(params: HttpToolParams, part: str, args: dict[str, Any]) -> dict[str, Any] | None:
    send, specify, values, template = _part(params, part)
    if not send:
        return None
    if specify == "model":
        value = args.get(part, {})
        if isinstance(value, str):
            value = fill_json(value, {}, part)
    elif specify == "json":
        value = fill_json(template, args, part) if template.strip() else {}
    else:
        value = {}
        for p in values.values:
            if not p.name:
                continue
            if p.valueProvider == "fieldValue":
                value[p.name] = fill_text(p.value, args, part)
            elif p.name in args:
                value[p.name] = args[p.name]
            elif p.valueProvider == "modelRequired":
                raise PlaceholderError(f"no value for the {part} parameter '{p.name}'")
    if not isinstance(value, dict):
        raise PlaceholderError(f"the {part} must be a JSON object, not {type(value).__name__}")
    return value


def checked_url(url: str) -> str:
    """The URL if it is an absolute http(s) URL; otherwise a clear error."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ALLOWED_SCHEMES:
        shown = f"'{parts.scheme}://'" if parts.scheme else "no scheme"
        raise PlaceholderError(f"only http and https URLs are allowed, but '{url}' has {shown}")
    if not parts.hostname:
        raise PlaceholderError(f"the URL '{url}' has no host")
    return url


async def read_capped(response: httpx.Response, max_chars: int, max_bytes: int) -> tuple[str, bool]:
    """At most about `max_chars` characters (and `max_bytes` bytes) of the body, and whether more
    was left unread; reading stops there, so a huge body is never downloaded whole."""
    limit = min(max_chars * 4 + 4, max_bytes)  # UTF-8 needs at most 4 bytes a character
    chunks: list[bytes] = []
    size = 0
    cut = False
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            cut = True
            break
    text = b"".join(chunks)[:limit].decode(response.encoding or "utf-8", errors="replace")
    if len(text) > max_chars:
        text, cut = text[:max_chars], True
    return text, cut


def check_optimizer(params: HttpToolParams, node: str) -> None:
    """Only the JSON optimizer is implemented: the others are an error, never skipped."""
    if params.optimizeResponse and params.responseType != "json":
        raise NodeOperationError(
            f'HTTP Request Tool "{node}": Optimize Response for {params.responseType.upper()} responses is not supported '
            "by mini-n8n",
            node=node,
            description="Choose Expected Response Type JSON, or turn Optimize Response off",
        )


V1_NOTE = ("n8n's HTTP Request Tool v1 gives the model one text input (the arguments as JSON text, listed in the "
           "tool's description); mini-n8n gives it v1.1's named arguments, so the model sees the tool differently, "
           "while the request made from the same arguments is the same")


class HttpRequestTool(NodeType):
    type = "@n8n/n8n-nodes-langchain.toolHttpRequest"
    version = 1.1
    versions = (1, 1.1)  # v1 runs as v1.1, with a run-log note saying how n8n's v1 differs
    display_name = "HTTP Request Tool"
    description = "Lets the agent call an HTTP API; parts in {braces} are filled in by the model"
    group = "Tools"
    icon = "http-request"
    default_name = "HTTP Request"
    inputs = ()
    outputs = (PortSpec(AI_TOOL, "Tool"),)
    Params = HttpToolParams
    implemented_parameters = frozenset({
        "toolDescription", "method", "url", "sendQuery", "specifyQuery", "parametersQuery", "jsonQuery", "sendHeaders",
        "specifyHeaders", "parametersHeaders", "jsonHeaders", "sendBody", "specifyBody", "parametersBody", "jsonBody",
        "placeholderDefinitions", "authentication", "genericAuthType", "nodeCredentialType", "optimizeResponse",
        "responseType", "dataField", "fieldsToInclude", "fields"})
    unsupported_parameters = dict.fromkeys(
        ("cssSelector", "onlyContent", "elementsToOmit", "truncateResponse", "maxLength"),
        "a setting of Optimize Response for HTML or text responses, which is refused with an error naming it")

    async def supply_data(self, ctx: SupplyContext) -> ToolSpec:
        params: HttpToolParams = ctx.params()
        if not params.url.strip():
            raise NodeOperationError(f'Node "{ctx.node.name}" has no URL', node=ctx.node.name)
        check_host(params.url.strip(), params.authentication, ctx.node.name)
        check_optimizer(params, ctx.node.name)
        if float(ctx.node.typeVersion) < 1.1:
            ctx.note(V1_NOTE)
        return ToolSpec(
            name=node_name_to_tool_name(ctx.node.name),
            description=params.toolDescription or f"Makes an HTTP {params.method} request to {params.url}",
            parameters=tool_schema(params, ctx.node.name),
        )

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        out = []
        for i, item in enumerate(ctx.items):
            params: HttpToolParams = ctx.params(i)
            args = item.get("json", {})
            auth = request_auth(params.authentication, params.genericAuthType, params.nodeCredentialType,
                                ctx.services, ctx.node.credentials, ctx.node.name)
            try:
                text = await self._request(ctx.node.name, params, args, auth)
            except NodeOperationError as exc:  # never a secret in what the model or the log reads
                exc.message = auth.scrub(exc.message)
                raise
            out.append({"json": {"response": text}})
        return [out]

    async def _request(self, node: str, params: HttpToolParams, args: dict[str, Any], auth: RequestAuth) -> str:
        try:
            check_host(params.url.strip(), params.authentication, node)
            url = checked_url(fill_url(params.url.strip(), args))
            query = _part_value(params, "query", args)
            headers = _part_value(params, "headers", args)
            body = _part_value(params, "body", args)
        except PlaceholderError as exc:
            raise NodeOperationError(f"Cannot build the request: {exc}", node=node) from None
        timeout_s = params.options.timeout / 1000.0
        max_chars = params.options.maxResponseLength
        max_bytes = max_reply_bytes()
        request_headers = {k: v if isinstance(v, str) else json.dumps(v) for k, v in (headers or {}).items()}
        query_params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in (query or {}).items()}
        request_headers.update(auth.headers)
        query_params.update(auth.query)
        if auth.body:
            body = {**(body or {}), **auth.body}
        client = shared_client(SsrfPolicy.from_env())
        try:
            async with asyncio.timeout(timeout_s):
                async with client.stream(
                    params.method, url, params=query_params or None, headers=request_headers or None,
                    json=body if body is not None else None, timeout=None, auth=auth.auth or httpx.USE_CLIENT_DEFAULT,
                ) as answer:
                    text, cut = await read_capped(answer, max_chars, max_bytes)
        except TimeoutError:
            raise NodeOperationError(
                f"The request to {url} timed out after {timeout_s:g} s", node=node,
                description="The Timeout option is the deadline of the whole call: connecting, redirects and the body",
            ) from None
        except SsrfBlocked as exc:
            raise NodeOperationError(str(exc), node=node, description=exc.description) from None
        except httpx.HTTPError as exc:
            raise NodeOperationError(f"The request to {url} failed: {failure_reason(exc)}", node=node) from None
        if not answer.is_success:
            short = text[:ERROR_BODY_CHARS] + ("…" if len(text) > ERROR_BODY_CHARS or cut else "")
            raise NodeOperationError(
                f"The server answered {answer.status_code} {answer.reason_phrase}: {short}".rstrip(": "),
                node=node,
            )
        if not cut:
            content_type = answer.headers.get("content-type", "")
            if params.optimizeResponse:
                return optimize_json(text, params.dataField, params.fieldsToInclude, params.fields, node)
            text = default_text(text, content_type)
        elif params.optimizeResponse:
            raise NodeOperationError(
                f"The response is longer than Max Response Length ({max_chars} characters): it cannot be optimized",
                node=node,
            )
        if cut:
            shown = len(text)
            why = "characters are shown" if shown >= max_chars else f"characters are shown (${MAX_REPLY_ENV} caps the bytes read)"
            text += f"\n[response cut: only the first {shown} {why}]"
        return text
