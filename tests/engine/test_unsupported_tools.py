"""Tool sub-nodes of types mini-n8n does not run: the agent still runs, each call is an error
observation naming the type; pinned data on a tool sub-node is its answer."""

from __future__ import annotations

import json

from engine.executor import Engine
from engine.run_log import format_line
from engine.start import unsupported_on_path
from engine.steps_table import StepBook
from engine.hooks import Hooks, NodeAfter
from engine.workflow import parse_workflow
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call

SERP = "@n8n/n8n-nodes-langchain.toolSerpApi"


def _workflow(replies: list, pin: list | None = None, params: dict | None = None):
    wf = agent_workflow(replies, tools=[("SerpAPI search", SERP, params or {})])
    if pin is None:
        return wf
    doc = json.loads(wf.to_json())
    doc["pinData"] = {"SerpAPI search": pin}
    return parse_workflow(doc)


async def test_the_agent_runs_and_each_call_is_an_error_naming_the_type(engine: Engine) -> None:
    wf = _workflow([{"toolCalls": [tool_call("SerpAPI_search", {"input": "weather"}, "c1")]}, {"text": "no search today"}],
                   params={"toolDescription": "Search the web"})
    events: list[NodeAfter] = []
    state = await engine.run(wf, items=[chat_item("weather?", "s")], hooks=Hooks(lambda e: events.append(e) if isinstance(e, NodeAfter) else None))
    assert state.status == "success", state.error
    assert state.result[0]["json"]["output"] == "no search today"
    model_in = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]
    assert model_in["tools"] == ["SerpAPI_search"]
    run = state.run_data["SerpAPI search"][0]
    assert run.execution_status == "error"
    assert run.error.message == f'Node "SerpAPI search" has type "{SERP}", which mini-n8n does not support'
    second = state.run_data["Model"][1].input["ai_languageModel"][0][0]["json"]["messages"][-1]
    assert second["role"] == "tool" and SERP in second["content"]
    book = StepBook()
    for event in events:
        book.feed(event)
    book.finish("not run")
    assert (book.rows[0].tool, book.rows[0].status) == ("SerpAPI_search", "error")
    assert SERP in book.rows[0].observation
    line = format_line("SerpAPI search", run, 1.0, 1)
    assert "error" in line and SERP in line


async def test_pinned_data_on_a_tool_sub_node_is_its_answer(engine: Engine) -> None:
    wf = _workflow([{"toolCalls": [tool_call("SerpAPI_search", {"input": "weather"}, "c1")]}, {"text": "sunny"}],
                   pin=[{"json": {"forecast": "sunny"}}])
    state = await engine.run(wf, items=[chat_item("weather?", "s")])
    assert state.status == "success", state.error
    run = state.run_data["SerpAPI search"][0]
    assert run.execution_status == "success" and run.metadata["pinned"] is True
    assert run.data["ai_tool"][0][0]["json"] == {"forecast": "sunny"}
    tool_message = state.run_data["Model"][1].input["ai_languageModel"][0][0]["json"]["messages"][-1]
    assert "sunny" in tool_message["content"]


def test_an_unsupported_tool_does_not_block_the_run(engine: Engine) -> None:
    wf = _workflow([{"text": "hi"}])
    assert unsupported_on_path(wf, engine.registry, "Chat") == []
