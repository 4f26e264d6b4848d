"""Pieces every chat model node shares: n8n's resource-locator model names, the
JSON encoding of request bodies and the reading of JSON replies."""

from __future__ import annotations

import json
from typing import Any

import orjson

_raw_decode = json.JSONDecoder().raw_decode
_DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x78 for byte in range(256))  # any digit a 0, any other byte an x
# nineteen digits in a row: perhaps an integer orjson would read as a float (one past 64 bits; one
# below -2**63 may have only nineteen)
_LONG_NUMBER = b"0" * 19
_FLOAT_TEXT = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x2E if byte in b".eE" else 0x78 for byte in range(256))
_PASSTHROUGH = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


def encode_json(value: Any) -> str:
    """JSON as request bodies are sent (httpx's encoding: UTF-8, compact, no NaN), as
    `json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)` writes it.
    orjson writes it (twenty times faster) when its text is sure to be the same: no float in it
    (orjson writes some otherwise: 1e-05 as 0.00001; a digit then `.` or `e` may be one), no null
    (NaN is written as null) and nothing orjson refuses (a key that is not a string, an integer
    past 64 bits, a lone surrogate, a subclass, a dataclass or a date); the standard library
    writes the rest, and raises as it did. (An Enum or a UUID, which no body holds, would be
    written by orjson where the standard library refuses it.)"""
    raw = _orjson_text(value)
    return raw.decode() if raw is not None else _standard_text(value)


def encode_json_bytes(value: Any) -> bytes:
    """encode_json(value) as UTF-8 bytes (a request body): orjson's own bytes when they are that
    text, without a round trip through str. Raises as encoding that text would."""
    raw = _orjson_text(value)
    return raw if raw is not None else _standard_text(value).encode()


def _standard_text(value: Any) -> str:
    """The standard library's text of a body: what orjson's bytes must equal to be used."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _orjson_text(value: Any) -> bytes | None:
    """orjson's JSON of `value` when it is the text encode_json writes, else None."""
    try:
        raw = orjson.dumps(value, option=_PASSTHROUGH)
    except (orjson.JSONEncodeError, TypeError):
        return None
    # bytes.find, not `in`: `in` first tries its operand as an integer, and raises and clears a
    # formatted TypeError for every bytes operand (3,000 instructions each time)
    if raw.find(b"null") < 0 and raw.translate(_FLOAT_TEXT).find(b"0.") < 0:
        return raw
    return None


def plain_numbers(raw: bytes) -> bool:
    """Whether no integer in this JSON text is long enough for orjson to read it as a float."""
    return raw.translate(_DIGITS).find(_LONG_NUMBER) < 0  # find, not `in`: see encode_json


def loads_exact(payload: bytes | str) -> Any:
    """`json.loads(payload)`, raising as it does. orjson reads it (four times the standard library's
    speed) unless it refuses the text or the text holds an integer past 64 bits (orjson reads those
    as floats); the standard library reads what is left."""
    raw = payload.encode("utf-8", "surrogatepass") if type(payload) is str else payload
    if plain_numbers(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # NaN, a lone surrogate, another encoding than UTF-8, or no JSON at all
    if type(payload) is str:  # the decoder itself when it takes the whole text
        try:
            value, end = _raw_decode(payload)
            if end == len(payload):
                return value
        except (ValueError, RecursionError):
            pass  # json.loads says what is wrong (or takes the whitespace around it)
    return json.loads(payload)


def js_number(value: Any) -> Any:
    """A number as JSON.stringify writes it: 1, not 1.0 (what n8n sends for a whole-number option)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def locator_value(value: Any) -> Any:
    """n8n stores some parameters as resource locators `{"__rl": true, "value": ..., "mode": ...}`."""
    if isinstance(value, dict) and "value" in value:
        return value["value"]
    return value
