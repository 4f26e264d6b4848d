"""The abort signal's callbacks: called once on abort, at once when added after it, and forgotten
when taken back (a model call watches the execution's signal for its length only)."""

from __future__ import annotations

import threading

from engine.abort import AbortSignal


def test_a_watched_callback_is_called_on_abort_once_and_an_unwatched_one_not() -> None:
    signal = AbortSignal()
    called: list[str] = []

    def first() -> None:
        called.append("first")

    def second() -> None:
        called.append("second")

    signal.watch(first)
    signal.watch(second)
    signal.unwatch(second)
    signal.unwatch(second)  # taken back twice: nothing happens
    signal.abort("stop")
    signal.abort("again")
    assert called == ["first"] and signal.reason == "stop"
    signal.unwatch(first)  # after the abort: nothing to forget, no error
    signal.watch(second)  # watched once aborted: called at once
    assert called == ["first", "second"]


def test_the_remover_of_add_callback_takes_back_that_callback_only() -> None:
    signal = AbortSignal()
    called: list[int] = []
    removers = [signal.add_callback(lambda i=i: called.append(i)) for i in range(3)]
    removers[1]()
    removers[1]()
    signal.abort()
    assert called == [0, 2]


def test_callbacks_watched_and_taken_back_by_many_calls_do_not_pile_up() -> None:
    signal = AbortSignal()
    called: list[int] = []
    for i in range(1000):
        callback = (lambda i=i: called.append(i))
        signal.watch(callback)
        signal.unwatch(callback)
    last = threading.Event()
    signal.watch(last.set)
    signal.abort()
    assert last.is_set() and called == []
