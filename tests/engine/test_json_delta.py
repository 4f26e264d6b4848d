"""Delta encoding of JSON against an earlier value: lossless, and short for growing lists."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from engine.json_delta import KEYS, MARK, SAME, UnknownDelta, changed_keys, decode, encode

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda c: st.lists(c, max_size=6) | st.dictionaries(st.text(max_size=4), c, max_size=4),
    max_leaves=20,
)


def test_a_growing_list_is_stored_as_a_count_and_the_new_part() -> None:
    messages = [{"role": "user", "content": str(i)} for i in range(10)]
    old = {"input": {"messages": messages}, "n": 1}
    new = {"input": {"messages": messages + [{"role": "tool", "content": "x"}]}, "n": 2}
    encoded = encode(new, old)
    assert encoded["input"]["messages"] == {MARK: 10, "then": [{"role": "tool", "content": "x"}]}
    assert decode(json.loads(json.dumps(encoded)), json.loads(json.dumps(old))) == new


@settings(max_examples=300, deadline=None)
@given(json_values, json_values, st.integers(0, 8))
def test_decode_gives_back_what_was_encoded(old, extra, keep) -> None:
    base = [{"i": i} for i in range(10)]
    old_value = {"list": base, "other": old}
    new_value = {"list": base[:keep] + [extra], "other": extra}
    encoded = json.loads(json.dumps(encode(new_value, old_value)))
    assert decode(encoded, json.loads(json.dumps(old_value))) == new_value
    assert decode(json.loads(json.dumps(encode(new_value, None))), None) == new_value


def test_a_window_that_extends_a_window_on_the_same_log_costs_only_what_it_adds() -> None:
    from engine.shared_log import SharedLog, plain

    log = SharedLog({"step": i} for i in range(6))
    old = {"steps": log.window(), "shared": {"a": [1, 2]}}
    log.items.append({"step": 6})
    shared = old["shared"]
    new = {"steps": log.window(), "shared": shared}
    encoded = encode(new, old)
    assert encoded["steps"] == {MARK: 6, "then": [{"step": 6}]}
    assert encoded["shared"] == SAME  # the very object: unchanged
    assert decode(json.loads(json.dumps(encoded)), json.loads(json.dumps(plain(old)))) == plain(new)
    other = SharedLog(log.items[:3]).window()  # another log: compared element by element
    assert decode(json.loads(json.dumps(encode({"steps": other}, old), default=list)), plain(old)) == {"steps": log.items[:3]}


def test_a_delta_of_changed_keys_keeps_the_other_keys_and_reads_each_change_against_its_value_before() -> None:
    answers = [{"i": i} for i in range(5)]
    old = {"node": "Agent", "round": 3, "pending": {"request": {"id": 1}, "responses": answers}}
    encoded = changed_keys({"pending": {"request": SAME, "responses": {MARK: 5, "then": [{"i": 5}]}}, "round": 4})
    assert decode(json.loads(json.dumps(encoded)), json.loads(json.dumps(old))) == {
        "node": "Agent", "round": 4, "pending": {"request": {"id": 1}, "responses": answers + [{"i": 5}]}}
    assert decode([encoded], [old])[0]["node"] == "Agent"  # as an entry of a stack
    with pytest.raises(ValueError, match="base does not have"):
        decode(encoded, None)


def test_a_delta_of_an_unknown_kind_or_that_does_not_fit_its_base_is_never_read_as_data() -> None:
    """A marked value of a kind this code does not write (a newer mini-n8n's) is an UnknownDelta,
    but for the kinds the caller resolves itself; one that does not fit its base is a ValueError."""
    with pytest.raises(UnknownDelta, match="'later'"):
        decode({"a": {MARK: "later", "x": 1}}, {"a": {}})
    reference = [{MARK: "run", "seq": 3}]
    assert decode(reference, [], frozenset({"run"})) == reference
    with pytest.raises(UnknownDelta, match="'run'"):
        decode(reference, [])
    for encoded, old in (({MARK: 2, "then": [1]}, {"a": 1}), ({MARK: 5, "then": []}, [1, 2]),
                         ({MARK: KEYS, "a": 1}, [1]), (SAME, None)):
        with pytest.raises(ValueError) as raised:
            decode(encoded, old)
        assert type(raised.value) is ValueError, encoded
