"""MCP Client Tool: a toolkit node that supplies every tool of a Model Context Protocol server.

n8n's `mcpClientTool` parameters (`endpointUrl`/`sseEndpoint`, `serverTransport`, `authentication`,
`include` with `includeTools`/`excludeTools`, `options.timeout`), plus a stdio transport n8n lacks:
`command`, `arguments` and `environment` start the server as a subprocess. When the Agent calls
one of the tools, the engine runs this node with the tool's name in the input's `tool` field.
"""

import shlex
from typing import Any, Literal

from pydantic import Field

from engine.chat import ToolSpec
from engine.connection_types import AI_TOOL, PortSpec
from engine.context import NodeContext, SupplyContext
from engine.credentials import CredentialError, credential_ref, describe_credential, scrub_secret
from engine.defaults import new_list
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

from .mcp_connection import McpFailure, McpRefused, McpServer, call_tool, list_tools

# n8n's `authentication` values and the credential type each reads (n8n 1.123, shared/descriptions.ts)
CREDENTIAL_OF = {
    "bearerAuth": "httpBearerAuth",
    "headerAuth": "httpHeaderAuth",
    "multipleHeadersAuth": "httpMultipleHeadersAuth",
    "mcpOAuth2Api": "mcpOAuth2Api",
}
UNSUPPORTED_AUTH = {"mcpOAuth2Api": "MCP OAuth2 (mcpOAuth2Api: its sign-in flow and token refresh)"}


class McpOptions(NodeParams):
    timeout: int = Field(60000, ge=1, title="Timeout (ms)", description="Time to wait for the server to start, list or run a tool")


class McpClientParams(NodeParams):
    serverTransport: Literal["sse", "httpStreamable", "stdio"] | None = Field(
        None, title="Server Transport",
        description="sse: Server Sent Events (deprecated); httpStreamable: HTTP Streamable; stdio: start a command. "
                    "Unset: SSE up to version 1.1, HTTP Streamable from 1.2 (n8n's defaults)",
    )
    endpointUrl: str = Field("", title="Endpoint", description="e.g. http://127.0.0.1:8000/mcp", json_schema_extra={
        "displayOptions": {"show": {"@version": [{"_cnd": {"gte": 1.1}}]}, "hide": {"serverTransport": ["stdio"]}}})
    sseEndpoint: str = Field("", title="SSE Endpoint", description="The endpoint of version 1 nodes (SSE)",
                             json_schema_extra={"displayOptions": {"show": {"@version": [1]}}})
    command: str = Field("", title="Command", description="stdio: the program that starts the server, e.g. mcp-server-time",
                         json_schema_extra={"displayOptions": {"show": {"serverTransport": ["stdio"]}}})
    arguments: str = Field("", title="Arguments", description="stdio: arguments, split as a shell would (quotes allowed)",
                           json_schema_extra={"displayOptions": {"show": {"serverTransport": ["stdio"]}}})
    environment: str = Field(
        "", title="Environment", description="stdio: NAME=value, one a line, added to the server's environment",
        json_schema_extra={"multiline": True, "displayOptions": {"show": {"serverTransport": ["stdio"]}}},
    )
    authentication: Literal["none", "bearerAuth", "headerAuth", "multipleHeadersAuth", "mcpOAuth2Api"] = Field(
        "none", title="Authentication",
        description="HTTP transports: bearerAuth sends a Bearer Auth credential's token, headerAuth a Header Auth "
                    "credential's header, multipleHeadersAuth each header of a Multiple Headers Auth credential; "
                    "MCP OAuth2 is not supported",
        json_schema_extra={"displayOptions": {"hide": {"serverTransport": ["stdio"]}}},
    )
    include: Literal["all", "selected", "except"] = Field("all", title="Tools to Include")
    includeTools: list[str] = Field(default_factory=new_list, title="Tools to Include",
                                    json_schema_extra={"displayOptions": {"show": {"include": ["selected"]}}})
    excludeTools: list[str] = Field(default_factory=new_list, title="Tools to Exclude",
                                    json_schema_extra={"displayOptions": {"show": {"include": ["except"]}}})
    options: McpOptions = Field(default_factory=McpOptions, title="Options")


