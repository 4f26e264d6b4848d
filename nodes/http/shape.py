"""From an answer to output items, as n8n's HTTP Request node makes them (response format,
full response, never error), and a non-2xx answer as the error n8n's NodeApiError makes of it."""

from __future__ import annotations

import json
from typing import Any

from engine.errors import NodeOperationError
from engine.run_data import Item

from .build import HttpCall
from .encode import json_text
from .transport import Reply

STATUS_MESSAGES = {
    "400": "Bad request - please check your parameters",
    "401": "Authorization failed - please check your credentials",
    "402": "Payment required - perhaps check your payment details?",
    "403": "Forbidden - perhaps check your credentials?",
    "404": "The resource you are requesting could not be found",
    "405": "Method not allowed - please check you are using the right HTTP method",
    "429": "The service is receiving too many requests from you",
    "500": "The service was not able to process your request",
    "502": "Bad gateway - the service failed to handle your request",
    "503": "Service unavailable - try again later or consider setting this node to retry automatically (in the node settings)",
    "504": "Gateway timed out - perhaps try again later?",
}
ERROR_MESSAGE_KEYS = (
    "cause", "error", "message", "Message", "msg", "messages", "description", "reason", "detail", "details", "errors",
    "errorMessage", "errorMessages", "ErrorMessage", "error_message", "_error_message", "errorDescription",
    "error_description", "error_summary", "error_info", "title", "text", "field", "err", "type",
)
# content types n8n's autodetection reads as a file
BINARY_TYPES = (
    "image/", "audio/", "video/", "application/octet-stream", "application/gzip", "application/zip",
    "application/vnd.rar", "application/epub+zip", "application/x-bzip", "application/x-bzip2", "application/x-cdf",
    "application/vnd.amazon.ebook", "application/msword",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "application/vnd.ms-fontobject",
    "application/vnd.oasis.opendocument.presentation", "application/pdf", "application/x-tar", "application/vnd.visio",
    "application/vnd.ms-excel", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/x-7z-compressed",
)
UNDEFINED = object()  # a body axios leaves undefined (an empty answer)


def status_message(status: int) -> str:
    code = str(status)
    if code in STATUS_MESSAGES:
        return STATUS_MESSAGES[code]
    if code.startswith("4"):
        return "Your request is invalid or could not be processed by the service"
    if code.startswith("5"):
        return "The service failed to process your request"
    return ""


def _truthy(value: Any) -> bool:
    return value not in (None, "", 0, False) or isinstance(value, (dict, list))


def _js_number(value: float | int) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def find_property(data: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """NodeError.findProperty without traversal keys: the first message-like value found."""
    for key in keys:
        value = data.get(key)
        if not _truthy(value) or isinstance(value, bool):
            continue
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return data[key]
            if isinstance(value, str):
                return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return _js_number(value)
        if isinstance(value, list):
            found = [v if isinstance(v, str) else _js_number(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
                     else find_property(v, keys) if isinstance(v, dict) else None for v in value]
            found = [f for f in found if f is not None]
            return " | ".join(found) if found else None
        if isinstance(value, dict):
            inner = find_property(value, keys)
            if inner:
                return inner
    return None


def api_error(node: str, status: int, body_text: str, message_text: str) -> NodeOperationError:
    """n8n's NodeApiError for a non-2xx answer: the status's message, the server's words as description."""
    fake = {"error": body_text, "message": message_text}
    description = find_property(fake, ERROR_MESSAGE_KEYS)
    message = status_message(status) or message_text
    return NodeOperationError(message, node=node, description=None if description == message else description)


def reply_error(node: str, reply: Reply) -> NodeOperationError:
    text = reply.text()
    return api_error(node, reply.status, text, f"{reply.status} - {json_text(text)}")


def axios_body(call: HttpCall, reply: Reply) -> Any:
    """The body as n8n's request helper hands it to the node: parsed JSON where axios parses it."""
    text = reply.text()
    if call.json_mode:
        if text == "":
            return UNDEFINED
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def autodetected(call: HttpCall, reply: Reply, node: str, resolved: Any = UNDEFINED) -> tuple[str, Any]:
    """(format, body) of an autodetected answer; `resolved`: a body pagination already read."""
    content_type = reply.content_type
    if "application/json" in content_type:
        if resolved is not UNDEFINED:
            return "json", resolved
        text = reply.text()
        try:
            return "json", json.loads(text)
        except ValueError:
            if call.never_error:
                return "json", {}
            raise NodeOperationError("Invalid JSON in response body", node=node) from None
    if any(kind in content_type for kind in BINARY_TYPES):
        raise NodeOperationError(
            f'HTTP Request "{node}": the response is a file ({content_type}), and binary data is not supported by mini-n8n',
            node=node, description="Set the Response Format option to Text to read it as text, or pin the node's output")
    if resolved is not UNDEFINED:
        return "text", resolved if resolved != "" else UNDEFINED
    text = reply.text()
    return "text", text if text else UNDEFINED


def _to_text(value: Any) -> Any:
    return json_text(value) if isinstance(value, (dict, list)) else value


def _parse_json_text(value: str, node: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        raise NodeOperationError('Response body is not valid JSON. Change "Response Format" to "Text"', node=node) from None


def _full(reply: Reply, body: Any, body_key: str = "body") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if body is not UNDEFINED:
        out[body_key] = body
    out.update(headers=reply.headers, statusCode=reply.status, statusMessage=reply.reason)
    return out


def items_of(call: HttpCall, reply: Reply, node: str, item_index: int, resolved: Any = UNDEFINED) -> list[Item]:
    """The output items of one answer."""
    if call.response_format == "autodetect":
        fmt, body = autodetected(call, reply, node, resolved)
    else:
        fmt, body = call.response_format, resolved if resolved is not UNDEFINED else axios_body(call, reply)
    pair = {"item": item_index}
    if fmt == "text":
        key = call.output_property
        if call.full_response:
            return [{"json": _full(reply, UNDEFINED if body is UNDEFINED else _to_text(body), key), "pairedItem": pair}]
        return [{"json": {} if body is UNDEFINED else {key: _to_text(body)}, "pairedItem": pair}]
    if call.full_response:
        if isinstance(body, str):
            body = _parse_json_text(body, node)
        return [{"json": _full(reply, body), "pairedItem": pair}]
    if isinstance(body, str):
        body = _parse_json_text(body, node)
    if body is UNDEFINED or body is None:
        return [{"json": {}, "pairedItem": pair}]
    if isinstance(body, list):
        return [{"json": {} if element is None else element, "pairedItem": pair} for element in body]
    return [{"json": body, "pairedItem": pair}]
