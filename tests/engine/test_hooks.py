"""Hook listeners: one that names the event types it wants gets only those, and an event type no
one wants is not asked for (the engine then does not build it)."""

from __future__ import annotations

import asyncio

from engine.executor import Engine
from engine.hooks import HookEvent, Hooks, NodeAfter, NodeBefore, WorkflowAfter
from engine.registry import builtin_registry
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call


def test_a_listener_gets_only_the_kinds_it_names_and_can_be_removed() -> None:
    hooks = Hooks()
    assert not hooks.active and not hooks.wants(NodeBefore)
    seen: list[HookEvent] = []
    remove = hooks.add(seen.append, kinds=(NodeAfter,))
    assert hooks.active and hooks.wants(NodeAfter) and not hooks.wants(NodeBefore)
    hooks.emit(NodeBefore("e", "A", 0))
    hooks.emit(WorkflowAfter("e", "success"))
    assert seen == []
    everything: list[HookEvent] = []
    remove_all = hooks.add(everything.append)
    assert hooks.wants(NodeBefore)
    hooks.emit(NodeBefore("e", "A", 0))
    assert len(everything) == 1 and seen == []
    remove_all()
    remove()
    assert not hooks.active and not hooks.wants(NodeAfter)


def test_a_listener_that_removes_another_during_an_event_does_not_hide_it_from_the_rest() -> None:
    """A store stops its runs' listener when the workflow ends, from inside that event: every
    listener after it still gets the event, and the removed one gets no later event."""
    hooks = Hooks()
    first: list[HookEvent] = []
    last: list[HookEvent] = []
    remove_first = hooks.add(first.append)
    hooks.add(lambda event: remove_first() if isinstance(event, WorkflowAfter) else None)
    hooks.add(last.append)
    hooks.emit(WorkflowAfter("e", "success"))
    hooks.emit(NodeBefore("e", "A", 0))
    assert [type(e) for e in last] == [WorkflowAfter, NodeBefore]
    assert [type(e) for e in first] == [WorkflowAfter]


def test_a_run_reports_the_same_node_events_to_a_filtered_listener() -> None:
    workflow = agent_workflow([{"toolCalls": [tool_call("Calculator", {"input": "2 * 3"})]}, {"text": "6"}])
    events: dict[str, list[tuple[str, str, int]]] = {"all": [], "after": []}

    def run(hooks: Hooks) -> None:
        execution = Engine(builtin_registry()).create(workflow, items=[chat_item("go", "s")], hooks=hooks)
        loop = asyncio.new_event_loop()
        try:
            assert loop.run_until_complete(execution.run()).status == "success"
        finally:
            loop.close()

    run(Hooks(lambda e: events["all"].append((type(e).__name__, getattr(e, "node", ""), getattr(e, "run_index", 0)))))
    filtered = Hooks()
    filtered.add(lambda e: events["after"].append((type(e).__name__, e.node, e.run_index)), kinds=(NodeAfter,))  # type: ignore[union-attr]
    run(filtered)
    assert events["after"] == [e for e in events["all"] if e[0] == "NodeAfter"]
    assert [e[1] for e in events["after"]] == ["Chat", "Model", "Calculator", "Model", "AI Agent"]
