"""The request one item makes, built from the HTTP Request node's parameters as n8n's
HttpRequestV3 builds it (typeVersion 3–4.3): URL, query, headers, body, credentials, options."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import httpx

from engine.context import NodeContext
from engine.errors import NodeOperationError
from nodes.core.set_values import MISSING
from nodes.flow.params import parameter, plain, resolve
from nodes.tools.http_auth import RequestAuth, request_auth

from .encode import js_string

LABEL = "HTTP Request"
BODY_METHODS = ("PATCH", "POST", "PUT", "GET")
ACCEPT = {
    "json": "application/json,text/*;q=0.99",
    "text": "application/json,text/html,application/xhtml+xml,application/xml,text/*;q=0.9, */*;q=0.1",
    "other": "application/json,text/html,application/xhtml+xml,application/xml,text/*;q=0.9, image/*;q=0.8, */*;q=0.7",
}
DEFAULT_TIMEOUT_MS = 300_000


@dataclass
class HttpCall:
    """One request as n8n would send it, and how its answer is read."""

    method: str
    url: str
    qs: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, Any] = field(default_factory=dict)
    body: Any = None  # what requestOptions.body holds (JSON-able), None: no body
    form: dict[str, Any] | None = None  # a form-urlencoded body
    form_data: list[tuple[str, Any]] | None = None  # multipart fields
    raw: str | None = None  # a raw body
    auth: httpx.Auth | None = None
    secrets: list[str] = field(default_factory=list)
    timeout_ms: float = DEFAULT_TIMEOUT_MS
    follow_redirects: bool = True
    max_redirects: int = 21
    never_error: bool = False
    response_format: str = "autodetect"
    full_response: bool = False
    output_property: str = "data"
    verify: bool = True
    proxy: str | None = None
    array_format: str | None = None
    json_mode: bool = False  # n8n's requestOptions.json: axios parses any JSON answer


def _refuse(node: str, what: str, hint: str) -> NodeOperationError:
    return NodeOperationError(f'{LABEL} "{node}": {what} is not supported by mini-n8n', node=node, description=hint)


def _json_parameter(node: str, value: Any) -> Any:
    """n8n's check of a JSON text parameter (JSON.parse of its text, whatever its type)."""
    text = js_string(value) if not isinstance(value, str) else value
    try:
        return json.loads(text)
    except ValueError:
        raise NodeOperationError("JSON parameter needs to be valid JSON", node=node) from None


_PATH_PART = re.compile(r"[^.\[\]]+")


def lodash_set(target: dict[str, Any], path: str, value: Any) -> None:
    """lodash's set: `a.b` and `a[0]` make nested objects and arrays."""
    keys = _PATH_PART.findall(path) or [path]
    here: Any = target
    for index, key in enumerate(keys):
        last = index == len(keys) - 1
        slot: Any = int(key) if isinstance(here, list) and key.isdigit() else key
        if last:
            if isinstance(here, list):
                while len(here) <= slot:
                    here.append(None)
            here[slot] = value
            return
        following = keys[index + 1]
        nxt = here[slot] if (isinstance(here, dict) and slot in here) or (isinstance(here, list) and slot < len(here)) else None
        if not isinstance(nxt, (dict, list)):
            nxt = [] if following.isdigit() else {}
            if isinstance(here, list):
                while len(here) <= slot:
                    here.append(None)
            here[slot] = nxt
        here = nxt


def _add_pair(acc: dict[str, Any], name: str, value: Any, version: float) -> None:
    """n8n's query/body key-value reducer: a repeated name overwrites before v4.3, collects after."""
    if version < 4.3 or name not in acc:
        acc[name] = value
    elif isinstance(acc[name], list):
        acc[name].append(value)
    else:
        acc[name] = [acc[name], value]


