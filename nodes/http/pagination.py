"""n8n's pagination of the HTTP Request node: the request again with a parameter updated or the
next URL the answer gives, until *Pagination Complete When* holds or *Max Pages* is reached.
Its expressions read `$response` (body, headers, statusCode), `$pageCount` and `$request`."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import hashlib
import json
import re
from typing import Any

from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.expressions import evaluate
from nodes.core.set_values import MISSING

from .build import HttpCall
from .encode import json_text
from .shape import UNDEFINED, api_error, axios_body
from .transport import Reply, send

DEFAULTS: dict[str, Any] = {
    "paginationMode": "updateAParameterInEachRequest", "nextURL": "",
    "parameters": {"parameters": [{"type": "qs", "name": "", "value": ""}]},
    "paginationCompleteWhen": "responseIsEmpty", "statusCodesWhenComplete": "", "completeExpression": "",
    "limitPagesFetched": False, "maxRequests": 100, "requestInterval": 0,
}
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S")


@dataclasses.dataclass
class Pagination:
    """The pagination settings of the node, expressions kept as written."""

    mode: str
    request: dict[str, Any]
    continue_expression: str
    max_requests: Any = None
    request_interval: Any = 0


def pagination_of(ctx: NodeContext) -> Pagination | None:
    """The node's pagination (read raw from item 0, as n8n reads it), or None when off."""
    options = ctx.node.parameters.get("options") or {}
    raw = (options.get("pagination") or {}).get("pagination") if isinstance(options, dict) else None
    if not isinstance(raw, dict):
        return None
    settings = {**DEFAULTS, **raw}
    mode = settings["paginationMode"]
    if mode == "off":
        return None
    node = ctx.node.name
    complete = settings["paginationCompleteWhen"]
    if complete == "receiveSpecificStatusCodes":
        codes = []
        for part in str(settings["statusCodesWhenComplete"]).split(","):
            match = re.match(r"\s*[+-]?\d+", part)
            codes.append(int(match.group()) if match else None)
        listed = json.dumps(codes).replace(" ", "").replace("NaN", "null")
        continue_expression = f"={{{{ !{listed}.includes($response.statusCode) }}}}"
    elif complete == "responseIsEmpty":
        continue_expression = "={{ Array.isArray($response.body) ? $response.body.length : !!$response.body }}"
    else:
        expression = str(settings["completeExpression"] or "")
        if not expression or expression[0] != "=":
            raise NodeOperationError("Invalid or empty Complete Expression", node=node)
        continue_expression = f"={{{{ !({expression.strip()[3:-2]}) }}}}"
    request: dict[str, Any] = {}
    if mode == "updateAParameterInEachRequest":
        parameters = (settings["parameters"] or {}).get("parameters") or []
        if len(parameters) == 1 and parameters[0].get("name", "") == "" and parameters[0].get("value", "") == "":
            raise NodeOperationError("At least one entry with 'Name' and 'Value' filled must be included in 'Parameters' "
                                     "to use 'Update a Parameter in Each Request' mode ", node=node)
        for index, parameter in enumerate(parameters, start=1):
            name = parameter.get("name", "")
            if name == "":
                raise NodeOperationError(f"Parameter name must be set for parameter [{index}] in pagination settings", node=node)
            kind = parameter.get("type", "qs")
            if kind not in ("body", "headers", "qs"):
                raise NodeOperationError(f"Parameter type must be one of: body, headers, qs for parameter [{index}] in "
                                         "pagination settings", node=node)
            value = parameter.get("value", "")
            if value == "":
                raise NodeOperationError(f"Some value must be provided for parameter [{index}] in pagination settings, "
                                         "omitting it will result in an infinite loop", node=node)
            request.setdefault(kind, {})[name] = value
    elif mode == "responseContainsNextURL":
        request["url"] = settings["nextURL"]
    return Pagination(mode=mode, request=request, continue_expression=continue_expression,
                      max_requests=settings["maxRequests"] if settings["limitPagesFetched"] else None,
                      request_interval=settings["requestInterval"])


def _truthy(value: Any) -> bool:
    if value is MISSING or value is None or value is False or value == "" or (isinstance(value, float) and value != value):
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0
    return True


def _merge(target: Any, source: Any) -> Any:
    """lodash's merge: nested objects merged, undefined values skipped."""
    if isinstance(target, dict) and isinstance(source, dict):
        out = dict(target)
        for key, value in source.items():
            if value is MISSING:
                continue
            out[key] = _merge(out.get(key), value) if isinstance(value, dict) else value
        return out
    return source


