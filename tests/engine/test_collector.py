"""The garbage collector's thresholds are raised while runs are active and restored after."""

from __future__ import annotations

import gc

from engine.collector import RUN_THRESHOLDS, fewer_collections
from engine.executor import Engine
from engine.registry import builtin_registry
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow


async def test_a_run_raises_the_thresholds_and_restores_them() -> None:
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    execution = Engine(builtin_registry()).create(agent_workflow([{"text": "done"}]), items=[chat_item("go", "s")])
    execution.hooks.add(lambda _event: seen.append(gc.get_threshold()))
    state = await execution.run()
    assert state.status == "success"
    assert RUN_THRESHOLDS in seen
    assert gc.get_threshold() == before


def test_nested_runs_restore_only_when_the_last_ends() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        with fewer_collections():
            assert gc.get_threshold() == tuple(max(a, b) for a, b in zip(RUN_THRESHOLDS, before))
        assert gc.get_threshold() != before
    assert gc.get_threshold() == before