def transport_of(params: McpClientParams, version: float) -> str:
    """n8n's transport: SSE for version 1, the parameter after that (defaulting to HTTP Streamable from 1.2)."""
    if version < 1.1:
        return "sse"
    if params.serverTransport is None:
        return "httpStreamable" if version >= 1.2 else "sse"
    return params.serverTransport


def auth_headers(params: McpClientParams, ctx: NodeContext | SupplyContext) -> dict[str, str]:
    """The headers the node's authentication adds (n8n's getAuthHeaders), from the stored credential."""
    node = ctx.node.name
    if params.authentication == "none":
        return {}
    cred_type = CREDENTIAL_OF[params.authentication]
    if params.authentication in UNSUPPORTED_AUTH:
        raise NodeOperationError(
            f'MCP Client Tool "{node}" uses the authentication {UNSUPPORTED_AUTH[params.authentication]}, '
            "which mini-n8n does not support", node=node,
            description="Use Bearer Auth with an access token, or Header Auth, instead",
        )
    ref = credential_ref(ctx.node.credentials, cred_type)
    try:
        data = ctx.services.credentials.get(cred_type, ref)
    except CredentialError as exc:
        raise NodeOperationError(str(exc), node=node) from None
    if not data:
        raise NodeOperationError(
            f'MCP Client Tool "{node}" needs a {cred_type} credential, and '
            f"{'the ' + describe_credential(cred_type, ref) + ' is not' if ref else 'none is'} stored",
            node=node, description="Add it in the editor's credentials, or to credentials.json under that type",
        )
    if cred_type == "httpBearerAuth":
        return {"Authorization": f"Bearer {data.get('token', '')}"}
    if cred_type == "httpHeaderAuth":
        return {str(data.get("name", "")): str(data.get("value", ""))}
    values = (data.get("headers") or {}).get("values") if isinstance(data.get("headers"), dict) else None
    if not isinstance(values, list):
        raise NodeOperationError(
            f'The {describe_credential(cred_type, ref)} of node "{node}" has no headers '
            '(n8n\'s form: {"headers": {"values": [{"name": ..., "value": ...}]}})', node=node)
    return {str(v.get("name", "")): str(v.get("value", "")) for v in values if isinstance(v, dict)}


def credential_words(params: McpClientParams, ctx: NodeContext | SupplyContext) -> str:
    """How a refusal names what the node sent: its credential, or none."""
    if params.authentication == "none":
        return "without a credential (Authentication: None)"
    cred_type = CREDENTIAL_OF[params.authentication]
    return f"with the {describe_credential(cred_type, credential_ref(ctx.node.credentials, cred_type))}"


def failure(exc: McpFailure, params: McpClientParams, ctx: NodeContext | SupplyContext, server: McpServer) -> NodeOperationError:
    """The node's error for an MCP failure: a refusal names the credential; no header value shows."""
    node = ctx.node.name
    if isinstance(exc, McpRefused):
        message = (f"Could not connect to your MCP server. Authentication failed: {exc} to MCP Client Tool "
                   f'"{node}" {credential_words(params, ctx)}')
    else:
        message = str(exc)
    for value in server.headers.values():
        message = scrub_secret(message, value)
    return NodeOperationError(message, node=node)


def server_of(params: McpClientParams, ctx: NodeContext | SupplyContext) -> McpServer:
    """The server a node's parameters describe; bad arguments or environment lines are named."""
    node = ctx.node.name
    timeout_s = params.options.timeout / 1000.0
    transport = transport_of(params, float(ctx.node.typeVersion))
    if transport != "stdio":
        url = params.sseEndpoint if float(ctx.node.typeVersion) < 1.1 else params.endpointUrl or params.sseEndpoint
        return McpServer(transport=transport, url=url.strip(), timeout_s=timeout_s, headers=auth_headers(params, ctx))
    try:
        args = shlex.split(params.arguments)
    except ValueError as exc:
        raise NodeOperationError(f'The arguments of node "{node}" cannot be read: {exc}', node=node) from None
    env: dict[str, str] = {}
    for number, line in enumerate(params.environment.splitlines(), 1):
        if not line.strip():
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            raise NodeOperationError(
                f'Line {number} of the environment of node "{node}" is not NAME=value: {line.strip()}', node=node
            )
        env[name.strip()] = value
    return McpServer(transport="stdio", command=params.command.strip(), args=args, env=env, timeout_s=timeout_s)


