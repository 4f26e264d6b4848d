"""Code node behaviour the parity corpus cannot record: limits, console output, compile errors
(n8n's own outputs for the rest are in tests/parity/workflows/code-*.json)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import nodes.flow.code_node as code_node
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.run_data import TaskData
from engine.workflow import parse_workflow
from tests.builders import link, node


def run(code: str, mode: str = "runOnceForAllItems", **params: Any) -> TaskData:
    nodes = [node("Start", "n8n-nodes-base.manualTrigger"), node("Items", "n8n-nodes-base.noOp"),
             node("Code", "n8n-nodes-base.code", {"jsCode": code, "mode": mode, **params})]
    connections: dict[str, Any] = {}
    link(connections, "Start", "Items")
    link(connections, "Items", "Code")
    workflow = parse_workflow({"name": "code", "nodes": nodes, "connections": connections,
                               "pinData": {"Items": [{"json": {"n": 1}}, {"json": {"n": 2}}]}})
    state = asyncio.run(Engine(builtin_registry()).run(workflow))
    return state.run_data["Code"][0]


def test_an_endless_loop_ends_at_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(code_node, "TIME_LIMIT_S", 0.3)
    task = run("let i = 0;\nwhile (true) { i++; }")
    assert task.error is not None
    assert task.error.message == 'Node "Code": the code ran longer than 300 ms (an endless loop?)'
    after = run("return [{ json: { ok: 1 } }];")  # the engine is usable again
    assert after.data["main"][0][0]["json"] == {"ok": 1}


def test_console_output_goes_to_the_run_log() -> None:
    task = run("console.log('seen', { n: items.length });\nreturn items;")
    assert task.metadata["notes"] == ['console: seen {"n":2}']


def test_a_syntax_error_is_the_nodes_error() -> None:
    task = run("return [{ json: { a: 1 } ]")
    assert task.error is not None and task.error.description == "SyntaxError"


def test_code_sees_the_javascript_globals_of_n8ns_sandbox() -> None:
    task = run("const p = await Promise.all([1, 2].map(async (x) => x * 2));\nreturn [{ json: { p } }];")
    assert task.data["main"][0][0]["json"] == {"p": [2, 4]}


def test_large_results_cross_from_the_engine() -> None:
    task = run("return Array.from({ length: 20000 }, (_, i) => ({ json: { i, text: 'abcdefgh' } }));")
    assert task.error is None and len(task.data["main"][0]) == 20000


@pytest.mark.parametrize("code, message", [
    ("const data = $getWorkflowStaticData('global');\nreturn [];", "$getWorkflowStaticData() is not supported by mini-n8n's Code node [line 1]"),
    ("\nreturn [{ json: { r: helpers.returnJsonArray } }];", "helpers.returnJsonArray is not supported by mini-n8n's Code node [line 2]"),
    ("const _ = require('lodash');\nreturn [];", "Cannot find module 'lodash' [line 1]"),
])
def test_what_the_engine_does_not_have_is_a_clear_error(code: str, message: str) -> None:
    task = run(code)
    assert task.error is not None and task.error.message == message
