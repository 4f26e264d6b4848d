"""HTTP Request Tool authentication and Optimize Response against a loopback server, with the
credential in a real credentials file: the secret reaches the server, never the model or an error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from engine.credentials import FileCredentialStore
from engine.executor import Engine
from engine.registry import Registry
from engine.services import Services
from tests.builders import agent_workflow, tool_call
from tests.nodes.tools.loopback_http import serve

HTTP = "@n8n/n8n-nodes-langchain.toolHttpRequest"
SECRET = "s3cr3t-value-123"


@pytest.fixture
def base() -> Iterator[str]:
    with serve() as url:
        yield url


async def _call(registry: Registry, tmp_path: Path, params: dict[str, Any], cred: tuple[str, dict] | None,
                args: dict | None = None) -> tuple[str, Any]:
    store = FileCredentialStore(tmp_path / "credentials.json")
    wf = agent_workflow([{"toolCalls": [tool_call("Tool", args or {}, "c1")]}, {"text": "done"}],
                        tools=[("Tool", HTTP, {"toolDescription": "t", **params})],
                        agent_options={"returnIntermediateSteps": True})
    if cred is not None:
        info = store.save(cred[0], "My cred", cred[1])
        doc = json.loads(wf.to_json())
        next(n for n in doc["nodes"] if n["name"] == "Tool")["credentials"] = info.reference()
        from engine.workflow import parse_workflow
        wf = parse_workflow(doc)
    state = await Engine(registry, Services(credentials=store)).run(wf, items=[{"json": {"chatInput": "go", "sessionId": "s"}}])
    assert state.status == "success", state.error
    observation = state.result[0]["json"]["intermediateSteps"][0]["observation"]
    return tool_answer(observation), state


def tool_answer(observation: str) -> str:
    """The tool's own answer inside what a v3 Agent hands the model (its output items as JSON, or
    its error as {"error": ...})."""
    items = json.loads(observation)
    if isinstance(items, dict):
        return str(items["error"])
    return items[0]["response"] if isinstance(items[0].get("response"), str) else json.dumps(items[0]["response"])


@pytest.mark.parametrize(("params", "cred", "where", "want"), [
    ({"authentication": "genericCredentialType", "genericAuthType": "httpHeaderAuth"},
     ("httpHeaderAuth", {"name": "X-Api-Key", "value": SECRET}), "headers", ("x-api-key", SECRET)),
    ({"authentication": "genericCredentialType", "genericAuthType": "httpQueryAuth"},
     ("httpQueryAuth", {"name": "key", "value": SECRET}), "query", ("key", SECRET)),
    ({"authentication": "genericCredentialType", "genericAuthType": "httpBasicAuth"},
     ("httpBasicAuth", {"user": "ada", "password": SECRET}), "headers", ("authorization", "Basic YWRhOnMzY3IzdC12YWx1ZS0xMjM=")),
    ({"authentication": "predefinedCredentialType", "nodeCredentialType": "httpBearerAuth"},
     ("httpBearerAuth", {"token": SECRET}), "headers", ("authorization", f"Bearer {SECRET}")),
    ({"authentication": "predefinedCredentialType", "nodeCredentialType": "serpApi"},
     ("serpApi", {"apiKey": SECRET}), "query", ("api_key", SECRET)),
    ({"authentication": "genericCredentialType", "genericAuthType": "httpCustomAuth"},
     ("httpCustomAuth", {"json": json.dumps({"headers": {"X-Custom": SECRET}, "qs": {"q": "1"}})}), "headers", ("x-custom", SECRET)),
])
async def test_the_credential_reaches_the_server(registry: Registry, tmp_path: Path, base: str, params: dict, cred: tuple,
                                                 where: str, want: tuple) -> None:
    text, _ = await _call(registry, tmp_path, {"url": base + "/echo", **params}, cred)
    echo = json.loads(text)
    assert echo[where][want[0]] == want[1]


async def test_an_authenticated_error_never_shows_the_secret(registry: Registry, tmp_path: Path, base: str) -> None:
    params = {"url": base + "/status/404", "authentication": "genericCredentialType", "genericAuthType": "httpQueryAuth"}
    text, state = await _call(registry, tmp_path, params, ("httpQueryAuth", {"name": "key", "value": SECRET}))
    assert SECRET not in state.model_dump_json()
    assert text.startswith("The server answered 404")


async def test_a_missing_credential_is_named(registry: Registry, tmp_path: Path, base: str) -> None:
    params = {"url": base + "/echo", "authentication": "genericCredentialType", "genericAuthType": "httpHeaderAuth"}
    text, _ = await _call(registry, tmp_path, params, None)
    assert text == 'HTTP Request Tool "Tool" needs a httpHeaderAuth credential, and none is stored'


async def test_a_placeholder_in_the_host_is_refused_with_authentication(registry: Registry, tmp_path: Path) -> None:
    params = {"url": "http://{host}/x", "authentication": "genericCredentialType", "genericAuthType": "httpHeaderAuth"}
    wf = agent_workflow([{"text": "done"}], tools=[("Tool", HTTP, {"toolDescription": "t", **params})])
    state = await Engine(registry).run(wf, items=[{"json": {"chatInput": "go", "sessionId": "s"}}])
    assert state.status == "error"
    assert state.error.message == "Error in sub-node Tool"  # failed while being set up, as in n8n
    assert "Can't use a placeholder for the domain when using authentication" in state.error.description


async def test_json_bodies_read_as_n8n_indents_them_and_optimize_picks_fields(registry: Registry, tmp_path: Path, base: str) -> None:
    text, _ = await _call(registry, tmp_path, {"url": base + "/echo"}, None)
    assert text.startswith('{\n  "method": "GET",\n  "path": "/echo",')
    params = {"url": base + "/echo", "optimizeResponse": True, "fieldsToInclude": "selected", "fields": "method, headers.host"}
    text, _ = await _call(registry, tmp_path, params, None)
    assert json.loads(text) == [{"method": "GET", "headers": {"host": base.removeprefix("http://")}}]
    params = {"url": base + "/echo", "optimizeResponse": True, "fieldsToInclude": "except", "fields": "headers,query,body"}
    text, _ = await _call(registry, tmp_path, params, None)
    assert json.loads(text) == [{"method": "GET", "path": "/echo"}]


async def test_html_optimizing_is_refused_not_skipped(registry: Registry, base: str) -> None:
    params = {"url": base + "/echo", "optimizeResponse": True, "responseType": "html"}
    wf = agent_workflow([{"text": "done"}], tools=[("Tool", HTTP, {"toolDescription": "t", **params})])
    state = await Engine(registry).run(wf, items=[{"json": {"chatInput": "go", "sessionId": "s"}}])
    assert state.status == "error"
    assert "Optimize Response for HTML responses is not supported" in state.error.description
