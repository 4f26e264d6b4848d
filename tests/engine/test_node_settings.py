"""n8n's node settings run (the parity corpus checks them against n8n: tests/parity/workflows/
node-settings.json, onerror-*.json, retry-*.json); a node that succeeds under them runs once, with
no note, and its error output is there, empty."""

from __future__ import annotations

import asyncio
from typing import Any

from engine.executor import Engine
from engine.registry import builtin_registry
from engine.workflow import parse_workflow
from tests.builders import link, node


def test_a_node_that_succeeds_under_on_error_and_retry_runs_once_with_an_empty_error_output() -> None:
    connections: dict[str, Any] = {}
    link(connections, "Start", "Pass")
    workflow = parse_workflow({"name": "settings", "connections": connections, "nodes": [
        node("Start", "n8n-nodes-base.manualTrigger"),
        node("Pass", "n8n-nodes-base.noOp", onError="continueErrorOutput", retryOnFail=True)]})
    state = asyncio.run(Engine(builtin_registry()).run(workflow))
    [task] = state.run_data["Pass"]
    assert "notes" not in task.metadata and task.execution_status == "success"
    assert task.data["main"] == [[{"json": {}, "pairedItem": {"item": 0}}], []]
