"""Code Tool: results, raised errors, runaway loops and allocations; the engine process survives."""

from __future__ import annotations

import asyncio
import os
import resource
import secrets

import pytest

from engine.abort import AbortSignal
from engine.executor import Engine
from tests.builders import agent_workflow, tool_call
from tests.nodes.tools.agent_runs import observation, run_tool_once
from tests.nodes.tools.processes import NAME_A_PROCESS, kill_all, processes_named, wait_gone

CODE = "@n8n/n8n-nodes-langchain.toolCode"


def code_params(code: str, **options: float) -> dict:
    return {"language": "python", "pythonCode": code, "options": options}


async def test_result_comes_back_to_the_model(engine: Engine) -> None:
    code = "words = query.split()\nreturn f'{len(words)} words, first: {words[0]}'"
    state = await run_tool_once(engine, CODE, code_params(code), {"query": "hello brave new world"})
    assert observation(state) == "4 words, first: hello"
    assert state.run_data["Tool"][0].data["ai_tool"][0][0]["json"] == {"response": "4 words, first: hello"}


async def test_declared_input_schema_gives_the_args_as_a_dict(engine: Engine) -> None:
    params = {
        **code_params("return str(query['price'] * query['count'])"),
        "specifyInputSchema": True, "schemaType": "fromJson", "jsonSchemaExample": '{"price": 2.5, "count": 4}',
    }
    wf = agent_workflow(
        [{"text": "", "toolCalls": [tool_call("Tool", {"price": 25, "count": 17}, "c1")]}, {"text": "done"}],
        tools=[("Tool", CODE, params)], agent_options={"returnIntermediateSteps": True},
    )
    state = await engine.run(wf, items=[{"json": {"chatInput": "go"}}])
    assert observation(state) == "425"
    schema_seen = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["tools"]
    assert schema_seen == ["Tool"]


async def test_raised_exception_is_reported_with_its_line(engine: Engine) -> None:
    code = "x = 1\nraise ValueError('no such customer: ' + query)"
    state = await run_tool_once(engine, CODE, code_params(code), {"query": "Ada"})
    assert observation(state) == 'Error: There was an error: "ValueError: no such customer: Ada (line 2)"'
    assert state.run_data["Tool"][0].execution_status == "error"


async def test_syntax_error_is_reported(engine: Engine) -> None:
    state = await run_tool_once(engine, CODE, code_params("return (1 +"), {"query": "q"})
    assert observation(state).startswith('Error: There was an error: "SyntaxError:')


async def test_infinite_loop_is_stopped_by_the_time_limit(engine: Engine) -> None:
    state = await run_tool_once(engine, CODE, code_params("while True:\n    pass", timeLimit=0.5), {"query": "q"})
    assert observation(state) == (
        'Error: There was an error: "the code did not finish within the time limit of 0.5 s and was stopped"'
    )
    assert state.status == "success"  # the agent went on and answered


async def test_huge_allocation_is_stopped_by_the_memory_limit(engine: Engine) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code = "data = bytearray(4 * 1024 * 1024 * 1024)\nreturn str(len(data))"
    state = await run_tool_once(engine, CODE, code_params(code, memoryLimit=128), {"query": "q"})
    assert observation(state) == (
        'Error: There was an error: "MemoryError: the code needed more than the memory limit of 128 MB"'
    )
    # the engine process did not grow by the allocation
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 512 * 1024


async def test_returning_nothing_is_an_error(engine: Engine) -> None:
    state = await run_tool_once(engine, CODE, code_params("x = query"), {"query": "q"})
    assert "returned nothing" in observation(state)


async def test_print_does_not_spoil_the_answer(engine: Engine) -> None:
    state = await run_tool_once(engine, CODE, code_params("print('noise')\nreturn 'clean'"), {"query": "q"})
    assert observation(state) == "clean"


async def test_the_code_runs_in_its_own_isolated_interpreter(engine: Engine) -> None:
    code = "import os, sys\nreturn str(os.getpid()) + ' ' + str(sys.flags.isolated)"
    state = await run_tool_once(engine, CODE, code_params(code), {"query": "q"})
    pid, isolated = observation(state).split()
    assert int(pid) != os.getpid() and isolated == "1"


@pytest.mark.parametrize("params", [{"language": "javaScript", "jsCode": "return 1"}, {"jsCode": "return query"}])
async def test_javascript_is_refused_clearly(engine: Engine, params: dict) -> None:
    wf = agent_workflow([{"text": "ok"}], tools=[("JS", CODE, params)])
    state = await engine.run(wf, items=[{"json": {"chatInput": "go"}}])
    assert state.status == "error"
    assert "runs Python code only" in state.error.description


async def test_stop_kills_the_code_process_and_what_it_started(engine: Engine) -> None:
    name = "stop" + secrets.token_hex(4)
    code = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', {NAME_A_PROCESS.format(name=name) + '; import time; time.sleep(60)'!r}])\n"
        "time.sleep(60)"
    )
    wf = agent_workflow(
        [{"text": "", "toolCalls": [tool_call("Tool", {"query": "q"}, "c1")]}, {"text": "done"}],
        tools=[("Tool", CODE, code_params(code, timeLimit=60))],
    )
    signal = AbortSignal()
    run = asyncio.create_task(engine.run(wf, items=[{"json": {"chatInput": "go"}}], signal=signal))
    try:
        for _ in range(1000):  # bounded wait for the code's child to show up
            if processes_named(name):
                break
            await asyncio.sleep(0.01)
        assert processes_named(name), "the code's child never started"
        signal.abort()
        state = await run
        assert state.status == "cancelled"
        assert await wait_gone(name) == []
    finally:
        kill_all(processes_named(name))


def test_schema_from_json_example_and_bad_json() -> None:
    from engine.errors import NodeOperationError
    from nodes.tools.code_tool import CodeToolParams, input_schema

    params = CodeToolParams(specifyInputSchema=True, jsonSchemaExample='{"price": 2.5, "tags": ["a"], "ok": true}')
    assert input_schema(params, "Tool") == {
        "type": "object",
        "properties": {"price": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}}, "ok": {"type": "boolean"}},
        "required": ["price", "tags", "ok"],
    }
    with pytest.raises(NodeOperationError, match='The JSON Example of node "Tool" is not valid JSON'):
        input_schema(CodeToolParams(specifyInputSchema=True, jsonSchemaExample="{price: 1}"), "Tool")
