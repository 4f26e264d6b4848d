"""Windows on append-only logs: what a recorded run saw never changes, and it reads as a JSON array."""

from __future__ import annotations

import json

from engine.shared_log import LogWindow, SharedLog, plain


def test_a_window_keeps_what_it_saw_when_the_log_grows() -> None:
    first = LogWindow.of(["a", "b"])
    second = first.extended(["c"])
    assert second.log is first.log  # nothing came after `first`: appended in place
    assert list(first) == ["a", "b"] and list(second) == ["a", "b", "c"]
    assert len(first) == 2 and first[-1] == "b" and second[1:] == ["b", "c"]
    assert list(reversed(second)) == ["c", "b", "a"]


def test_extending_an_older_window_starts_a_new_log() -> None:
    first = LogWindow.of(["a"])
    later = first.extended(["b"])
    fork = first.extended(["x"])  # `later` already appended after `first`
    assert fork.log is not first.log
    assert list(later) == ["a", "b"] and list(fork) == ["a", "x"]


def test_a_window_compares_with_lists_and_windows() -> None:
    window = LogWindow.of([{"role": "user"}])
    assert window == [{"role": "user"}] and [{"role": "user"}] == window
    assert window != [{"role": "user"}, {"role": "tool"}]
    assert window == LogWindow.of([{"role": "user"}])


def test_parallel_log_converts_each_entry_once() -> None:
    made: list[int] = []

    def convert(n: int) -> int:
        made.append(n)
        return n * 10

    log = SharedLog([1, 2])
    assert list(log.window().mapped("x", convert)) == [10, 20]
    log.items.append(3)
    assert list(log.window().mapped("x", convert)) == [10, 20, 30]
    assert list(LogWindow(log, 2).mapped("x", convert)) == [10, 20]
    assert made == [1, 2, 3]


def test_plain_turns_windows_into_lists_for_json() -> None:
    window = LogWindow.of([{"role": "user", "content": "hi"}])
    value = {"ai_languageModel": [[{"json": {"messages": window, "tools": []}}]], "n": 1}
    converted = plain(value)
    assert json.loads(json.dumps(converted)) == {"ai_languageModel": [[{"json": {"messages": [{"role": "user", "content": "hi"}], "tools": []}}]], "n": 1}
    assert converted["ai_languageModel"][0][0]["json"]["messages"][0] is window[0]  # the entries are shared
    untouched = {"a": [1, 2], "b": {"c": "d"}}
    assert plain(untouched) is untouched


def test_a_log_taken_up_from_an_earlier_point_keeps_its_lineage() -> None:
    first = SharedLog(["system", "user", "call 1", "result 1"])
    json_log = first.window().mapped("json", str.upper).log
    again = first.prefix(2)  # the conversation taken up after its first two messages
    assert again.items == ["system", "user"]
    assert again.lineage == first.lineage
    assert again.window().mapped("json", str.upper).log.lineage == json_log.lineage
    assert again.window().mapped("json", str.upper).log.items == ["SYSTEM", "USER"]  # made once, kept
    other = SharedLog(["system", "user"])
    assert other.lineage not in (first.lineage, json_log.lineage)
    assert json_log.lineage != first.lineage
