"""Connection rules are the engine's: an Agent needs one Chat Model, at most one Memory and Parser."""

from __future__ import annotations

from engine.executor import Engine
from engine.registry import builtin_registry
from engine.rules import connection_refusal, workflow_problems
from engine.workflow import parse_workflow
from nodes.triggers.chat_trigger import chat_item
from tests.builders import AGENT, CALCULATOR, CHAT_TRIGGER, MEMORY, SCRIPTED, agent_workflow, link, node


def graph(extra_links: list[tuple[str, str, str]], nodes: list[dict] | None = None):
    base = nodes or [
        node("Chat", CHAT_TRIGGER), node("AI Agent", AGENT), node("M1", SCRIPTED), node("M2", SCRIPTED),
        node("Mem1", MEMORY), node("Mem2", MEMORY), node("Calc", CALCULATOR), node("Calc2", CALCULATOR),
    ]
    connections: dict = {}
    link(connections, "Chat", "AI Agent")
    for src, dst, ctype in extra_links:
        link(connections, src, dst, ctype)
    return parse_workflow({"nodes": base, "connections": connections})


def test_agent_without_a_model_fails_naming_the_node() -> None:
    wf = graph([])
    assert workflow_problems(wf, builtin_registry()) == ['Node "AI Agent" needs a Chat Model connected']


async def test_run_fails_on_a_broken_rule_with_the_nodes_name() -> None:
    wf = graph([("M1", "AI Agent", "ai_languageModel"), ("M2", "AI Agent", "ai_languageModel")])
    state = await Engine(builtin_registry()).run(wf, items=[chat_item("hi")])
    assert state.status == "error"
    assert state.error.message == 'Node "AI Agent" takes at most 1 Chat Model connection, but 2 are connected'
    assert state.error.node == "AI Agent"


def test_limits_of_memory_and_any_number_of_tools() -> None:
    registry = builtin_registry()
    wf = graph([("M1", "AI Agent", "ai_languageModel"), ("Mem1", "AI Agent", "ai_memory"), ("Mem2", "AI Agent", "ai_memory"),
                ("Calc", "AI Agent", "ai_tool"), ("Calc2", "AI Agent", "ai_tool")])
    assert workflow_problems(wf, registry) == ['Node "AI Agent" takes at most 1 Memory connection, but 2 are connected']


def test_connection_refusals_say_why() -> None:
    registry = builtin_registry()
    wf = graph([("M1", "AI Agent", "ai_languageModel")])
    assert connection_refusal(wf, registry, "M2", "ai_languageModel", "AI Agent") == (
        '"AI Agent" takes only 1 Chat Model; "M1" is connected already'
    )
    assert connection_refusal(wf, registry, "Calc", "ai_tool", "AI Agent") is None
    assert connection_refusal(wf, registry, "Calc", "ai_memory", "AI Agent") == '"Calc" has no Memory output'
    assert connection_refusal(wf, registry, "M1", "ai_languageModel", "Chat") == '"Chat" has no Chat Model input'
    assert connection_refusal(wf, registry, "AI Agent", "main", "AI Agent") == "A node cannot be connected to itself"
    assert connection_refusal(wf, registry, "M1", "ai_languageModel", "AI Agent") == '"M1" is already connected to "AI Agent"'


def test_disabled_sub_nodes_do_not_count() -> None:
    wf = agent_workflow([{"text": "x"}])
    assert workflow_problems(wf, builtin_registry()) == []
    wf.node("Model").disabled = True
    assert workflow_problems(wf, builtin_registry()) == ['Node "AI Agent" needs a Chat Model connected']
