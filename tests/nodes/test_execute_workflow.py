"""Execute Workflow beyond what the parity corpus records (it records calls to the same file and
to JSON in the node): other files by id or path, and a workflow that calls itself forever."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from engine.executor import Engine
from engine.registry import builtin_registry
from engine.workflow import parse_workflow
from tests.builders import link, node

SUB = {"id": "subWorkflow00001", "name": "sub", "nodes": [
    node("Called", "n8n-nodes-base.executeWorkflowTrigger", {"inputSource": "passthrough"}),
    node("Mark", "n8n-nodes-base.set", {"assignments": {"assignments": [
        {"id": "a", "name": "marked", "value": "={{ $json.n * 10 }}", "type": "number"}]}, "includeOtherFields": True})],
    "connections": {"Called": {"main": [[{"node": "Mark", "type": "main", "index": 0}]]}}}


def caller(parameters: dict[str, Any], own_id: str = "callerWorkflow01") -> Any:
    nodes = [node("Start", "n8n-nodes-base.manualTrigger"), node("Items", "n8n-nodes-base.noOp"),
             node("Call", "n8n-nodes-base.executeWorkflow", parameters)]
    connections: dict[str, Any] = {}
    link(connections, "Start", "Items")
    link(connections, "Items", "Call")
    return parse_workflow({"id": own_id, "name": "caller", "nodes": nodes, "connections": connections,
                           "pinData": {"Items": [{"json": {"n": 1}}, {"json": {"n": 2}}]}})


def run(workflow: Any) -> Any:
    return asyncio.run(Engine(builtin_registry()).run(workflow))


def test_a_workflow_file_found_by_id_in_the_workflows_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "other.json").write_text(json.dumps({"id": "unrelated", "nodes": []}))
    (tmp_path / "sub.json").write_text(json.dumps(SUB))
    monkeypatch.setenv("MINI_N8N_WORKFLOWS", str(tmp_path))
    state = run(caller({"workflowId": {"__rl": True, "value": "subWorkflow00001", "mode": "id"}}))
    assert state.status == "success", state.error
    assert [i["json"] for i in state.run_data["Call"][0].data["main"][0]] == [{"n": 1, "marked": 10}, {"n": 2, "marked": 20}]


def test_an_unknown_workflow_id_says_where_it_was_looked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MINI_N8N_WORKFLOWS", raising=False)
    state = run(caller({"workflowId": {"__rl": True, "value": "nowhere", "mode": "id"}}))
    assert state.status == "error"
    assert 'calls workflow "nowhere", which is neither this workflow nor a file in the MINI_N8N_WORKFLOWS' in state.error.message


def test_a_local_file(tmp_path: Path) -> None:
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(SUB))
    state = run(caller({"source": "localFile", "workflowPath": str(path)}))
    assert state.status == "success", state.error
    missing = run(caller({"source": "localFile", "workflowPath": str(tmp_path / "gone.json")}))
    assert missing.error.message == f'The file "{tmp_path / "gone.json"}" could not be found, [item 0]'


def test_a_workflow_that_calls_itself_forever_stops_at_the_depth_limit() -> None:
    workflow = caller({"workflowId": {"__rl": True, "value": "callerWorkflow01", "mode": "id"}})
    data = workflow.model_dump(mode="json", by_alias=True)
    data["nodes"].append(node("Called", "n8n-nodes-base.executeWorkflowTrigger"))
    link(data["connections"], "Called", "Call")
    state = run(parse_workflow(data))
    assert state.status == "error"
    assert "Sub-workflows call each other more than 50 levels deep" in state.error.message


def test_a_sub_workflow_waiting_on_a_webhook_call_is_an_error_naming_its_wait_node(tmp_path: Path) -> None:
    waiting = {**SUB, "nodes": [*SUB["nodes"], node("Hold", "n8n-nodes-base.wait", {"resume": "webhook"})],
               "connections": {**SUB["connections"], "Mark": {"main": [[{"node": "Hold", "type": "main", "index": 0}]]}}}
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(waiting))
    state = run(caller({"source": "localFile", "workflowPath": str(path)}))
    assert state.status == "error"
    assert state.error.message == ('The sub-workflow waits at its Wait node "Hold" for a webhook call, which mini-n8n '
                                   "does not support in a sub-workflow")