def _pairs(node: str, entries: Any, version: float, *, skip_unnamed: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        if entry.get("parameterType") == "formBinaryData":
            if entry.get("inputDataFieldName"):
                raise _refuse(node, "sending a binary file (n8n Binary File)", "Pin the node's output, or send the data as text fields")
            continue
        name = entry.get("name", "")
        if skip_unnamed and not name:
            continue
        value = entry.get("value", "")
        _add_pair(out, js_string(name), None if value is MISSING else value, version)
    return out


def options_of(ctx: NodeContext, item_index: int) -> dict[str, Any]:
    """The node's options for one item, expressions resolved, except pagination (read raw)."""
    raw = ctx.node.parameters.get("options") or {}
    if not isinstance(raw, dict):
        return {}
    rest = {k: v for k, v in raw.items() if k != "pagination"}
    return plain(resolve(ctx, rest, item_index, "options"))


def response_options(options: dict[str, Any]) -> dict[str, Any]:
    response = (options.get("response") or {}).get("response") or {}
    return response if isinstance(response, dict) else {}


def build_call(ctx: NodeContext, item_index: int, version: float, auth: RequestAuth) -> HttpCall:
    """The request of input item `item_index`."""
    node = ctx.node.name

    def get(name: str, default: Any) -> Any:
        return plain(parameter(ctx, name, item_index, default))

    url = parameter(ctx, "url", item_index, "")
    if not isinstance(url, str):
        kind = "undefined" if url is MISSING else "null" if url is None else "boolean" if isinstance(url, bool) \
            else "number" if isinstance(url, (int, float)) else "object"
        raise NodeOperationError(f"URL parameter must be a string, got {kind}", node=node)
    if not url.startswith("http://") and not url.startswith("https://"):
        raise NodeOperationError(f'Invalid URL: {url}. URL must start with "http" or "https".', node=node)
    if get("provideSslCertificates", False):
        raise _refuse(node, "SSL client certificates (SSL Certificates)", "Turn SSL Certificates off")

    method = str(get("method", "GET"))
    options = options_of(ctx, item_index)
    response = response_options(options)
    response_format = response.get("responseFormat") or "autodetect"
    if response_format == "file":
        raise _refuse(node, "the File response format (binary data)", "Choose Response Format JSON or Text")
    call = HttpCall(method=method, url=url, response_format=response_format,
                    full_response=bool(response.get("fullResponse")), never_error=bool(response.get("neverError")),
                    output_property=str(response.get("outputPropertyName") or "data"))

    redirect = options.get("redirect")
    if redirect is None:
        call.follow_redirects = version >= 4
    else:
        settings = (redirect or {}).get("redirect") or {}
        call.follow_redirects = bool(settings.get("followRedirects", version >= 4))
        call.max_redirects = int(settings.get("maxRedirects") or 21)
    if options.get("proxy"):
        call.proxy = str(options["proxy"])
    if options.get("timeout"):
        call.timeout_ms = float(options["timeout"])
    call.verify = not options.get("allowUnauthorizedCerts")
    send_query = bool(get("sendQuery", False))
    if send_query and options.get("queryParameterArrays"):
        call.array_format = str(options["queryParameterArrays"])

    # body
    send_body = bool(get("sendBody", False))
    content_type = get("contentType", "json") if send_body else ""
    if send_body:
        specify = get("specifyBody", "keypair")
        if content_type == "binaryData":
            raise _refuse(node, "sending a binary file (n8n Binary File)", "Pin the node's output, or send the body as JSON or text")
        entries = get("bodyParameters", {"parameters": []}) or {}
        entries = entries.get("parameters", []) if isinstance(entries, dict) else []
        if content_type == "multipart-form-data":
            if version >= 4.2:
                fields = []
                for entry in entries:
                    if isinstance(entry, dict) and entry.get("parameterType") == "formBinaryData":
                        _pairs(node, [entry], version)  # refused with a clear error
                        continue
                    if isinstance(entry, dict):
                        fields.append((js_string(entry.get("name", "")), entry.get("value", "")))
                call.form_data = fields
            else:
                call.form_data = list(_pairs(node, entries, version).items())
        elif specify == "keypair":
            if content_type == "json" and version >= 4:
                body: dict[str, Any] = {}
                for entry in entries:
                    if isinstance(entry, dict):
                        lodash_set(body, js_string(entry.get("name", "")), entry.get("value", ""))
                call.body = body
            else:
                call.body = _pairs(node, entries, version)
        elif specify == "json":
            json_body = parameter(ctx, "jsonBody", item_index, "")
            call.body = json_body if isinstance(json_body, (dict, list)) else _json_parameter(node, json_body)
        elif specify == "string":
            call.body = dict(parse_qsl(str(get("body", "")), keep_blank_values=True))
        if method in BODY_METHODS:
            if content_type == "form-urlencoded":
                call.form, call.body = (call.body if isinstance(call.body, dict) else {}), None
            elif content_type == "raw":
                call.raw, call.body = js_string(get("body", "")), None
        if content_type == "multipart-form-data" and method not in BODY_METHODS:
            call.body, call.form_data = dict(call.form_data or []), None

    # query
    if send_query:
        if get("specifyQuery", "keypair") == "json":
            call.qs = _json_parameter(node, parameter(ctx, "jsonQuery", item_index, ""))
        else:
            entries = get("queryParameters", {"parameters": []}) or {}
            call.qs = _pairs(node, entries.get("parameters", []) if isinstance(entries, dict) else [], version)

    # headers
    if bool(get("sendHeaders", False)):
        if get("specifyHeaders", "keypair") == "json":
            extra = _json_parameter(node, parameter(ctx, "jsonHeaders", item_index, ""))
            extra = extra if isinstance(extra, dict) else {}
        else:
            entries = get("headerParameters", {"parameters": []}) or {}
            extra = _pairs(node, entries.get("parameters", []) if isinstance(entries, dict) else [], version, skip_unnamed=True)
        lowercase = options.get("lowercaseHeaders")
        if lowercase is None or lowercase:
            extra = {k.lower(): v for k, v in extra.items()}
        call.headers.update(extra)

    call.json_mode = response_format not in ("autodetect", "file") and content_type != "raw"
    if content_type == "raw":
        call.headers["content-type"] = js_string(get("rawContentType", ""))

    # credentials
    call.headers.update(auth.headers)
    if auth.query:
        call.qs = {**(call.qs or {}), **auth.query}
    if auth.body:
        call.body = {**(call.body if isinstance(call.body, dict) else {}), **auth.body}
    call.auth = auth.auth
    call.secrets = auth.secrets

    if "accept" not in call.headers:
        call.headers["accept"] = ACCEPT.get(response_format, ACCEPT["other"])
    return call


def node_auth(ctx: NodeContext) -> RequestAuth:
    """What the node's authentication adds to every request (read once, as n8n reads it from item 0)."""
    authentication = plain(parameter(ctx, "authentication", 0, "none")) or "none"
    generic = plain(parameter(ctx, "genericAuthType", 0, "")) if authentication == "genericCredentialType" else ""
    predefined = plain(parameter(ctx, "nodeCredentialType", 0, "")) if authentication == "predefinedCredentialType" else ""
    return request_auth(str(authentication), str(generic or ""), str(predefined or ""), ctx.services,
                        ctx.node.credentials, ctx.node.name, label=LABEL, digest_credential="httpDigestAuth")
