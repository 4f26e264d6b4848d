"""Node versions: every type declares the typeVersions it maps; an unknown one runs with a note."""

from __future__ import annotations

from engine.executor import Engine
from engine.run_log import format_line
from engine.versions import known_versions, version_note
from engine.workflow import Node, dump_workflow, parse_workflow
from tests.builders import MANUAL_TRIGGER, SET, link, node


def test_types_declare_the_versions_n8n_has(engine: Engine) -> None:
    registry = engine.registry
    assert known_versions(registry.get(SET)) == (1, 2, 3, 3.1, 3.2, 3.3, 3.4)
    assert known_versions(registry.get("@n8n/n8n-nodes-langchain.memoryBufferWindow")) == (1, 1.1, 1.2, 1.3)
    agent = known_versions(registry.get("@n8n/n8n-nodes-langchain.agent"))
    assert agent[0] == 1 and agent[-1] == 3 and 1.9 in agent and 2.2 in agent
    assert known_versions(registry.get(MANUAL_TRIGGER)) == (1,)


def test_known_newer_and_unknown_versions(engine: Engine) -> None:
    set_type = engine.registry.get(SET)
    assert version_note(Node(name="A", type=SET, typeVersion=3.3), set_type) is None
    newer = version_note(Node(name="A", type=SET, typeVersion=4), set_type)
    assert newer is not None and "newer than mini-n8n knows" in newer and "runs as version 3.4" in newer
    odd = version_note(Node(name="A", type=SET, typeVersion=2.5), set_type)
    assert odd is not None and "runs as version 2" in odd
    unsupported = engine.registry.get("n8n-nodes-base.slack")
    assert version_note(Node(name="S", type="n8n-nodes-base.slack", typeVersion=99), unsupported) is None


async def test_a_newer_version_loads_keeps_its_parameters_runs_and_warns_in_the_run_log(engine: Engine) -> None:
    connections: dict = {}
    link(connections, "Start", "Edit Fields")
    params = {"assignments": {"assignments": [{"name": "a", "value": "x", "type": "string"}]}, "futureOption": {"z": 1}}
    wf = parse_workflow({"name": "future", "nodes": [node("Start", MANUAL_TRIGGER), node("Edit Fields", SET, params, typeVersion=3.9)],
                         "connections": connections})
    assert '"futureOption"' in dump_workflow(wf) and '"typeVersion": 3.9' in dump_workflow(wf)
    state = await engine.run(wf)
    assert state.status == "success"
    assert state.result == [{"json": {"a": "x"}, "pairedItem": {"item": 0}}]
    task = state.run_data["Edit Fields"][0]
    assert len(task.metadata["notes"]) == 1 and "typeVersion 3.9" in task.metadata["notes"][0]
    assert "note=" in format_line("Edit Fields", task, 1.0)
    assert "notes" not in state.run_data["Start"][0].metadata
