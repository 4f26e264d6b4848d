"""The Tools Agent loop of the seed: the engine runs tools, resumes the Agent, and the limits hold."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from engine.executor import Engine
from engine.hooks import Hooks, NodeAfter, NodeBefore
from nodes.triggers.chat_trigger import chat_item
from tests.builders import CALCULATOR, MANUAL_TRIGGER, SCRIPTED, AGENT, SET, agent_workflow, items_agent_workflow, link, node, tool_call
from engine.workflow import parse_workflow


def chat(message: str = "What is 2 + 2?", session: str = "s1") -> list:
    return [chat_item(message, session)]


async def test_engine_runs_the_tool_node_and_resumes_with_its_result(engine: Engine) -> None:
    wf = agent_workflow([
        {"toolCalls": [tool_call("Calculator", {"input": "17 * 25"})]},
        {"text": "17 shirts cost 425 dollars."},
    ])
    state = await engine.run(wf, items=chat("How much do 17 shirts at 25 cost?"))
    assert state.status == "success"
    assert state.result == [{"json": {"output": "17 shirts cost 425 dollars."}, "pairedItem": {"item": 0}}]
    calc = state.run_data["Calculator"]
    assert len(calc) == 1
    assert calc[0].data["ai_tool"][0][0]["json"] == {"response": "425"}
    assert calc[0].input["ai_tool"][0][0]["json"] == {"input": "17 * 25"}
    # the second model call saw the tool call and its result in the scratchpad
    second = state.run_data["Model"][1].input["ai_languageModel"][0][0]["json"]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert second[2]["toolCalls"][0]["name"] == "Calculator"
    # as n8n's v3 agent: the call carries its id among its arguments, the result is the tool's items as JSON
    assert second[2]["toolCalls"][0]["args"] == {"input": "17 * 25", "id": "call_1_1"}
    assert second[3] == {"role": "tool", "content": '[{"response":"425"}]', "toolCallId": "call_1_1"}
    # one TaskData for the Agent, though execute() ran twice
    assert len(state.run_data["AI Agent"]) == 1
    assert state.run_data["AI Agent"][0].metadata["iterations"] == 2


async def test_runs_several_tools_requested_in_one_step(engine: Engine) -> None:
    wf = agent_workflow(
        [
            {"toolCalls": [tool_call("Calculator", {"input": "2 + 2"}, "a"), tool_call("Other", {"input": "3 * 3"}, "b")]},
            {"text": "4 and 9"},
        ],
        tools=[("Calculator", CALCULATOR, {}), ("Other", CALCULATOR, {})],
    )
    events: list[str] = []
    hooks = Hooks(lambda e: events.append(f"{'▶' if isinstance(e, NodeBefore) else '✓'} {e.node}") if isinstance(e, (NodeBefore, NodeAfter)) else None)
    state = await engine.run(wf, items=chat(), hooks=hooks)
    assert state.status == "success"
    assert events.index("✓ Calculator") < events.index("▶ Other")
    # both results reached the model in one round, in the order they were asked for
    messages = state.run_data["Model"][1].input["ai_languageModel"][0][0]["json"]["messages"]
    tool_msgs = [m for m in messages if m["role"] == "tool"]
    assert [(m["toolCallId"], m["content"]) for m in tool_msgs] == [("a", '[{"response":"4"}]'), ("b", '[{"response":"9"}]')]
    assert len(state.run_data["Model"]) == 2


async def test_gives_a_tool_error_back_to_the_model_instead_of_failing(engine: Engine) -> None:
    wf = agent_workflow([
        {"toolCalls": [tool_call("Calculator", {"input": "1 / 0"})]},
        {"text": "You cannot divide by zero."},
    ])
    state = await engine.run(wf, items=chat())
    assert state.status == "success"
    calc = state.run_data["Calculator"][0]
    assert calc.execution_status == "error"
    assert calc.error is not None and calc.error.message == "division by zero"
    messages = state.run_data["Model"][1].input["ai_languageModel"][0][0]["json"]["messages"]
    assert messages[-1]["content"] == '{"error":"division by zero","errorType":"NodeOperationError"}'
    assert state.result == [{"json": {"output": "You cannot divide by zero."}, "pairedItem": {"item": 0}}]


async def test_stops_after_max_iterations(engine: Engine) -> None:
    wf = agent_workflow(
        [{"toolCalls": [tool_call("Calculator", {"input": "1 + 1"})]}] * 5,
        agent_options={"maxIterations": 3},
    )
    state = await engine.run(wf, items=chat())
    assert state.status == "error"
    assert state.error is not None
    assert state.error.message == (
        "Max iterations (3) reached. The agent could not complete the task within the allowed number of iterations."
    )
    assert state.error.node == "AI Agent"
    assert len(state.run_data["Model"]) == 3
    assert len(state.run_data["Calculator"]) == 3


async def test_max_iterations_one_fails_on_the_agents_second_call(engine: Engine) -> None:
    """Seed exercise: maxIterations 1 and "What is 2 + 2?".

    Call 1 of the Agent: the model asks for the calculator, so the Agent returns a request
    with iterationCount 1. The engine runs the calculator and calls the Agent again; on that
    second call, before any model call, iterationCount (1) >= maxIterations (1) and it fails.
    The model was called once, the calculator ran once, the answer (4) never reached the user.
    """
    wf = agent_workflow(
        [{"toolCalls": [tool_call("Calculator", {"input": "2 + 2"})]}, {"text": "2 + 2 is 4."}],
        agent_options={"maxIterations": 1},
    )
    state = await engine.run(wf, items=chat("What is 2 + 2?"))
    assert state.status == "error"
    assert state.error is not None and state.error.message.startswith("Max iterations (1) reached.")
    assert len(state.run_data["Model"]) == 1
    assert state.run_data["Calculator"][0].data["ai_tool"][0][0]["json"] == {"response": "4"}
    agent_task = state.run_data["AI Agent"][0]
    assert agent_task.execution_status == "error"
    assert agent_task.metadata["iterations"] == 2  # failed on the second call


async def test_exact_hook_event_sequence_of_the_seed(engine: Engine) -> None:
    nodes = [
        node("Start", MANUAL_TRIGGER),
        node("Input", SET, {"assignments": {"assignments": [{"name": "chatInput", "value": "What is 2 + 2?", "type": "string"}]}}),
        node("AI Agent", AGENT, {"promptType": "auto"}),
        node("Model", SCRIPTED, {"replies": [{"toolCalls": [tool_call("Calculator", {"input": "2 + 2"})]}, {"text": "4"}]}),
        node("Calculator", CALCULATOR),
    ]
    connections: dict = {}
    link(connections, "Start", "Input")
    link(connections, "Input", "AI Agent")
    link(connections, "Model", "AI Agent", "ai_languageModel")
    link(connections, "Calculator", "AI Agent", "ai_tool")
    wf = parse_workflow({"name": "seed", "nodes": nodes, "connections": connections})
    events: list[str] = []

    def listen(event) -> None:
        if isinstance(event, NodeBefore):
            events.append(f"▶ {event.node}")
        elif isinstance(event, NodeAfter):
            events.append(f"✓ {event.node}")

    state = await engine.run(wf, hooks=Hooks(listen))
    assert state.status == "success"
    assert events == [
        "▶ Start", "✓ Start", "▶ Input", "✓ Input", "▶ AI Agent", "▶ Model", "✓ Model",
        "▶ Calculator", "✓ Calculator", "▶ Model", "✓ Model", "✓ AI Agent",
    ]


async def test_unknown_tool_names_are_dropped_and_the_text_is_the_answer(engine: Engine) -> None:
    wf = agent_workflow([{"text": "I would search the web.", "toolCalls": [tool_call("web_search", {"q": "x"})]}])
    state = await engine.run(wf, items=chat())
    assert state.status == "success"
    assert state.result == [{"json": {"output": "I would search the web."}, "pairedItem": {"item": 0}}]
    assert "Calculator" not in state.run_data


async def test_only_known_tool_calls_run_when_some_are_unknown(engine: Engine) -> None:
    wf = agent_workflow([
        {"toolCalls": [tool_call("nope", {}), tool_call("Calculator", {"input": "6*7"}, "k")]},
        {"text": "42"},
    ])
    state = await engine.run(wf, items=chat())
    assert state.status == "success"
    assert len(state.run_data["Calculator"]) == 1
    messages = state.run_data["Model"][1].input["ai_languageModel"][0][0]["json"]["messages"]
    assert [m.get("toolCallId") for m in messages if m["role"] == "tool"] == ["k"]


async def test_default_system_message_and_empty_text_error(engine: Engine) -> None:
    wf = agent_workflow([{"text": "hello"}], agent_options={}, tools=[])
    state = await engine.run(wf, items=chat("hi"))
    messages = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["messages"]
    assert messages[0] == {"role": "system", "content": "You are a helpful assistant"}
    empty = await engine.run(agent_workflow([{"text": "x"}], tools=[]), items=chat("   "))
    assert empty.status == "error"
    assert empty.error is not None and empty.error.message == 'The "text" parameter is empty.'
    define = agent_workflow([{"text": "x"}], tools=[], agent_params={"promptType": "define", "text": "={{ $json.missing }}"})
    state = await engine.run(define, items=chat("hi"))
    assert state.error is not None and state.error.message == 'The "text" parameter is empty.'


async def test_defined_prompt_reads_an_expression(engine: Engine) -> None:
    wf = agent_workflow([{"text": "ok"}], tools=[], agent_params={"promptType": "define", "text": "=Answer: {{ $json.chatInput }}"})
    state = await engine.run(wf, items=chat("why?"))
    messages = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["messages"]
    assert messages[1] == {"role": "user", "content": "Answer: why?"}


async def test_return_intermediate_steps_gives_n8ns_shape(engine: Engine) -> None:
    wf = agent_workflow(
        [{"text": "Let me compute.", "toolCalls": [tool_call("Calculator", {"input": "2+3"}, "c1")]}, {"text": "5"}],
        agent_options={"returnIntermediateSteps": True},
    )
    state = await engine.run(wf, items=chat())
    out = state.result[0]["json"]
    assert out["output"] == "5"
    content = 'Calling Calculator with input: {"input":"2+3","id":"c1"}'
    call = {"id": "c1", "name": "Calculator", "args": {"input": "2+3", "id": "c1"}, "type": "tool_call", "additional_kwargs": {}}
    assert out["intermediateSteps"] == [
        {
            "action": {
                "tool": "Calculator",
                "toolInput": "2+3",  # the `input` argument alone, when it is text
                "log": content,
                "messageLog": [{
                    "lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "AIMessage"],
                    "kwargs": {"content": content, "tool_calls": [call], "invalid_tool_calls": [],
                               "additional_kwargs": {}, "response_metadata": {}},
                }],
                "toolCallId": "c1",
                "type": "tool_call",
            },
            "observation": '[{"response":"5"}]',
        }
    ]


async def test_intermediate_steps_of_v2_agents_keep_langchains_shape(engine: Engine) -> None:
    """n8n's v1/v2 agents run LangChain tools in-process: the model reads the tool's own answer."""
    wf = agent_workflow(
        [{"text": "Let me compute.", "toolCalls": [tool_call("Calculator", {"input": "2+3"}, "c1")]}, {"text": "5"}],
        agent_options={"returnIntermediateSteps": True},
    )
    for n in wf.nodes:
        if n.name == "AI Agent":
            n.typeVersion = 2.2
    state = await engine.run(wf, items=chat())
    assert state.result[0]["json"]["intermediateSteps"] == [
        {
            "action": {
                "tool": "Calculator",
                "toolInput": {"input": "2+3"},
                "toolCallId": "c1",
                "log": 'Invoking "Calculator" with {"input":"2+3"}\nLet me compute.',
            },
            "observation": "5",
        }
    ]
    second = state.run_data["Model"][1].input["ai_languageModel"][0][0]["json"]["messages"]
    assert second[-2]["toolCalls"][0]["args"] == {"input": "2+3"}
    assert second[-1]["content"] == "5"


async def test_no_intermediate_steps_without_a_tool_call_in_v3(engine: Engine) -> None:
    wf = agent_workflow([{"text": "hi"}], agent_options={"returnIntermediateSteps": True})
    state = await engine.run(wf, items=chat())
    assert state.result[0]["json"] == {"output": "hi"}


async def test_invalid_tool_arguments_become_an_error_observation(engine: Engine) -> None:
    wf = agent_workflow([
        {"toolCalls": [tool_call("Calculator", '{"input": "2+', "bad")]},
        {"toolCalls": [tool_call("Calculator", {"expr": "2+2"}, "wrong")]},
        {"text": "gave up"},
    ])
    state = await engine.run(wf, items=chat())
    assert state.status == "success"
    assert "Calculator" not in state.run_data  # neither call reached the tool
    messages = state.run_data["Model"][2].input["ai_languageModel"][0][0]["json"]["messages"]
    tool_msgs = [m["content"] for m in messages if m["role"] == "tool"]
    assert tool_msgs[0] == "Error: the arguments for tool 'Calculator' are not valid JSON: {\"input\": \"2+"
    assert tool_msgs[1].startswith("Error: the arguments for tool 'Calculator' do not fit its schema: arguments have an unknown field 'expr'")
    # the raw arguments stay visible in the model's run data
    raw = state.run_data["Model"][0].data["ai_languageModel"][0][0]["json"]["toolCalls"][0]["args"]
    assert raw == '{"input": "2+'


def _two_items(version: float, replies: list[dict]) -> Any:
    nodes = [
        node("Start", MANUAL_TRIGGER),
        node("AI Agent", AGENT, {"promptType": "define", "text": "={{ $json.q }}"}, typeVersion=version),
        node("Model", SCRIPTED, {"replies": replies}),
        node("Calculator", CALCULATOR),
    ]
    connections: dict = {}
    link(connections, "Start", "AI Agent")
    link(connections, "Model", "AI Agent", "ai_languageModel")
    link(connections, "Calculator", "AI Agent", "ai_tool")
    return parse_workflow({"name": "items", "nodes": nodes, "connections": connections})


async def test_a_v3_agent_asks_again_for_every_item_each_round_as_n8n_does(engine: Engine) -> None:
    replies = [
        {"text": "first is easy"},                                   # item 0, round 1
        {"toolCalls": [tool_call("Calculator", {"input": "3*3"})]},  # item 1, round 1
        {"text": "first again"},                                     # item 0, round 2
        {"text": "nine"},                                            # item 1, round 2
    ]
    items = [{"json": {"q": "one"}}, {"json": {"q": "three squared"}}]
    state = await engine.run(_two_items(3, replies), start="Start", items=items)
    assert state.status == "success"
    assert [i["json"]["output"] for i in state.result] == ["first again", "nine"]
    users = [[m["content"] for m in run.input["ai_languageModel"][0][0]["json"]["messages"] if m["role"] == "user"]
             for run in state.run_data["Model"]]
    assert users == [["one"], ["three squared"], ["one"], ["three squared"]]
    roles = [[m["role"] for m in run.input["ai_languageModel"][0][0]["json"]["messages"]] for run in state.run_data["Model"]]
    assert roles[2:] == [["user"], ["user", "assistant", "tool"]]  # the tool result reaches the item that asked


async def test_batches_of_a_v3_agent_wait_the_delay_between_them(engine: Engine) -> None:
    replies = [{"text": f"answer {i}"} for i in range(3)]
    wf = _two_items(3, replies)
    wf.node("AI Agent").parameters["options"] = {"batching": {"batchSize": 2, "delayBetweenBatches": 300}}
    items = [{"json": {"q": "a"}}, {"json": {"q": "b"}}, {"json": {"q": "c"}}]
    started = time.monotonic()
    state = await engine.run(wf, start="Start", items=items)
    assert state.status == "success"
    assert [i["json"]["output"] for i in state.result] == ["answer 0", "answer 1", "answer 2"]
    assert time.monotonic() - started >= 0.3  # one pause: after the first batch of two


async def test_several_items_each_run_their_own_loop_and_finished_items_are_skipped(engine: Engine) -> None:
    """v1/v2 agents run each item's loop to its end (n8n's LangChain AgentExecutor per item)."""
    nodes = [
        node("Start", MANUAL_TRIGGER),
        node("AI Agent", AGENT, {"promptType": "define", "text": "={{ $json.q }}"}, typeVersion=2),
        node("Model", SCRIPTED, {"replies": [
            {"text": "first is easy"},                                        # item 0, round 1: done
            {"toolCalls": [tool_call("Calculator", {"input": "3*3"})]},  # item 1, round 1
            {"text": "nine"},                                                  # item 1, round 2
        ]}),
        node("Calculator", CALCULATOR),
    ]
    connections: dict = {}
    link(connections, "Start", "AI Agent")
    link(connections, "Model", "AI Agent", "ai_languageModel")
    link(connections, "Calculator", "AI Agent", "ai_tool")
    wf = parse_workflow({"name": "items", "nodes": nodes, "connections": connections})
    items = [{"json": {"q": "one"}}, {"json": {"q": "three squared"}}]
    state = await engine.run(wf, start="Start", items=items)
    assert state.status == "success"
    assert state.result == [{"json": {"output": "first is easy"}, "pairedItem": {"item": 0}}, {"json": {"output": "nine"}, "pairedItem": {"item": 1}}]
    assert len(state.run_data["Model"]) == 3  # item 0 was not asked again in round 2
    users = [
        [m["content"] for m in run.input["ai_languageModel"][0][0]["json"]["messages"] if m["role"] == "user"]
        for run in state.run_data["Model"]
    ]
    assert users == [["one"], ["three squared"], ["three squared"]]
    assert state.run_data["Calculator"][0].metadata["itemIndex"] == 1


async def test_memory_across_two_messages_of_a_session_and_not_across_sessions(engine: Engine) -> None:
    wf = agent_workflow([{"text": "Nice to meet you, Ada."}], memory=True, tools=[])
    first = await engine.run(wf, items=chat("My name is Ada.", "session-a"))
    assert first.status == "success"
    wf2 = agent_workflow([{"text": "Your name is Ada."}], memory=True, tools=[])
    second = await engine.run(wf2, items=chat("What is my name?", "session-a"))
    messages = second.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("system", "You are a helpful assistant"),
        ("user", "My name is Ada."),
        ("assistant", "Nice to meet you, Ada."),
        ("user", "What is my name?"),
    ]
    other = await engine.run(wf2, items=chat("What is my name?", "session-b"))
    messages = other.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]


async def test_memory_is_saved_only_with_the_final_answer(engine: Engine) -> None:
    wf = agent_workflow(
        [{"toolCalls": [tool_call("Calculator", {"input": "2+2"})]}, {"text": "4"}], memory=True
    )
    state = await engine.run(wf, items=chat("2+2?", "m"))
    actions = [run.data["ai_memory"][0][0]["json"]["action"] for run in state.run_data["Memory"]]
    assert actions == ["loadMemoryVariables", "loadMemoryVariables", "saveContext"]
    saved = state.run_data["Memory"][-1].data["ai_memory"][0][0]["json"]
    # n8n's v3 agent saves which tools it used in front of the answer
    assert (saved["input"], saved["output"]) == ("2+2?", '[Used tools: Tool: Calculator, Input: "2+2", Result: [{"response":"4"}]] 4')


async def test_memory_window_keeps_the_last_turns(engine: Engine) -> None:
    for i in range(7):
        wf = agent_workflow([{"text": f"answer {i}"}], memory=True, tools=[])
        state = await engine.run(wf, items=chat(f"question {i}", "w"))
    messages = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["messages"]
    history = [m["content"] for m in messages[1:-1]]
    assert history[0] == "question 1" and history[-1] == "answer 5" and len(history) == 10


async def test_model_error_fails_the_run_on_the_model_node(engine: Engine) -> None:
    wf = agent_workflow([{"error": "the model server is down"}], tools=[])
    state = await engine.run(wf, items=chat())
    assert state.status == "error"
    assert state.error is not None and state.error.message == "the model server is down"
    assert state.run_data["Model"][0].execution_status == "error"
    assert state.run_data["AI Agent"][0].execution_status == "error"


async def test_agent_sums_token_usage_per_execution(engine: Engine) -> None:
    wf = agent_workflow([
        {"toolCalls": [tool_call("Calculator", {"input": "1+1"})], "usage": {"promptTokens": 10, "completionTokens": 3}},
        {"text": "2", "usage": {"promptTokens": 20, "completionTokens": 1}},
    ])
    state = await engine.run(wf, items=chat())
    meta = state.run_data["AI Agent"][0].metadata
    assert meta["tokenUsage"] == {"promptTokens": 30, "completionTokens": 4}
    assert meta["modelCalls"] == 2
    model_meta = [run.metadata for run in state.run_data["Model"]]
    assert [m["iteration"] for m in model_meta] == [1, 2]
    assert model_meta[0]["tokenUsage"] == {"promptTokens": 10, "completionTokens": 3}


async def test_tool_runs_carry_their_parent_call(engine: Engine) -> None:
    wf = agent_workflow([{"toolCalls": [tool_call("Calculator", {"input": "1+1"}, "x1")]}, {"text": "2"}])
    state = await engine.run(wf, items=chat())
    meta = state.run_data["Calculator"][0].metadata
    assert meta == {"node": "AI Agent", "runIndex": 0, "iteration": 1, "itemIndex": 0, "toolCallId": "x1", "toolName": "Calculator"}
    json.dumps(state.to_json())  # the whole state is plain JSON


async def test_model_runs_share_one_message_log_and_read_as_json(engine: Engine) -> None:
    rounds = 4
    wf = agent_workflow(
        [{"toolCalls": [tool_call("Calculator", {"input": f"{i} + 1"})]} for i in range(rounds)] + [{"text": "done"}],
    )
    state = await engine.run(wf, items=chat())
    assert state.status == "success"
    recorded = [run.input["ai_languageModel"][0][0]["json"]["messages"] for run in state.run_data["Model"]]
    assert [len(m) for m in recorded] == [2, 4, 6, 8, 10]
    # each run keeps a window on one shared log: no run holds a copy of the conversation
    assert all(m.log is recorded[0].log for m in recorded)
    assert recorded[1] == list(recorded[-1])[:4]
    # written out, the runs are plain n8n-shaped JSON, and a JSON round trip gives the same state
    snapshot = json.loads(json.dumps(state.to_json()))
    stored = snapshot["runData"]["Model"][2]["input"]["ai_languageModel"][0][0]["json"]["messages"]
    assert [m["role"] for m in stored] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert stored[-1] == {"role": "tool", "content": '[{"response":"2"}]', "toolCallId": "call_2_1"}
    assert json.loads(json.dumps(state.run_data["Model"][2].to_json()))["input"] == snapshot["runData"]["Model"][2]["input"]


async def test_the_items_of_a_v3_agent_share_the_first_items_messages_instead_of_copying_them(engine: Engine) -> None:
    """n8n's v3 Agent gives each item after the first the first item's steps, one more every
    round, then its own step of the round before. Each recorded model run reads exactly that, on
    logs that stand on one another: what the runs hold grows with the rounds, not their square."""
    items, held = 3, {}
    for rounds in (10, 30):
        state = await engine.run(items_agent_workflow(items, rounds))
        assert state.status == "success"
        windows = [run.input["ai_languageModel"][0][0]["json"]["messages"] for run in state.run_data["Model"]]
        for k, window in enumerate(windows):
            r, i = divmod(k, items)  # round r of item i; model run k answered "call_{k+1}_1"
            calls = [m["toolCallId"] for m in window if m["role"] == "tool"]
            assert calls == [f"call_{items * j + 1}_1" for j in range(r - 1)] + ([f"call_{items * (r - 1) + i + 1}_1"] if r else [])
        logs = {id(log): len(log.items) for window in windows for log, _, _ in window.segments()}
        held[rounds] = sum(logs.values())
    assert held[30] < 3 * 1.25 * held[10]


def test_a_round_appends_its_steps_to_the_log_of_the_last_round() -> None:
    from engine.requests import Action, ActionResponse, EngineResponse
    from engine.shared_log import LogWindow
    from nodes.agent.steps import build_steps, make_step

    earlier = LogWindow.of([make_step("a", "Calculator", {"input": "1"}, "1")])

    def response(previous: object, call_id: str) -> EngineResponse:
        action = Action(nodeName="Calculator", input={"input": "2"}, id=call_id, metadata={"itemIndex": 0})
        answer = ActionResponse(action=action, data={"data": {"ai_tool": [[{"json": {"response": "2"}}]]}})
        return EngineResponse(actionResponses=[answer], metadata={"previousRequests": {"0": previous}})

    steps = build_steps(response(earlier, "b"), 0)
    assert steps.log is earlier.log  # no copy of the earlier steps
    assert [s["toolCallId"] for s in steps] == ["a", "b"] and len(earlier) == 1
    # an answer that is already a step is not added again; a stored (plain list) scratchpad works too
    assert [s["toolCallId"] for s in build_steps(response(steps, "b"), 0)] == ["a", "b"]
    assert [s["toolCallId"] for s in build_steps(response(steps.to_list(), "c"), 0)] == ["a", "b", "c"]
    # the request of the earlier round still holds what it held
    assert [s["toolCallId"] for s in build_steps(response(earlier, "x"), 0)] == ["a", "x"] and len(steps) == 2
