"""Replies and streamed events are read as the standard library reads JSON, whichever parser reads
them: integers past 64 bits stay exact, NaN and lone surrogates are accepted, and text that is not
JSON is an error that quotes it."""

from __future__ import annotations

import json
import math

import pytest

from engine.errors import NodeOperationError
from nodes.models._http import Endpoint, parse_json

EP = Endpoint(url="http://127.0.0.1:1/v1/chat/completions", base_url="http://127.0.0.1:1/v1", model="m", node="M")
TEXTS = ['{"usage":{"prompt_tokens":123456789012345678901234567890}}', '{"n":-18446744073709551616}',
         '{"n":-9223372036854775809}', '{"n":-9223372036854775808,"m":9999999999999999999}',
         '{"n":18446744073709551615,"f":1.5e300,"s":"é😀\\u0000"}', '"\\ud800"', '[1e400]', ' {"a": [1, 2]} \n',
         '{"a":1,"a":2}']


@pytest.mark.parametrize("text", TEXTS)
def test_a_value_is_the_standard_librarys_as_text_and_as_bytes(text: str) -> None:
    expected = json.loads(text.encode("utf-8", "surrogatepass"))
    for payload in (text, text.encode("utf-8", "surrogatepass")):
        value = parse_json(EP, payload)
        assert json.dumps(value) == json.dumps(expected)
        assert type(value) is type(expected)


def test_nan_is_read_and_text_that_is_not_json_is_an_error_quoting_it() -> None:
    assert math.isnan(parse_json(EP, '{"x":NaN}')["x"])
    with pytest.raises(NodeOperationError, match=r"answered with text that is not JSON: '<html>502'"):
        parse_json(EP, b"<html>502")
    with pytest.raises(NodeOperationError, match="not JSON"):
        parse_json(EP, '{"a":1} trailing')
    assert parse_json(EP, '\ufeff{"a":1}'.encode()) == {"a": 1}  # a body may begin with a byte order mark
    with pytest.raises(NodeOperationError, match="not JSON"):
        parse_json(EP, '\ufeff{"a":1}')  # an event may not