def allowed(params: McpClientParams, name: str) -> bool:
    if params.include == "selected":
        return name in params.includeTools
    if params.include == "except":
        return name not in params.excludeTools
    return True


class McpClientTool(NodeType):
    type = "@n8n/n8n-nodes-langchain.mcpClientTool"
    version = 1.2
    versions = (1, 1.1, 1.2)
    display_name = "MCP Client Tool"
    description = "Connects the tools of an MCP server (stdio command or HTTP endpoint) to the agent"
    group = "Tools"
    icon = "mcp"
    default_name = "MCP Client"
    inputs = ()
    outputs = (PortSpec(AI_TOOL, "Tools"),)
    Params = McpClientParams
    # `credentials` is n8n's credential picker: the node's credential of its authentication's type
    implemented_parameters = frozenset({"serverTransport", "endpointUrl", "sseEndpoint", "authentication", "credentials",
                                        "include", "includeTools", "excludeTools", "options", "options.timeout"})
    # the credentials dialog's forms are flat: a Multiple Headers Auth credential (a list) comes from the file
    credential_types = ("httpBearerAuth", "httpHeaderAuth")

    async def supply_data(self, ctx: SupplyContext) -> list[ToolSpec]:
        node = ctx.node.name
        params: McpClientParams = ctx.params()
        server = server_of(params, ctx)
        # The Agent asks for its tools every round: list them once per execution and server.
        cache = ctx.parent.memo("mcp-tool-lists")
        key = f"{node}\n{server!r}"
        offered = cache.get(key)
        if offered is None:
            try:
                offered = await list_tools(server)
            except McpFailure as exc:
                raise failure(exc, params, ctx, server) from None
            cache[key] = offered
        if not offered:
            raise NodeOperationError(
                "MCP Server returned no tools", node=node,
                description="Connected successfully to your MCP server but it returned an empty list of tools.",
            )
        names = [t.name for t in offered]
        if params.include == "selected":
            missing = [n for n in params.includeTools if n not in names]
            if missing:
                raise NodeOperationError(
                    f"The MCP server does not offer the selected tool{'s' if len(missing) > 1 else ''} "
                    f"{', '.join(repr(m) for m in missing)}; it offers {', '.join(names)}",
                    node=node,
                )
        chosen = [t for t in offered if allowed(params, t.name)]
        if not chosen:
            raise NodeOperationError(
                "No MCP tools are left after filtering", node=node,
                description=f"The server offers {', '.join(names)}; the include setting removes them all.",
            )
        return [
            ToolSpec(
                name=t.name,
                description=t.description or t.title or t.name,
                parameters=dict(t.input_schema) or {"type": "object", "properties": {}},
                sourceNodeName=node,
                isFromToolkit=True,
            )
            for t in chosen
        ]

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        node = ctx.node.name
        out = []
        for i, item in enumerate(ctx.items):
            params: McpClientParams = ctx.params(i)
            args: dict[str, Any] = dict(item.get("json", {}))
            name = args.pop("tool", None)
            if not isinstance(name, str) or not name:
                raise NodeOperationError("The MCP Client Tool needs the name of the tool to run in the input field 'tool'", node=node)
            if not allowed(params, name):
                raise NodeOperationError(f"The tool '{name}' is not included in this MCP Client Tool", node=node)
            server = server_of(params, ctx)
            try:
                content = await call_tool(server, name, args)
            except McpFailure as exc:
                raise failure(exc, params, ctx, server) from None
            out.append({"json": {"response": content}})  # the content blocks, as n8n outputs them
        return [out]
