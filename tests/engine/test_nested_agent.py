"""An Agent used as a tool: the outer agent calls the inner one, which calls the Calculator.

The hook events and run data show the nesting: every run under a call carries that call in
`parent`, and the inner agent's runs carry the outer call one level further down.
"""

from __future__ import annotations

import json

from typing import Any

from engine.executor import Engine
from engine.hooks import Hooks, NodeAfter, NodeBefore
from engine.workflow import Workflow, parse_workflow
from tests.builders import AGENT, CALCULATOR, CHAT_TRIGGER, SCRIPTED, link, node, tool_call
from tests.engine.pausing import at_boundaries, run_to_pause

AGENT_TOOL = "@n8n/n8n-nodes-langchain.agentTool"
SYSTEM = "You are a helpful assistant"  # as the editor writes it: n8n sends none when options lack it


def two_level_workflow(inner_params: dict[str, Any] | None = None) -> Workflow:
    nodes = [
        node("Chat", CHAT_TRIGGER),
        node("Outer Agent", AGENT, {"promptType": "auto", "options": {"returnIntermediateSteps": True, "systemMessage": SYSTEM}}),
        node("Outer Model", SCRIPTED, {"replies": [
            {"text": "", "toolCalls": [tool_call("Shop_Clerk", {"input": "What do 17 shirts at 25 dollars cost?"}, "outer_1")]},
            {"text": "17 shirts cost 425 dollars."},
        ]}),
        node("Shop Clerk", AGENT_TOOL, {"toolDescription": "Answers questions about prices", "options": {"systemMessage": SYSTEM},
                                        **(inner_params or {})}),
        node("Inner Model", SCRIPTED, {"replies": [
            {"text": "", "toolCalls": [tool_call("Calculator", {"input": "17 * 25"}, "inner_1")]},
            {"text": "They cost 425 dollars."},
        ]}),
        node("Calculator", CALCULATOR),
    ]
    connections: dict[str, Any] = {}
    link(connections, "Chat", "Outer Agent")
    link(connections, "Outer Model", "Outer Agent", "ai_languageModel")
    link(connections, "Shop Clerk", "Outer Agent", "ai_tool")
    link(connections, "Inner Model", "Shop Clerk", "ai_languageModel")
    link(connections, "Calculator", "Shop Clerk", "ai_tool")
    return parse_workflow({"name": "two-level agent", "nodes": nodes, "connections": connections})


def call_chain(parent: dict[str, Any] | None) -> list[str]:
    """The nesting of a run as `node/toolCallId` from the innermost call outwards."""
    chain = []
    while parent is not None:
        chain.append(f"{parent['node']}/{parent.get('toolCallId', '-')}")
        parent = parent.get("parent")
    return chain


async def test_outer_agent_calls_inner_agent_which_calls_the_calculator(engine: Engine) -> None:
    events: list[tuple[str, str, list[str]]] = []

    def listen(event: object) -> None:
        if isinstance(event, (NodeBefore, NodeAfter)):
            events.append(("before" if isinstance(event, NodeBefore) else "after", event.node, call_chain(event.parent)))

    state = await engine.run(two_level_workflow(), items=[{"json": {"chatInput": "Price of 17 shirts?"}}], hooks=Hooks(listen))
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "17 shirts cost 425 dollars."

    outer = "Outer Agent/outer_1"
    inner_model = ["Shop Clerk/-", outer]  # the inner agent asks its model while it runs for outer_1
    assert events == [
        ("before", "Chat", []),
        ("after", "Chat", []),
        ("before", "Outer Agent", []),
        ("before", "Outer Model", ["Outer Agent/-"]),
        ("after", "Outer Model", ["Outer Agent/-"]),
        ("before", "Shop Clerk", [outer]),
        ("before", "Inner Model", inner_model),
        ("after", "Inner Model", inner_model),
        ("before", "Calculator", ["Shop Clerk/inner_1", outer]),
        ("after", "Calculator", ["Shop Clerk/inner_1", outer]),
        ("before", "Inner Model", inner_model),
        ("after", "Inner Model", inner_model),
        ("after", "Shop Clerk", [outer]),
        ("before", "Outer Model", ["Outer Agent/-"]),
        ("after", "Outer Model", ["Outer Agent/-"]),
        ("after", "Outer Agent", []),
    ]

    # the outer model read the inner agent's answer as its output items (n8n's v3 agent)
    steps = state.result[0]["json"]["intermediateSteps"]
    assert steps[0]["action"]["tool"] == "Shop_Clerk"
    assert steps[0]["observation"] == '[{"response":"They cost 425 dollars."}]'
    # the inner agent got the outer model's argument as its prompt, and the calculator's result back
    inner_call = state.run_data["Inner Model"][1].input["ai_languageModel"][0][0]["json"]["messages"]
    assert inner_call[1] == {"role": "user", "content": "What do 17 shirts at 25 dollars cost?"}
    assert inner_call[-1]["content"] == "425"
    # run data carries the nesting too
    calculator = state.run_data["Calculator"][0]
    assert calculator.metadata["toolCallId"] == "inner_1"
    assert calculator.metadata["parent"]["toolCallId"] == "outer_1"
    clerk = state.run_data["Shop Clerk"]
    assert len(clerk) == 1 and clerk[0].metadata["toolCallId"] == "outer_1"
    assert clerk[0].data["ai_tool"][0][0]["json"] == {"response": "They cost 425 dollars."}


