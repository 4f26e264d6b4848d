"""The JSON text of tool calls and observations: orjson's where it writes the standard library's
text, the standard library's everywhere else."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.observation import compact_json, js_json

# every kind a tool's arguments or output can hold, and the ones orjson refuses or writes otherwise
scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text() | st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)))
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.tuples(children, children)
    | st.dictionaries(st.text(max_size=4), children, max_size=4) | st.dictionaries(st.integers(), children, max_size=2),
    max_leaves=25,
)


def standard(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@settings(max_examples=400, deadline=None)
@given(values)
def test_compact_json_is_the_standard_librarys_text(value: object) -> None:
    assert compact_json(value) == standard(value)


def test_floats_and_what_orjson_refuses_are_written_as_the_standard_library_writes_them() -> None:
    for value in ({"a": 1e-07}, [1.5, 1e16], 2**64, {"\ud800": 1}, {1: "x"}, ("a", 1)):
        assert compact_json(value) == standard(value)


def test_js_json_writes_integral_floats_as_integers_and_the_rest_compact() -> None:
    assert js_json([{"response": "425"}]) == '[{"response":"425"}]'
    assert js_json({"n": 3.0, "x": 0.5, "s": "é", "bad": float("nan")}) == '{"n":3,"x":0.5,"s":"é","bad":null}'
