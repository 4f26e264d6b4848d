"""HTTP Request Tool against a loopback server: placeholders, timeout, non-2xx, cut bodies, schemes."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Iterator

import pytest

from engine.abort import AbortSignal
from engine.errors import NodeOperationError
from engine.executor import Engine
from nodes.tools.http_request import HttpToolParams, tool_schema
from nodes.tools.ssrf_guard import SsrfBlocked, SsrfPolicy, _networks
from tests.builders import agent_workflow, tool_call
from tests.nodes.tools.agent_runs import observation, run_tool_once
from tests.nodes.tools.loopback_http import DRIPPING, serve

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
    assert state.error.description == 'Node "Fetch" has no URL'


@pytest.mark.parametrize("path", ["/drip", "/endless"])
async def test_deadline_ends_a_body_that_never_ends(engine: Engine, base: str, path: str) -> None:
    """A body trickling a byte every 0.2 s, or streaming forever, ends at the Timeout."""
    params = {"url": base + path, "options": {"timeout": 800, "maxResponseLength": 10**9}}
    started = time.perf_counter()
    state = await asyncio.wait_for(run_tool_once(engine, HTTP, params, {}), 15)
    assert time.perf_counter() - started < 5
    assert observation(state) == f"Error: The request to {base}{path} timed out after 0.8 s"
    run = state.run_data["Tool"][0]
    assert run.error.node == "Tool" and "deadline of the whole call" in run.error.description


async def test_a_50_mb_body_is_cut_by_the_byte_cap(engine: Engine, base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINI_N8N_MAX_REPLY_BYTES", "100000")
    params = {"url": base + "/big", "options": {"maxResponseLength": 10**9}}
    state = await asyncio.wait_for(run_tool_once(engine, HTTP, params, {}), 15)
    text = observation(state)
    assert text.startswith("y" * 100_000)
    assert text.endswith("[response cut: only the first 100000 characters are shown ($MINI_N8N_MAX_REPLY_BYTES caps the bytes read)]")


# ----- n8n's SSRF protection ---------------------------------------------------------------------

@pytest.fixture
def ssrf_on(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("N8N_SSRF_BLOCKED_IP_RANGES", "N8N_SSRF_ALLOWED_IP_RANGES", "N8N_SSRF_ALLOWED_HOSTNAMES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("N8N_SSRF_PROTECTION_ENABLED", "true")
    return monkeypatch


async def test_private_addresses_are_allowed_by_default_as_in_n8n(engine: Engine, base: str, monkeypatch) -> None:
    monkeypatch.delenv("N8N_SSRF_PROTECTION_ENABLED", raising=False)
    state = await run_tool_once(engine, HTTP, {"url": base + "/x"}, {})
    assert json.loads(observation(state))["path"] == "/x"


async def test_protection_refuses_loopback(engine: Engine, base: str, ssrf_on) -> None:
    state = await run_tool_once(engine, HTTP, {"url": base + "/x"}, {})
    assert observation(state) == "Error: The request was blocked because it resolves to a restricted IP address"
    description = state.run_data["Tool"][0].error.description
    assert "The target 127.0.0.1 is not allowed" in description and "N8N_SSRF_ALLOWED_HOSTNAMES" in description


async def test_a_name_is_checked_on_the_address_it_resolves_to(engine: Engine, base: str, ssrf_on) -> None:
    url = base.replace("127.0.0.1", "localhost") + "/x"
    state = await run_tool_once(engine, HTTP, {"url": url}, {})
    assert observation(state).startswith("Error: The request was blocked")
    assert "The target 'localhost' (127.0.0.1) is not allowed" in state.run_data["Tool"][0].error.description


async def test_a_redirect_to_a_private_address_is_refused(engine: Engine, base: str, ssrf_on) -> None:
    ssrf_on.setenv("N8N_SSRF_ALLOWED_HOSTNAMES", "localhost")
    start = base.replace("127.0.0.1", "localhost")
    state = await run_tool_once(engine, HTTP, {"url": f"{start}/redirect?to={base}/secret"}, {})
    assert observation(state).startswith("Error: The request was blocked")
    ssrf_on.setenv("N8N_SSRF_ALLOWED_HOSTNAMES", "*host")  # a wildcard pattern
    state = await run_tool_once(engine, HTTP, {"url": f"{start}/redirect?to={start}/fine"}, {})
    assert json.loads(observation(state))["path"] == "/fine"


async def test_allowed_ranges_take_precedence(engine: Engine, base: str, ssrf_on) -> None:
    ssrf_on.setenv("N8N_SSRF_ALLOWED_IP_RANGES", "127.0.0.0/8")
    state = await run_tool_once(engine, HTTP, {"url": base + "/x"}, {})
    assert json.loads(observation(state))["path"] == "/x"


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
    "::1", "fc00::1", "fd12::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254",
])
def test_default_blocked_ranges(address: str) -> None:
    policy = SsrfPolicy(blocked=tuple(_networks("N8N_SSRF_BLOCKED_IP_RANGES", "default")))
    with pytest.raises(SsrfBlocked):
        policy.check("host", [address])


@pytest.mark.parametrize("address", ["8.8.8.8", "172.32.0.1", "2606:4700::1111", "192.169.0.1"])
def test_public_addresses_pass(address: str) -> None:
    SsrfPolicy(blocked=tuple(_networks("N8N_SSRF_BLOCKED_IP_RANGES", "default"))).check("host", [address])


def test_custom_ranges_and_a_bad_entry(caplog: pytest.LogCaptureFixture) -> None:
    networks = _networks("N8N_SSRF_BLOCKED_IP_RANGES", "default, 100.0.0.0/8, not-a-range")
    policy = SsrfPolicy(blocked=tuple(networks))
    with pytest.raises(SsrfBlocked):
        policy.check("h", ["100.1.1.1"])
    assert "Invalid value 'not-a-range' in N8N_SSRF_BLOCKED_IP_RANGES" in caplog.text


async def test_stop_ends_a_request_at_once(engine: Engine, base: str) -> None:
    DRIPPING.clear()
    wf = agent_workflow([{"text": "", "toolCalls": [tool_call("Tool", {}, "call_1")]}, {"text": "done"}],
                        tools=[("Tool", HTTP, {"url": base + "/drip", "options": {"timeout": 60000, "maxResponseLength": 10**9}})])
    signal = AbortSignal()
    task = asyncio.create_task(engine.create(wf, items=[{"json": {"chatInput": "go"}}], signal=signal).run())
    assert await asyncio.get_running_loop().run_in_executor(None, DRIPPING.wait, 10)
    started = time.perf_counter()
    signal.abort()
    state = await asyncio.wait_for(task, 5)
    assert state.status == "cancelled"
    assert time.perf_counter() - started < 2


@pytest.mark.parametrize(("url", "shown"), [
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),  # cloud metadata: refused before any packet
    ("http://[::1]:9/x", "::1"),
    ("http://[::ffff:127.0.0.1]:9/x", "::ffff:127.0.0.1"),  # IPv4 written as IPv6
])
async def test_literal_private_addresses_are_refused_before_connecting(engine: Engine, ssrf_on, url: str, shown: str) -> None:
    state = await asyncio.wait_for(run_tool_once(engine, HTTP, {"url": url, "options": {"timeout": 3000}}, {}), 10)
    assert observation(state) == "Error: The request was blocked because it resolves to a restricted IP address"
    assert f"The target {shown} is not allowed" in state.run_data["Tool"][0].error.description


async def test_refused_connection_and_unknown_host_say_so(engine: Engine) -> None:
    with serve() as url:
        pass  # the port is free again: nothing listens there
    state = await run_tool_once(engine, HTTP, {"url": url + "/x"}, {})
    assert observation(state) == f"Error: The request to {url}/x failed: Connection refused"
    state = await run_tool_once(engine, HTTP, {"url": "http://no-such-host.invalid/x", "options": {"timeout": 5000}}, {})
    text = observation(state)
    assert text.startswith("Error: The request to http://no-such-host.invalid/x failed: ") and "timed out" not in text


async def test_v1_runs_as_v1_1_with_a_note_saying_how_n8n_differs(engine: Engine, base: str) -> None:
    wf = agent_workflow(
        [{"text": "", "toolCalls": [tool_call("Orders", {"order_id": "7", "count": 1, "detail": "no"}, "call_1")]},
         {"text": "done"}],
        tools=[("Orders", HTTP, placeholder_params(base))], agent_options={"returnIntermediateSteps": True})
    wf.node("Orders").typeVersion = 1
    state = await engine.run(wf, items=[{"json": {"chatInput": "go", "sessionId": "s"}}])
    assert json.loads(observation(state))["path"] == "/orders/7"
    noted = [n for run in state.run_data["Orders"] for n in run.metadata.get("notes") or ()]
    assert noted and all("v1 gives the model one text input" in n for n in noted)
