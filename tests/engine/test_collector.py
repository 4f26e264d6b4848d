"""The garbage collector's thresholds are raised while runs are active and restored after; a full
collection the runs' own collections made due is put off past the run's end."""

from __future__ import annotations

import gc
from typing import Iterator

import pytest

from engine.collector import RUN_THRESHOLDS, fewer_collections
from engine.executor import Engine
from engine.registry import builtin_registry
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow

USER_THRESHOLDS = (700, 10, 10)  # Python's defaults


@pytest.fixture(autouse=True)
def known_thresholds() -> Iterator[None]:
    """Python's default thresholds and no collection pending: a full collection first (it also
    ends any put off by an earlier test's run)."""
    gc.collect()
    before = gc.get_threshold()
    gc.set_threshold(*USER_THRESHOLDS)
    yield
    gc.collect()
    gc.set_threshold(*before)


def generation_1_collections(count: int) -> None:
    """`count` collections of generation 1, as a long run's allocations would make."""
    for _ in range(count):
        gc.collect(1)


async def test_a_run_raises_the_thresholds_and_restores_them() -> None:
    seen: list[tuple[int, int, int]] = []
    execution = Engine(builtin_registry()).create(agent_workflow([{"text": "done"}]), items=[chat_item("go", "s")])
    execution.hooks.add(lambda _event: seen.append(gc.get_threshold()))
    state = await execution.run()
    assert state.status == "success"
    assert RUN_THRESHOLDS in seen
    assert gc.get_threshold() == USER_THRESHOLDS


def test_nested_runs_restore_only_when_the_last_ends() -> None:
    with fewer_collections():
        with fewer_collections():
            assert gc.get_threshold() == tuple(max(a, b) for a, b in zip(RUN_THRESHOLDS, USER_THRESHOLDS))
        assert gc.get_threshold() != USER_THRESHOLDS
    assert gc.get_threshold() == USER_THRESHOLDS


def test_a_full_collection_made_due_during_a_run_is_put_off_until_after_it() -> None:
    with fewer_collections():
        generation_1_collections(15)  # past the restored threshold of 10
    assert gc.get_count()[2] == 15
    # the next collection of generation 1 would have been full: now 10 more come first
    assert gc.get_threshold() == (700, 10, 25)
    generation_1_collections(10)
    assert gc.get_threshold() == (700, 10, 25)
    gc.collect()  # a full collection brings the threshold back
    assert gc.get_threshold() == USER_THRESHOLDS


def test_a_run_during_a_put_off_collection_raises_and_restores_the_users_thresholds() -> None:
    with fewer_collections():
        generation_1_collections(15)
    assert gc.get_threshold() == (700, 10, 25)
    with fewer_collections():
        assert gc.get_threshold() == tuple(max(a, b) for a, b in zip(RUN_THRESHOLDS, USER_THRESHOLDS))
        generation_1_collections(5)
    assert gc.get_threshold() == (700, 10, 30)  # 20 made since the last full collection, then 10 more
    gc.collect()
    assert gc.get_threshold() == USER_THRESHOLDS


def test_a_full_collection_during_a_run_leaves_its_restore_alone() -> None:
    with fewer_collections():
        generation_1_collections(15)
    with fewer_collections():
        gc.collect()  # a full collection during the next run: nothing is put off any more
        assert gc.get_threshold() == tuple(max(a, b) for a, b in zip(RUN_THRESHOLDS, USER_THRESHOLDS))
    assert gc.get_threshold() == USER_THRESHOLDS
