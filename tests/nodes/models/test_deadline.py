"""The deadline of a model call (the node's Timeout): each call ends by its own, whatever the calls
before it or beside it on the same event loop had."""

from __future__ import annotations

import asyncio

import pytest

from engine.errors import NodeOperationError
from nodes.models._http import Endpoint, within_deadline

GUARD_S = 10.0  # a call its deadline failed to end fails the test instead of hanging it


def endpoint(timeout_ms: float) -> Endpoint:
    return Endpoint(url="http://127.0.0.1:9/v1/chat/completions", base_url="http://127.0.0.1:9/v1", model="m",
                    node="Model", timeout_ms=timeout_ms)


async def never_ending(timeout_ms: float) -> None:
    with within_deadline(endpoint(timeout_ms)):
        await asyncio.Event().wait()


async def test_a_shorter_deadline_after_a_longer_one_ends_its_call() -> None:
    with within_deadline(endpoint(60_000)):
        pass
    with pytest.raises(NodeOperationError, match="did not finish its reply within 50 ms"):
        await asyncio.wait_for(never_ending(50), GUARD_S)


async def test_the_deadline_of_a_call_that_ended_does_not_end_the_next_one() -> None:
    with within_deadline(endpoint(20)):
        pass
    with within_deadline(endpoint(60_000)):
        await asyncio.sleep(0.1)  # the first call's deadline passes meanwhile
    with pytest.raises(NodeOperationError, match="within 30 ms"):
        await asyncio.wait_for(never_ending(30), GUARD_S)


async def test_a_call_whose_deadline_is_later_than_an_ended_one_still_ends_by_it() -> None:
    with within_deadline(endpoint(20)):
        pass
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(NodeOperationError, match="within 150 ms"):
        await asyncio.wait_for(never_ending(150), GUARD_S)
    assert loop.time() - started >= 0.14  # not at the first call's deadline


async def test_calls_side_by_side_each_end_by_their_own_deadline() -> None:
    async def finishing() -> str:
        with within_deadline(endpoint(60_000)):
            await asyncio.sleep(0.1)
        return "done"

    short, long, later = await asyncio.wait_for(
        asyncio.gather(never_ending(30), finishing(), never_ending(80), return_exceptions=True), GUARD_S)
    assert isinstance(short, NodeOperationError) and "within 30 ms" in short.message
    assert long == "done"
    assert isinstance(later, NodeOperationError) and "within 80 ms" in later.message


def test_a_closed_event_loop_is_not_kept_alive_by_its_deadline_timer() -> None:
    import gc
    import weakref

    async def one_call() -> None:
        with within_deadline(endpoint(60_000)):  # its timer stays armed after the call
            pass

    loop = asyncio.new_event_loop()
    loop.run_until_complete(one_call())
    loop.close()
    gone = weakref.ref(loop)
    del loop
    gc.collect()
    assert gone() is None
