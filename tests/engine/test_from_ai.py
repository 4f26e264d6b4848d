"""n8n's `$fromAI(...)`: parameters of a tool node that the calling model fills in."""

from __future__ import annotations

import json

import pytest

from engine.errors import ExpressionError
from engine.executor import Engine
from engine.expressions import evaluate
from engine.from_ai import UNFILLED, fields_in, parse, with_fields
from nodes.triggers.chat_trigger import chat_item
from tests.builders import AGENT, CALCULATOR, CHAT_TRIGGER, SCRIPTED, agent_workflow, link, node, tool_call
from tests.nodes.tools.agent_runs import observation, run_tool_once
from tests.nodes.tools.loopback_http import serve
from engine.workflow import parse_workflow

AGENT_TOOL = "@n8n/n8n-nodes-langchain.agentTool"
HTTP = "@n8n/n8n-nodes-langchain.toolHttpRequest"


def test_calls_are_read_without_evaluating_anything() -> None:
    call = parse(" $fromAI('city', `The city, e.g. \"Paris\"`, 'string') ")
    assert (call.key, call.description, call.type, call.required) == ("city", 'The city, e.g. "Paris"', "string", True)
    with_default = parse('$fromAi("limit", "", "number", 10)')
    assert (with_default.type, with_default.default, with_default.required) == ("number", 10, False)
    assert parse("$json.city") is None
    with pytest.raises(ExpressionError, match="literal arguments only"):
        parse("$fromAI('x', $json.y)")
    with pytest.raises(ExpressionError, match="first argument"):
        parse("$fromAI('no spaces allowed')")
    with pytest.raises(ExpressionError, match="type must be one of"):
        parse("$fromAI('x', '', 'date')")


def test_values_come_from_the_models_arguments_with_their_type() -> None:
    args = {"city": "Oslo", "n": "3", "flag": "true"}
    assert evaluate("=Weather in {{ $fromAI('city') }}", {}, args) == "Weather in Oslo"
    assert evaluate("={{ $fromAI('n', '', 'number') }}", {}, args) == 3.0
    assert evaluate("={{ $fromAI('flag', '', 'boolean') }}", {}, args) is True
    assert evaluate("={{ $fromAI('missing', '', 'number', 7) }}", {}, args) == 7
    with pytest.raises(ExpressionError, match="gave no value for 'missing'"):
        evaluate("={{ $fromAI('missing') }}", {}, args)
    with pytest.raises(ExpressionError, match="works in a node an agent calls as a tool"):
        evaluate("={{ $fromAI('city') }}", {"city": "x"})
    assert evaluate("={{ $fromAI('n', '', 'number') }}", {}, UNFILLED) == 0


def test_fields_become_the_tool_schema() -> None:
    params = {"url": "=https://x/{{ $fromAI('city', 'The city') }}", "options": {"q": "={{ $fromAI('limit', '', 'number', 5) }}"}}
    fields = fields_in(params)
    assert [f.key for f in fields] == ["city", "limit"]
    schema = with_fields({"type": "object", "properties": {"own": {"type": "string"}}, "required": ["own"]}, fields)
    assert schema["properties"]["city"] == {"type": "string", "description": "The city"}
    assert schema["properties"]["limit"] == {"type": "number"}
    assert schema["required"] == ["own", "city"]


async def test_an_http_tool_url_filled_by_the_model(engine: Engine) -> None:
    with serve() as base:
        params = {"method": "GET", "url": "=" + base + "/weather/{{ $fromAI('city', 'The city to look up') }}",
                  "toolDescription": "Weather"}
        state = await run_tool_once(engine, HTTP, params, {"city": "Oslo"}, name="Weather")
        assert json.loads(observation(state))["path"] == "/weather/Oslo"
        schema = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["tools"]
        assert schema == ["Weather"]


async def test_n8ns_default_ai_agent_tool_prompt(engine: Engine) -> None:
    """n8n writes the AI Agent Tool's prompt as `$fromAI('Prompt__User_Message_', ...)`."""
    nodes = [
        node("Chat", CHAT_TRIGGER),
        node("AI Agent", AGENT),
        node("Outer model", SCRIPTED, {"replies": [
            {"toolCalls": [tool_call("Math_agent", {"Prompt__User_Message_": "What is 6 * 7?"}, "o1")]},
            {"text": "The math agent says 42."},
        ]}),
        node("Math agent", AGENT_TOOL, {
            "toolDescription": "Does arithmetic",
            "text": "={{ $fromAI('Prompt__User_Message_', ``, 'string') }}",
        }),
        node("Inner model", SCRIPTED, {"replies": [
            {"toolCalls": [tool_call("Calculator", {"input": "6 * 7"}, "i1")]}, {"text": "42"},
        ]}),
        node("Calculator", CALCULATOR),
    ]
    connections: dict = {}
    link(connections, "Chat", "AI Agent")
    link(connections, "Outer model", "AI Agent", "ai_languageModel")
    link(connections, "Math agent", "AI Agent", "ai_tool")
    link(connections, "Inner model", "Math agent", "ai_languageModel")
    link(connections, "Calculator", "Math agent", "ai_tool")
    wf = parse_workflow({"name": "fromAI", "nodes": nodes, "connections": connections})
    execution = engine.create(wf, items=[chat_item("six times seven?", "f")])
    tools_seen: list = []
    original = execution.supply

    async def spy(ctx, conn_type, item_index, *more):  # the schema the outer model is given
        found = await original(ctx, conn_type, item_index, *more)
        if ctx.node.name == "AI Agent" and conn_type == "ai_tool":
            tools_seen.extend(found)
        return found

    execution.supply = spy  # type: ignore[method-assign]
    state = await execution.run()
    assert state.status == "success", state.error
    assert state.result == [{"json": {"output": "The math agent says 42."}, "pairedItem": {"item": 0}}]
    inner_user = [m for m in state.run_data["Inner model"][0].input["ai_languageModel"][0][0]["json"]["messages"] if m["role"] == "user"]
    assert inner_user[0]["content"] == "What is 6 * 7?"
    schema = tools_seen[0].parameters
    assert schema["properties"]["Prompt__User_Message_"] == {"type": "string"}
    assert schema["required"] == ["Prompt__User_Message_"]


async def test_from_ai_outside_a_tool_is_a_clear_error(engine: Engine) -> None:
    wf = agent_workflow([{"text": "x"}], tools=[], agent_params={"promptType": "define", "text": "={{ $fromAI('q') }}"})
    state = await engine.run(wf, items=[chat_item("hi", "e")])
    assert state.status == "error"
    assert "$fromAI('q') is filled in by the model" in state.error.message
