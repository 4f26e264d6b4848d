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


def test_steps_on_a_log_standing_on_another_share_its_messages() -> None:
    """n8n's v3 agent gives each item after the first the first item's steps followed by its own,
    one more of the first item's every round: the messages of those are made once for the item
    and shared by its rounds, its own made each round, nothing made wrong."""
    memo: dict = {}
    firsts = SharedLog([step(0), step(1)])  # the first item's steps
    rounds = []
    for n in range(2, 8):
        firsts.items.append(step(n))  # the first item's result of this round
        mine = LogWindow(firsts, n).extended([step(100 + n)])  # as build_steps makes them
        before = [as_json(r) for r in rounds]
        messages = scratchpad_messages(HEAD, mine, memo)
        assert as_json(messages) == as_json(scratchpad_messages(HEAD, SharedLog(list(mine)).window(), {}))
        assert [as_json(r) for r in rounds] == before  # earlier windows (recorded runs' inputs) read as they did
        if rounds:
            last = rounds[-1]
            shared = 2 + 2 * (n - 1)  # the head and the first item's steps both rounds read
            assert all(a is b for a, b in zip(list(last)[:shared], list(messages)[:shared]))
            assert messages.shared_with(last) == shared
            assert len(messages.log.items) == 2  # the item's own step only: nothing copied
        rounds.append(messages)


def test_a_shorter_window_on_another_log_reads_only_its_steps() -> None:
    memo: dict = {}
    s0, s1 = step(0), step(1)
    scratchpad_messages(HEAD, SharedLog([s0, s1, step(2)]).window(), memo)
    shorter = scratchpad_messages(HEAD, SharedLog([s0]).window(), memo)
    assert as_json(shorter) == as_json(scratchpad_messages(HEAD, SharedLog([s0]).window(), {}))
    assert len(shorter) == 2 + 2
