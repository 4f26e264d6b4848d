"""The Agent's scratchpad messages: made once per step, also when the steps come on another log."""

from __future__ import annotations

from engine.chat import ChatMessage
from engine.shared_log import LogWindow, SharedLog
from nodes.agent.steps import make_step, scratchpad_messages


def step(n: int) -> dict:
    return make_step(f"call_{n}", "Calculator", {"input": f"{n} + 1"}, str(n + 1))


def as_json(window: LogWindow) -> list[dict]:
    return [m.to_json() for m in window]


HEAD = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="count")]


def test_steps_on_the_same_log_add_only_their_messages() -> None:
    memo: dict = {}
    log = SharedLog([step(0), step(1)])
    first = scratchpad_messages(HEAD, log.window(), memo)
    log.items.append(step(2))
    second = scratchpad_messages(HEAD, log.window(), memo)
    assert len(first) == 2 + 4 and len(second) == 2 + 6
    assert second.log is first.log  # appended to the same message log
    assert all(a is b for a, b in zip(first, second))


def test_steps_on_another_log_keep_the_messages_of_the_steps_both_share() -> None:
    """n8n's v3 agent gives each item after the first a copy of the first item's steps followed by
    its own: the messages of the shared steps are kept, the rest made, nothing made wrong."""
    memo: dict = {}
    s0, s1, mine, theirs = step(0), step(1), step(7), step(8)
    first = scratchpad_messages(HEAD, SharedLog([s0, s1, mine]).window(), memo)
    before = as_json(first)
    second = scratchpad_messages(HEAD, SharedLog([s0, s1, theirs, step(9)]).window(), memo)

    fresh = scratchpad_messages(HEAD, SharedLog([s0, s1, theirs, step(9)]).window(), {})
    assert as_json(second) == as_json(fresh)
    assert all(a is b for a, b in zip(list(first)[:6], list(second)[:6]))  # head and the two shared steps
    assert list(second)[6] is not list(first)[6]
    assert as_json(first) == before  # the earlier window (a recorded run's input) reads as it did


def test_a_shorter_window_on_another_log_reads_only_its_steps() -> None:
    memo: dict = {}
    s0, s1 = step(0), step(1)
    scratchpad_messages(HEAD, SharedLog([s0, s1, step(2)]).window(), memo)
    shorter = scratchpad_messages(HEAD, SharedLog([s0]).window(), memo)
    assert as_json(shorter) == as_json(scratchpad_messages(HEAD, SharedLog([s0]).window(), {}))
    assert len(shorter) == 2 + 2
