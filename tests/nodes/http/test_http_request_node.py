"""The HTTP Request node against a loopback REST API (tests/peers/rest_api.py): what parity with
n8n does not cover — refusals by name, credentials from a real credentials file, the proxy
option, pagination's guards, the node as an agent's tool with `$fromAI()`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from engine.credentials import FileCredentialStore
from engine.executor import Engine
from engine.registry import Registry
from engine.run_data import ExecutionState
from engine.services import Services
from engine.workflow import parse_workflow
from tests.builders import MANUAL_TRIGGER, agent_workflow, link, node, tool_call
from tests.peers.rest_api import RestPeer
from tests.tls_certs import write_self_signed

HTTP = "n8n-nodes-base.httpRequest"
HTTP_TOOL = "n8n-nodes-base.httpRequestTool"
SECRET = "s3cr3t-value-123"


@pytest.fixture
def peer() -> Iterator[RestPeer]:
    with RestPeer() as server:
        yield server


def run(registry: Registry, params: dict[str, Any], *, version: float = 4.2, items: list[dict] | None = None,
        credentials: dict[str, Any] | None = None, store: FileCredentialStore | None = None) -> ExecutionState:
    nodes = [node("Start", MANUAL_TRIGGER), node("HTTP", HTTP, params, typeVersion=version)]
    if credentials:
        nodes[1]["credentials"] = credentials
    connections: dict[str, Any] = {}
    link(connections, "Start", "HTTP")
    workflow = parse_workflow({"name": "http", "nodes": nodes, "connections": connections})
    engine = Engine(registry, Services(credentials=store) if store is not None else Services())
    return asyncio.run(engine.run(workflow, items=items or [{"json": {}}], start="HTTP") if items else
                       engine.run(workflow, mode="cli"))


def output(state: ExecutionState) -> list[Any]:
    assert state.status == "success", state.error
    return [item["json"] for item in state.run_data["HTTP"][0].data["main"][0]]


@pytest.mark.parametrize("version", [1, 2])
def test_versions_before_3_are_refused_by_name(registry: Registry, peer: RestPeer, version: int) -> None:
    state = run(registry, {"url": peer.url + "/api/echo"}, version=version)
    assert state.status == "error" and state.error.node == "HTTP"
    assert state.error.message == f'HTTP Request "HTTP" has typeVersion {version}, which mini-n8n does not run'
    assert not peer.requests


@pytest.mark.parametrize(("params", "what"), [
    ({"method": "POST", "sendBody": True, "contentType": "binaryData", "inputDataFieldName": "data"}, "sending a binary file"),
    ({"method": "POST", "sendBody": True, "contentType": "multipart-form-data", "bodyParameters": {"parameters": [
        {"parameterType": "formBinaryData", "name": "file", "inputDataFieldName": "data"}]}}, "sending a binary file"),
    ({"options": {"response": {"response": {"responseFormat": "file"}}}}, "the File response format"),
    ({"provideSslCertificates": True}, "SSL client certificates"),
])
def test_binary_data_and_certificates_are_refused_not_skipped(registry: Registry, peer: RestPeer, params: dict, what: str) -> None:
    state = run(registry, {"url": peer.url + "/api/echo", **params})
    assert state.status == "error"
    assert state.error.message.startswith(f'HTTP Request "HTTP": {what}') and "not supported by mini-n8n" in state.error.message
    assert not peer.requests


def test_a_file_answer_is_refused_when_autodetected(registry: Registry, peer: RestPeer) -> None:
    state = run(registry, {"url": peer.url + "/api/file"})
    assert state.status == "error"
    assert "the response is a file (application/pdf)" in state.error.message


def _store(tmp_path: Path, cred_type: str, data: dict[str, Any]) -> tuple[FileCredentialStore, dict[str, Any]]:
    store = FileCredentialStore(tmp_path / "credentials.json")
    return store, store.save(cred_type, "My cred", data).reference()


@pytest.mark.parametrize(("generic", "data", "where", "want"), [
    ("httpCustomAuth", {"json": json.dumps({"headers": {"X-Custom": SECRET}, "qs": {"sig": "abc"}})}, "headers", ("x-custom", SECRET)),
    ("httpCustomAuth", {"json": json.dumps({"qs": {"sig": SECRET}})}, "query", "sig=" + SECRET),
    ("httpBearerAuth", {"token": SECRET}, "headers", ("authorization", "Bearer " + SECRET)),
])
def test_generic_credentials_reach_the_server(registry: Registry, peer: RestPeer, tmp_path: Path, generic: str,
                                              data: dict, where: str, want: Any) -> None:
    store, ref = _store(tmp_path, generic, data)
    state = run(registry, {"url": peer.url + "/api/echo", "authentication": "genericCredentialType", "genericAuthType": generic},
                credentials=ref, store=store)
    [echo] = output(state)
    if where == "headers":
        assert echo["headers"][want[0]] == want[1]
    else:
        assert want in echo["query"]


def test_a_missing_credential_is_named(registry: Registry, peer: RestPeer, tmp_path: Path) -> None:
    state = run(registry, {"url": peer.url + "/api/echo", "authentication": "genericCredentialType",
                           "genericAuthType": "httpHeaderAuth"}, store=FileCredentialStore(tmp_path / "c.json"))
    assert state.status == "error"
    assert state.error.message == 'HTTP Request "HTTP" needs a httpHeaderAuth credential, and none is stored'


def test_oauth_is_refused_by_name(registry: Registry, peer: RestPeer, tmp_path: Path) -> None:
    state = run(registry, {"url": peer.url + "/api/echo", "authentication": "genericCredentialType",
                           "genericAuthType": "oAuth2Api"}, store=FileCredentialStore(tmp_path / "c.json"))
    assert state.status == "error"
    assert state.error.message == 'HTTP Request "HTTP" uses oAuth2Api, which mini-n8n does not support'


def test_the_proxy_option_sends_the_request_through_the_proxy(registry: Registry, peer: RestPeer) -> None:
    [echo] = output(run(registry, {"url": "http://api.example.invalid/api/echo?a=1", "options": {"proxy": peer.url}}))
    assert peer.requests[0].path == "http://api.example.invalid/api/echo?a=1"  # the absolute form a proxy gets
    assert echo["path"] == "/api/echo" and echo["query"] == "a=1"


def test_one_request_per_item_in_item_order_paired_with_its_item(registry: Registry, peer: RestPeer) -> None:
    items = [{"json": {"ms": 300}}, {"json": {"ms": 0}}, {"json": {"ms": 100}}]
    state = run(registry, {"url": "=" + peer.url + "/api/echo?ms={{ $json.ms }}"}, items=items)
    assert state.status == "success", state.error
    main = state.run_data["HTTP"][0].data["main"][0]
    assert [item["json"]["query"] for item in main] == ["ms=300", "ms=0", "ms=100"]
    assert [item["pairedItem"] for item in main] == [{"item": 0}, {"item": 1}, {"item": 2}]


def test_pagination_stops_when_the_answer_repeats(registry: Registry, peer: RestPeer) -> None:
    state = run(registry, {"url": peer.url + "/api/items", "options": {"pagination": {"pagination": {
        "parameters": {"parameters": [{"type": "headers", "name": "X-Page", "value": "={{ $pageCount }}"}]}}}}})
    assert state.status == "error"
    assert state.error.message == "The returned response was identical 5x, so requests got stopped"
    assert state.error.description == 'Check if "Pagination Completed When" has been configured correctly.'
    assert len(peer.requests) == 5  # the first sets the length, the second the hash, 3 more repeat it


def test_pagination_names_a_next_url_that_is_not_one(registry: Registry, peer: RestPeer) -> None:
    state = run(registry, {"url": peer.url + "/api/items", "options": {"pagination": {"pagination": {
        "paginationMode": "responseContainsNextURL", "nextURL": "={{ $pageCount ? 'page two' : undefined }}",
        "paginationCompleteWhen": "other", "completeExpression": "={{ false }}"}}}})
    assert state.status == "error"
    assert state.error.message == "'page two' is not a valid URL."
    assert state.error.description == 'Make sure the "Next URL" parameter evaluates to a valid URL.'


def test_pagination_failure_status_while_continuing_is_an_api_error(registry: Registry, peer: RestPeer) -> None:
    state = run(registry, {"url": peer.url + "/api/status/404", "options": {"pagination": {"pagination": {
        "parameters": {"parameters": [{"name": "page", "value": "={{ $pageCount + 1 }}"}]},
        "paginationCompleteWhen": "receiveSpecificStatusCodes", "statusCodesWhenComplete": "410"}}}})
    assert state.status == "error"
    assert state.error.message == "The resource you are requesting could not be found"
    assert state.error.description == "No item with that id"


def test_the_http_request_tool_fills_from_ai_arguments(registry: Registry, peer: RestPeer) -> None:
    params = {"toolDescription": "Reads an order", "method": "POST",
              "url": "=" + peer.url + "/api/echo/{{ $fromAI('order_id', 'The order number', 'number') }}",
              "sendBody": True, "bodyParameters": {"parameters": [{"name": "note", "value": "={{ $fromAI('note') }}"}]}}
    workflow = agent_workflow([{"text": "", "toolCalls": [tool_call("Orders", {"order_id": 42, "note": "rush"}, "call_1")]},
                               {"text": "done"}], tools=[("Orders", HTTP_TOOL, params)],
                              agent_options={"returnIntermediateSteps": True})
    state = asyncio.run(Engine(registry).run(workflow, items=[{"json": {"chatInput": "go", "sessionId": "s"}}]))
    assert state.status == "success", state.error
    step = state.result[0]["json"]["intermediateSteps"][0]
    [echo] = json.loads(step["observation"])
    assert echo["path"] == "/api/echo/42" and json.loads(echo["body"]) == {"note": "rush"}
    assert peer.requests[0].method == "POST"


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[str]:
    """An https server on loopback with a self-signed certificate no store trusts."""
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    write_self_signed(tmp_path)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"secure": true}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_untrusted_certificate_fails_unless_ssl_issues_are_ignored(registry: Registry, tls_server: str) -> None:
    refused = run(registry, {"url": tls_server + "/x"})
    assert refused.status == "error"
    assert refused.error.message == "SSL Issue: consider using the 'Ignore SSL issues' option"
    assert "certificate" in refused.error.description
    assert output(run(registry, {"url": tls_server + "/x", "options": {"allowUnauthorizedCerts": True}})) == [{"secure": True}]


@pytest.mark.parametrize("options", [{}, {"allowUnauthorizedCerts": True}])
def test_ssrf_protection_refuses_loopback(registry: Registry, peer: RestPeer, monkeypatch: pytest.MonkeyPatch,
                                          options: dict) -> None:
    monkeypatch.setenv("N8N_SSRF_PROTECTION_ENABLED", "true")
    state = run(registry, {"url": peer.url + "/api/echo", "options": options})
    assert state.status == "error" and state.error.message == "The request was blocked because it resolves to a restricted IP address"
    assert not peer.requests


def test_a_proxy_is_refused_while_ssrf_protection_is_on(registry: Registry, peer: RestPeer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("N8N_SSRF_PROTECTION_ENABLED", "true")
    state = run(registry, {"url": "http://api.example.invalid/x", "options": {"proxy": peer.url}})
    assert state.status == "error"
    assert state.error.message == 'HTTP Request "HTTP": the Proxy option cannot be used with SSRF protection on'
    assert not peer.requests