class _Resolver:
    def __init__(self, ctx: NodeContext, item_index: int, call: HttpCall, version: float) -> None:
        self.ctx, self.item_index = ctx, item_index
        self.keys: dict[str, Any] = {
            "$request": {"method": call.method, "uri": call.url, "qs": call.qs, "headers": call.headers,
                         "body": call.body if call.body is not None else call.form},
            "$response": {}, "$version": version, "$pageCount": 0,
        }

    def value(self, raw: Any, path: str) -> Any:
        if isinstance(raw, dict):
            return {k: self.value(v, f"{path}.{k}") for k, v in raw.items()}
        if isinstance(raw, list):
            return [self.value(v, f"{path}[{i}]") for i, v in enumerate(raw)]
        if isinstance(raw, str) and raw.startswith("="):
            scope = dataclasses.replace(self.ctx.expression_scope(), additional=copy.deepcopy(self.keys), _meta=None)
            return evaluate(raw, scope=scope, item_index=self.item_index, parameter=path, undefined=MISSING)
        return raw


def _with_page(call: HttpCall, data: dict[str, Any]) -> HttpCall:
    page = dataclasses.replace(call)
    url = data.get("url", MISSING)
    if url is not MISSING:
        page.url = url  # validated by the caller
    if isinstance(data.get("qs"), dict):
        page.qs = _merge(call.qs or {}, data["qs"])
    if isinstance(data.get("headers"), dict):
        page.headers = _merge(call.headers, data["headers"])
    if isinstance(data.get("body"), dict):
        if call.form is not None:
            page.form = _merge(call.form, data["body"])
        elif call.form_data is not None:
            page.form_data = list(_merge(dict(call.form_data), data["body"]).items())
        else:
            page.body = _merge(call.body if isinstance(call.body, dict) else {}, data["body"])
    return page


def _page_body(call: HttpCall, reply: Reply) -> Any:
    """The body `$response` holds: JSON parsed where the answer says JSON (else {}), text otherwise."""
    if call.json_mode:
        body = axios_body(call, reply)
        return MISSING if body is UNDEFINED else body
    text = reply.text()
    if "application/json" in reply.content_type:
        try:
            return json.loads(text)
        except ValueError:
            return {}
    return text


async def paginate(ctx: NodeContext, call: HttpCall, pagination: Pagination, item_index: int,
                   version: float) -> list[tuple[Reply, Any]]:
    """Every page's answer and its read body, as n8n's requestWithAuthenticationPaginated fetches them."""
    node = ctx.node.name
    resolver = _Resolver(ctx, item_index, call, version)
    pages: list[tuple[Reply, Any]] = []
    identical, previous_length, previous_hash = 0, 0, ""
    while True:
        data = resolver.value(pagination.request, "options.pagination.pagination")
        page = _with_page(call, data)
        if not isinstance(page.url, str) or not _URL.match(page.url):
            shown = "undefined" if data.get("url", MISSING) is MISSING else "null" if data.get("url") is None else data.get("url")
            raise NodeOperationError(f"'{shown}' is not a valid URL.", node=node, description=(
                f'Make sure the "{"Next URL" if pagination.mode == "responseContainsNextURL" else "URL"}" parameter '
                "evaluates to a valid URL."))
        reply = await send(page, node)
        body = _page_body(call, reply)
        length = int(reply.headers.get("content-length") or 0) if str(reply.headers.get("content-length") or "0").isdigit() else 0
        if previous_length == length:
            etag = reply.headers.get("etag")
            digest = etag or hashlib.md5((body if isinstance(body, str) else json_text(None if body is MISSING else body)).encode()).hexdigest()
            if digest == previous_hash:
                identical += 1
                if identical > 2:
                    raise NodeOperationError("The returned response was identical 5x, so requests got stopped", node=node,
                                             description='Check if "Pagination Completed When" has been configured correctly.')
            else:
                identical = 0
            previous_hash = digest
        else:
            identical = 0
        previous_length = length
        pages.append((reply, UNDEFINED if body is MISSING else body))
        resolver.keys["$response"] = {"body": None if body is MISSING else body, "headers": reply.headers,
                                      "statusCode": reply.status}
        resolver.keys["$pageCount"] += 1
        max_requests = resolver.value(pagination.max_requests, "options.pagination.pagination.maxRequests")
        if _truthy(max_requests) and resolver.keys["$pageCount"] >= float(max_requests):
            break
        if not _truthy(resolver.value(pagination.continue_expression, "options.pagination.pagination")):
            break
        interval = resolver.value(pagination.request_interval, "options.pagination.pagination.requestInterval")
        if _truthy(interval):
            await asyncio.sleep(float(interval) / 1000.0)
        if not 200 <= reply.status < 300:
            text = body if isinstance(body, str) else json_text(body) if body is not MISSING else "undefined"
            raise api_error(node, reply.status, text, f'{reply.status} - "{text}"')
    return pages
