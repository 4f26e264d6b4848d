"""How n8n's HTTP Request node writes a query string, a form body and a multipart body on the wire.

n8n hands its request to axios: a query goes through axios's own serializer (arrays as `a[]=1`,
nested objects as `a[b]=1`, spaces as `+`) unless the *Array Format in Query Parameters* option
picks the `qs` library's format; a form-urlencoded body goes through `qs.stringify` (spaces as
`%20`, arrays with indices); multipart fields are written as the `form-data` library writes them.
"""

from __future__ import annotations

import json
import secrets
from typing import Any
from urllib.parse import quote

_URI_COMPONENT_SAFE = "-_.!~*'()"  # what JavaScript's encodeURIComponent leaves alone
_QS_SAFE = "-_.~"  # what qs leaves alone (RFC 3986 unreserved)
_AXIOS_UNESCAPE = (("%3A", ":"), ("%24", "$"), ("%2C", ","), ("%20", "+"), ("%5B", "["), ("%5D", "]"))


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


def _axios_encode(text: str) -> str:
    encoded = quote(text, safe=_URI_COMPONENT_SAFE)
    for escaped, plain in _AXIOS_UNESCAPE:
        encoded = encoded.replace(escaped, plain).replace(escaped.lower(), plain)
    return encoded


def _axios_pairs(value: Any, key: str, out: list[tuple[str, str]]) -> None:
    if value is None and key:
        out.append((key, ""))
    elif isinstance(value, list):
        flat = all(not isinstance(v, (dict, list)) for v in value)
        for index, element in enumerate(value):
            if flat:
                if element is not None:
                    out.append((f"{key}[]", js_string(element)))
            else:
                _axios_pairs(element, f"{key}[{index}]", out)
    elif isinstance(value, dict):
        for sub, element in value.items():
            _axios_pairs(element, f"{key}[{sub}]" if key else str(sub), out)
    else:
        out.append((key, js_string(value)))


def axios_query(params: dict[str, Any]) -> str:
    """axios's default serializer (buildURL with AxiosURLSearchParams)."""
    pairs: list[tuple[str, str]] = []
    _axios_pairs(params, "", pairs)
    return "&".join(f"{_axios_encode(k)}={_axios_encode(v)}" for k, v in pairs)


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
