"""How n8n's HTTP Request node writes a query string, a form body and a multipart body on the wire.

n8n hands its request to axios with the `qs` library's serializer: a query and a form-urlencoded
body are `qs.stringify`'d (RFC 3986 percent-encoding, spaces as `%20`; arrays with indices
`a%5B0%5D=1` unless *Array Format in Query Parameters* says brackets or repeat); multipart fields
are written as the `form-data` library writes them.
"""

from __future__ import annotations

import json
import secrets
from typing import Any
from urllib.parse import quote

_QS_SAFE = "-_.~"  # what qs leaves alone (RFC 3986 unreserved)


def js_string(value: Any) -> str:
    """JavaScript's String(value) for the JSON values a parameter can hold."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, (dict, list)):
        return "[object Object]" if isinstance(value, dict) else ",".join("" if v is None else js_string(v) for v in value)
    return str(value)


def _qs_pairs(value: Any, key: str, array_format: str, out: list[tuple[str, str]]) -> None:
    if isinstance(value, list):
        for index, element in enumerate(value):
            sub = {"indices": f"{key}[{index}]", "brackets": f"{key}[]", "repeat": key}[array_format]
            _qs_pairs(element, sub, array_format, out)
    elif isinstance(value, dict):
        for sub, element in value.items():
            _qs_pairs(element, f"{key}[{sub}]" if key else str(sub), array_format, out)
    elif value is None:
        out.append((key, ""))
    else:
        out.append((key, js_string(value)))


def qs_stringify(params: dict[str, Any], array_format: str = "indices") -> str:
    """The `qs` library's stringify: keys and values percent-encoded (RFC 3986)."""
    pairs: list[tuple[str, str]] = []
    _qs_pairs(params, "", array_format, pairs)
    return "&".join(f"{quote(k, safe=_QS_SAFE)}={quote(v, safe=_QS_SAFE)}" for k, v in pairs)


def with_query(url: str, query: str) -> str:
    """The URL with a serialized query appended as axios appends it (any #fragment dropped)."""
    if not query:
        return url
    url = url.split("#", 1)[0]
    return url + ("&" if "?" in url else "?") + query


def json_text(value: Any) -> str:
    """JSON.stringify's compact form."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def multipart(fields: list[tuple[str, Any]]) -> tuple[bytes, str]:
    """A multipart/form-data body of text fields, as the form-data library writes it, and its content type."""
    boundary = "--------------------------" + "".join(str(secrets.randbelow(10)) for _ in range(24))
    parts = []
    for name, value in fields:
        text = value if isinstance(value, str) else js_string(value)
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{text}\r\n'.encode())
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
