"""HTTP Request Tool against a loopback server: placeholders, timeout, non-2xx, cut bodies, schemes."""

from __future__ import annotations

import json
from typing import Iterator

import pytest

from engine.errors import NodeOperationError
from engine.executor import Engine
from nodes.tools.http_request import HttpToolParams, tool_schema
from tests.builders import agent_workflow
from tests.nodes.tools.agent_runs import observation, run_tool_once
from tests.nodes.tools.loopback_http import serve

HTTP = "@n8n/n8n-nodes-langchain.toolHttpRequest"


@pytest.fixture
def base() -> Iterator[str]:
    with serve() as url:
        yield url


def placeholder_params(base: str) -> dict:
    return {
        "toolDescription": "Look up an order",
        "method": "POST",
        "url": base + "/orders/{order_id}",
        "sendQuery": True,
        "parametersQuery": {"values": [
            {"name": "verbose", "valueProvider": "fieldValue", "value": "{detail}"},
            {"name": "lang", "valueProvider": "modelOptional"},
        ]},
        "sendHeaders": True,
        "parametersHeaders": {"values": [{"name": "X-Trace", "valueProvider": "fieldValue", "value": "t-{order_id}"}]},
        "sendBody": True,
        "specifyBody": "json",
        "jsonBody": '{"count": "{count}", "note": "about {order_id}"}',
        "placeholderDefinitions": {"values": [
            {"name": "order_id", "description": "The order number", "type": "string"},
            {"name": "count", "description": "How many", "type": "number"},
            {"name": "detail", "description": "yes or no", "type": "string"},
        ]},
    }


def test_placeholders_become_the_tool_schema() -> None:
    schema = tool_schema(HttpToolParams.model_validate(placeholder_params("http://h")), "HTTP")
    assert schema["properties"]["order_id"] == {"type": "string", "description": "The order number"}
    assert schema["properties"]["count"]["type"] == "number"
    assert set(schema["properties"]) == {"order_id", "count", "detail", "lang"}
    assert set(schema["required"]) == {"order_id", "count", "detail"}


def test_defined_but_unused_placeholder_is_named() -> None:
    params = HttpToolParams.model_validate({"url": "http://h/x", "placeholderDefinitions": {"values": [{"name": "ghost"}]}})
    with pytest.raises(NodeOperationError, match="Misconfigured placeholder 'ghost'"):
        tool_schema(params, "HTTP")


async def test_placeholders_are_filled_from_the_model_args(engine: Engine, base: str) -> None:
    args = {"order_id": "A/7 b", "count": 3, "detail": "yes", "lang": "de"}
    state = await run_tool_once(engine, HTTP, placeholder_params(base), args, name="Orders")
    echo = json.loads(observation(state))
    assert echo["method"] == "POST"
    assert echo["path"] == "/orders/A%2F7%20b"  # a value cannot escape its path segment
    assert echo["query"] == {"verbose": "yes", "lang": "de"}
    assert echo["headers"]["x-trace"] == "t-A/7 b"
    assert echo["body"] == {"count": 3, "note": "about A/7 b"}


async def test_missing_required_placeholder_never_reaches_the_server(engine: Engine, base: str) -> None:
    state = await run_tool_once(engine, HTTP, placeholder_params(base), {"order_id": "1"}, name="Orders")
    text = observation(state)
    assert text.startswith("Error:") and "count" in text


async def test_timeout_is_a_tool_error(engine: Engine, base: str) -> None:
    params = {"url": base + "/slow", "options": {"timeout": 200}}
    state = await run_tool_once(engine, HTTP, params, {})
    assert observation(state) == f"Error: The request to {base}/slow timed out after 0.2 s"
    assert state.run_data["Tool"][0].execution_status == "error"


async def test_non_2xx_gives_status_and_short_body(engine: Engine, base: str) -> None:
    state = await run_tool_once(engine, HTTP, {"url": base + "/status/404"}, {})
    text = observation(state)
    assert text.startswith("Error: The server answered 404 Not Found: the thing you asked for is not here")
    assert len(text) < 400


async def test_huge_body_is_cut_before_the_model_sees_it(engine: Engine, base: str) -> None:
    params = {"url": base + "/huge", "options": {"maxResponseLength": 1000}}
    state = await run_tool_once(engine, HTTP, params, {})
    text = observation(state)
    assert text.startswith("y" * 1000)
    assert text.endswith("[response cut: only the first 1000 characters are shown]")
    assert len(text) < 1100


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "{target}"])
async def test_other_schemes_are_refused(engine: Engine, url: str) -> None:
    args = {"target": "file:///etc/passwd"} if url == "{target}" else {}
    state = await run_tool_once(engine, HTTP, {"url": url}, args)
    text = observation(state)
    assert text.startswith("Error: Cannot build the request: only http and https URLs are allowed")
    assert "root:" not in text


async def test_tool_without_url_fails_the_agent_clearly(engine: Engine) -> None:
    wf = agent_workflow([{"text": "ok"}], tools=[("Fetch", HTTP, {})])
    state = await engine.run(wf, items=[{"json": {"chatInput": "hi"}}])
    assert state.status == "error"
    assert state.error.message == 'Node "Fetch" has no URL'