async def test_inner_agent_tool_schema_comes_from_its_prompt(engine: Engine) -> None:
    wf = two_level_workflow({"text": "=Customer {{ $json.customer }} asks: {{ $json.question }}"})
    outer_model = wf.node("Outer Model")
    outer_model.parameters["replies"][0]["toolCalls"][0]["args"] = {"customer": "Ada", "question": "17 shirts?"}
    state = await engine.run(wf, items=[{"json": {"chatInput": "go"}}])
    assert state.status == "success", state.error
    inner_call = state.run_data["Inner Model"][0].input["ai_languageModel"][0][0]["json"]["messages"]
    assert inner_call[1]["content"] == "Customer Ada asks: 17 shirts?"


async def test_missing_argument_for_the_inner_agent_is_told_to_the_model(engine: Engine) -> None:
    wf = two_level_workflow()
    wf.node("Outer Model").parameters["replies"][0]["toolCalls"][0]["args"] = {"question": "?"}
    state = await engine.run(wf, items=[{"json": {"chatInput": "go"}}])
    assert state.status == "success"
    observation = state.result[0]["json"]["intermediateSteps"][0]["observation"]
    assert observation == "Error: the arguments for tool 'Shop_Clerk' do not fit its schema: arguments miss the required field 'input'"
    assert "Shop Clerk" not in state.run_data


async def test_inner_agent_failure_is_an_observation_for_the_outer_model(engine: Engine) -> None:
    wf = two_level_workflow()
    wf.node("Inner Model").parameters["replies"] = [{"error": "the inner model is down"}]
    state = await engine.run(wf, items=[{"json": {"chatInput": "go"}}])
    assert state.status == "success"
    observation = state.result[0]["json"]["intermediateSteps"][0]["observation"]
    assert json.loads(observation)["error"] == "the inner model is down"
    assert state.run_data["Shop Clerk"][0].execution_status == "error"


async def test_nested_run_resumes_from_json_at_every_boundary(engine: Engine) -> None:
    """Stop before every stack entry, keep only JSON text, continue in a fresh engine: same answer."""
    import json

    from engine.registry import builtin_registry

    execution = engine.create(two_level_workflow(), items=[{"json": {"chatInput": "Price of 17 shirts?"}}])
    everywhere = at_boundaries("Chat", "Outer Agent")
    state = await run_to_pause(execution, everywhere)
    kinds: list[tuple[str, str]] = []
    while state.status == "paused":
        snapshot = json.dumps(execution.snapshot())
        top = json.loads(snapshot)["stack"][-1]
        kinds.append((top["node"], top.get("mode", "main")))
        execution = Engine(builtin_registry(), engine.services).restore(json.loads(snapshot))
        state = await run_to_pause(execution, everywhere)
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "17 shirts cost 425 dollars."
    assert ("Calculator", "tool") in kinds and ("Shop Clerk", "tool") in kinds
    assert state.run_data["Calculator"][0].metadata["parent"]["toolCallId"] == "outer_1"


async def test_inner_agent_called_twice_keeps_each_call_apart(engine: Engine) -> None:
    wf = two_level_workflow()
    wf.node("Outer Model").parameters["replies"] = [
        {"text": "", "toolCalls": [
            tool_call("Shop_Clerk", {"input": "Price of 17 shirts at 25?"}, "outer_1"),
            tool_call("Shop_Clerk", {"input": "Price of 3 hats at 12?"}, "outer_2"),
        ]},
        {"text": "425 and 36 dollars."},
    ]
    wf.node("Inner Model").parameters["replies"] = [
        {"text": "", "toolCalls": [tool_call("Calculator", {"input": "17 * 25"}, "a1")]},
        {"text": "425 dollars."},
        {"text": "", "toolCalls": [tool_call("Calculator", {"input": "3 * 12"}, "b1")]},
        {"text": "36 dollars."},
    ]
    state = await engine.run(wf, items=[{"json": {"chatInput": "go"}}])
    assert state.status == "success", state.error
    steps = state.result[0]["json"]["intermediateSteps"]
    assert [(s["action"]["toolCallId"], json.loads(s["observation"])[0]["response"]) for s in steps] == [
        ("outer_1", "425 dollars."), ("outer_2", "36 dollars.")]
    prompts = [run.input["ai_languageModel"][0][0]["json"]["messages"][1]["content"] for run in state.run_data["Inner Model"]]
    assert prompts == ["Price of 17 shirts at 25?"] * 2 + ["Price of 3 hats at 12?"] * 2
    # the second call's model saw only its own calculator step, not the first call's
    last = state.run_data["Inner Model"][3].input["ai_languageModel"][0][0]["json"]["messages"]
    assert [m.get("toolCallId") for m in last if m["role"] == "tool"] == ["b1"]
    assert [r.metadata["parent"]["toolCallId"] for r in state.run_data["Calculator"]] == ["outer_1", "outer_2"]
