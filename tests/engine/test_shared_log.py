"""Windows on append-only logs: what a recorded run saw never changes, and it reads as a JSON array."""

from __future__ import annotations

import json

from engine.shared_log import MAX_DEPTH, LogWindow, SharedLog, plain


def test_a_window_keeps_what_it_saw_when_the_log_grows() -> None:
    first = LogWindow.of(["a", "b"])
    second = first.extended(["c"])
    assert second.log is first.log  # nothing came after `first`: appended in place
    assert list(first) == ["a", "b"] and list(second) == ["a", "b", "c"]
    assert len(first) == 2 and first[-1] == "b" and second[1:] == ["b", "c"]
    assert list(reversed(second)) == ["c", "b", "a"]


def test_extending_an_older_window_starts_a_new_log_that_shares_the_older_entries() -> None:
    first = LogWindow.of(["a"])
    later = first.extended(["b"])
    fork = first.extended(["x"])  # `later` already appended after `first`
    assert fork.log is not first.log
    assert list(later) == ["a", "b"] and list(fork) == ["a", "x"]
    assert fork.log.items == ["x"] and fork.log.base is first.log  # "a" is not copied
    assert fork[0] == "a" and fork[-1] == "x" and fork[0:2] == ["a", "x"] and fork.to_list() == ["a", "x"]
    assert list(reversed(fork)) == ["x", "a"]
    assert fork == ["a", "x"] and fork != later


def test_windows_on_logs_that_stand_on_others_read_the_same_as_copies() -> None:
    """Each item after the first of n8n's v3 agent reads the first item's steps, one more every
    round, then its own: a chain of logs, cut to a copy past MAX_DEPTH."""
    trunk = SharedLog(["s0"])
    window, expected = trunk.window(), ["s0"]
    for n in range(1, 3 * MAX_DEPTH):
        trunk.items.append(f"s{n}")
        mine = LogWindow(trunk, n).extended([f"own{n}"])  # the trunk's first n, then this item's
        window = window.extended([f"more{n}"]) if n % 3 else mine
        expected = expected + [f"more{n}"] if n % 3 else [f"s{i}" for i in range(n)] + [f"own{n}"]
        assert window.to_list() == expected and list(window) == expected and window[:] == expected
        assert [window[i] for i in range(len(window))] == expected
        assert window.log.depth <= MAX_DEPTH
    deep = window
    for n in range(2 * MAX_DEPTH):  # logs that each start with the whole of the last: copied past MAX_DEPTH
        deep = LogWindow(deep.log, len(deep) - 1).extended([deep[-1], f"d{n}"])
        expected = expected + [f"d{n}"]
        assert deep.to_list() == expected and deep.log.depth <= MAX_DEPTH


def test_windows_count_the_entries_they_share() -> None:
    trunk = SharedLog(["a", "b", "c"])
    first = LogWindow(trunk, 2).extended(["x"])
    trunk.items.append("d")
    second = LogWindow(trunk, 3).extended(["y"])
    assert first.shared_with(second) == 2 == second.shared_with(first)
    assert second.shared_with(trunk.window()) == 3
    assert trunk.window().shared_with(LogWindow(trunk, 1)) == 1
    copy = LogWindow.of(trunk.items[:2] + ["z"])  # another log with the same objects first
    assert copy.shared_with(first) == 2


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


def test_a_log_taken_up_from_an_earlier_point_keeps_its_lineage_and_its_parallel_logs() -> None:
    made: list[str] = []

    def upper(text: str) -> str:
        made.append(text)
        return text.upper()

    first = SharedLog(["system", "user", "call 1", "result 1"])
    json_log = first.window().mapped("json", upper).log
    again = LogWindow(first, 2).extended(["call 2"])  # the conversation taken up after its first two messages
    assert again.log.lineage == first.lineage
    mapped = again.mapped("json", upper)
    assert mapped.log.lineage == json_log.lineage
    assert list(mapped) == ["SYSTEM", "USER", "CALL 2"] and mapped.log.base is json_log
    assert made == ["system", "user", "call 1", "result 1", "call 2"]  # each made once, kept
    other = SharedLog(["system", "user"])
    assert other.lineage not in (first.lineage, json_log.lineage)
    assert json_log.lineage != first.lineage


def test_a_parallel_log_of_a_log_standing_on_another_makes_the_base_entries_first() -> None:
    first = SharedLog(["a", "b", "c"])
    later = LogWindow(first, 2).extended(["x"])  # its parallel made before the base's
    assert list(later.mapped("up", str.upper)) == ["A", "B", "X"]
    assert list(first.window().mapped("up", str.upper)) == ["A", "B", "C"]
    deep = later
    for n in range(2 * MAX_DEPTH):
        deep = LogWindow(deep.log, len(deep) - 1).extended([deep[-1], f"d{n}"])
        assert list(deep.mapped("up", str.upper)) == [x.upper() for x in deep]


def test_a_window_slices_as_the_list_it_shows() -> None:
    trunk = SharedLog(range(10))
    windows = {"one log": LogWindow(trunk, 7), "standing on another": LogWindow(trunk, 4).extended([40, 50, 60])}
    for name, window in windows.items():
        shown = window.to_list()
        bounds = (None, -9, -3, -1, 0, 2, 6, 7, 20)
        for start in bounds:
            for stop in bounds:
                for step in (None, 1, 2, -1):
                    assert window[start:stop:step] == shown[start:stop:step], (name, start, stop, step)
