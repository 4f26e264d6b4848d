"""MCP Client Tool authentication against real loopback MCP servers (HTTP Streamable and SSE) that
answer 401 without the right header: the credential from a real credentials file reaches the
server; a wrong or missing one is an error naming the node and the credential, never the secret."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Iterator

import pytest

from engine.credentials import FileCredentialStore
from engine.executor import Engine
from engine.registry import Registry
from engine.services import Services
from engine.workflow import parse_workflow
from tests.builders import agent_workflow, tool_call
from tests.nodes.tools.agent_runs import answer_of
from tests.nodes.tools.mcp_servers import http_mcp_server

MCP = "@n8n/n8n-nodes-langchain.mcpClientTool"
TOKEN = "tok-3f9a2c71d0"
API_KEY = "key-88a1e04b7c"


@pytest.fixture(scope="module")
def bearer_http() -> Iterator[str]:
    with http_mcp_server("--require", f"Authorization=Bearer {TOKEN}") as url:
        yield url


@pytest.fixture(scope="module")
def header_sse() -> Iterator[str]:
    with http_mcp_server("--sse", "--require", f"X-Api-Key={API_KEY}") as url:
        yield url


async def run(registry: Registry, tmp_path: Path, params: dict[str, Any], cred: tuple[str, dict] | None = None,
              *, version: float | None = None, calls: list[dict] | None = None):
    store = FileCredentialStore(tmp_path / "credentials.json")
    replies = ([{"text": "", "toolCalls": calls}] if calls else []) + [{"text": "done"}]
    wf = agent_workflow(replies, tools=[("MCP", MCP, {"options": {"timeout": 20000}, **params})],
                        agent_options={"returnIntermediateSteps": True})
    doc = json.loads(wf.to_json())
    mcp = next(n for n in doc["nodes"] if n["name"] == "MCP")
    if cred is not None:
        mcp["credentials"] = store.save(cred[0], "Gateway key", cred[1]).reference()
    if version is not None:
        mcp["typeVersion"] = version
    engine = Engine(registry, Services(credentials=store))
    return await engine.run(parse_workflow(doc), items=[{"json": {"chatInput": "go"}}])


async def test_bearer_token_reaches_an_http_streamable_server(registry: Registry, tmp_path: Path, bearer_http: str) -> None:
    params = {"endpointUrl": bearer_http, "authentication": "bearerAuth"}  # v1.2: HTTP Streamable by default
    state = await run(registry, tmp_path, params, ("httpBearerAuth", {"token": TOKEN}),
                      calls=[tool_call("add", {"a": 2, "b": 40}, "c1")])
    assert state.status == "success", state.error
    assert answer_of(state.result[0]["json"]["intermediateSteps"][0]["observation"]) == "42"


async def test_header_auth_reaches_an_sse_server(registry: Registry, tmp_path: Path, header_sse: str) -> None:
    params = {"sseEndpoint": header_sse, "authentication": "headerAuth"}
    state = await run(registry, tmp_path, params, ("httpHeaderAuth", {"name": "X-Api-Key", "value": API_KEY}),
                      version=1, calls=[tool_call("shout", {"word": "hi"}, "c1")])
    assert state.status == "success", state.error
    assert answer_of(state.result[0]["json"]["intermediateSteps"][0]["observation"]) == "HI!"


async def test_multiple_headers_auth_sends_each_header(registry: Registry, tmp_path: Path, header_sse: str) -> None:
    params = {"endpointUrl": header_sse, "serverTransport": "sse", "authentication": "multipleHeadersAuth"}
    cred = ("httpMultipleHeadersAuth", {"headers": {"values": [{"name": "X-Other", "value": "1"},
                                                                {"name": "X-Api-Key", "value": API_KEY}]}})
    state = await run(registry, tmp_path, params, cred, calls=[tool_call("add", {"a": 1, "b": 1}, "c1")])
    assert state.status == "success", state.error
    assert answer_of(state.result[0]["json"]["intermediateSteps"][0]["observation"]) == "2"


@pytest.mark.parametrize("transport", ["httpStreamable", "sse"])
async def test_a_wrong_secret_names_the_node_and_the_credential(registry: Registry, tmp_path: Path, bearer_http: str,
                                                                header_sse: str, transport: str, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    url = bearer_http if transport == "httpStreamable" else header_sse
    wrong = "wrong-secret-0451"
    cred = (("httpBearerAuth", {"token": wrong}) if transport == "httpStreamable"
            else ("httpHeaderAuth", {"name": "X-Api-Key", "value": wrong}))
    params = {"endpointUrl": url, "serverTransport": transport,
              "authentication": "bearerAuth" if transport == "httpStreamable" else "headerAuth"}
    state = await run(registry, tmp_path, params, cred)
    assert state.status == "error"
    assert state.error.node == "MCP"
    assert state.error.description == (
        f"Could not connect to your MCP server. Authentication failed: {url} answered 401 Unauthorized to "
        f'MCP Client Tool "MCP" with the credential "Gateway key" ({cred[0]})')
    assert wrong not in caplog.text and wrong not in json.dumps(state.error.__dict__, default=str)


async def test_no_authentication_is_named_when_the_server_wants_it(registry: Registry, tmp_path: Path, bearer_http: str) -> None:
    state = await run(registry, tmp_path, {"endpointUrl": bearer_http})
    assert state.status == "error"
    assert state.error.description == (
        f"Could not connect to your MCP server. Authentication failed: {bearer_http} answered 401 Unauthorized to "
        'MCP Client Tool "MCP" without a credential (Authentication: None)')


async def test_a_missing_credential_is_named(registry: Registry, tmp_path: Path, bearer_http: str) -> None:
    state = await run(registry, tmp_path, {"endpointUrl": bearer_http, "authentication": "bearerAuth"})
    assert state.status == "error"
    assert state.error.description == 'MCP Client Tool "MCP" needs a httpBearerAuth credential, and none is stored'


async def test_mcp_oauth2_is_refused_by_name(registry: Registry, tmp_path: Path, bearer_http: str) -> None:
    state = await run(registry, tmp_path, {"endpointUrl": bearer_http, "authentication": "mcpOAuth2Api"})
    assert state.status == "error"
    assert state.error.description == ('MCP Client Tool "MCP" uses the authentication MCP OAuth2 (mcpOAuth2Api: its '
                                       "sign-in flow and token refresh), which mini-n8n does not support")
