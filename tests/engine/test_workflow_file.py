"""n8n's workflow JSON: loading with located errors, lossless round trips, unsupported nodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.errors import WorkflowFileError
from engine.executor import Engine
from engine.registry import Registry, builtin_registry
from engine.errors import RegistryError
from engine.workflow import dump_workflow, load_workflow, load_workflow_text, parse_workflow, save_workflow
from nodes.triggers.manual_trigger import ManualTrigger
from tests.builders import MANUAL_TRIGGER, link, node

FIXTURE = Path(__file__).parent.parent / "fixtures" / "n8n-with-unsupported.json"


def normalise_null_outputs(data: dict) -> dict:
    """n8n writes `null` for an output with no links; we read it as an empty list."""
    for by_type in data["connections"].values():
        for ctype, outputs in by_type.items():
            by_type[ctype] = [o if o is not None else [] for o in outputs]
    return data


def test_file_with_an_unsupported_node_round_trips_without_loss(tmp_path: Path) -> None:
    original = json.loads(FIXTURE.read_text())
    wf = load_workflow(FIXTURE)
    slack = wf.node("Slack")
    assert slack.type == "n8n-nodes-base.slack"
    assert not builtin_registry().knows(slack.type)
    out = tmp_path / "saved.json"
    save_workflow(wf, out)
    assert json.loads(out.read_text()) == normalise_null_outputs(original)
    # and a second round trip is byte for byte the same
    again = load_workflow(out)
    assert dump_workflow(again) == out.read_text()


async def test_running_a_path_through_an_unsupported_node_names_it() -> None:
    wf = load_workflow(FIXTURE)
    del wf.connections["OpenAI Chat Model"]
    wf.nodes = [n for n in wf.nodes if n.name != "OpenAI Chat Model"]
    data = json.loads(dump_workflow(wf))
    # run only the Slack node from a manual trigger
    data["nodes"].append(node("Start", MANUAL_TRIGGER))
    link(data["connections"], "Start", "Slack")
    state = await Engine(builtin_registry()).run(parse_workflow(data), start="Start")
    assert state.status == "error"
    assert state.error is not None
    assert state.error.message == 'Node "Slack" has type "n8n-nodes-base.slack", which mini-n8n does not support'
    assert state.error.node == "Slack"


def test_errors_name_the_node_and_the_field() -> None:
    bad = {
        "name": "x",
        "nodes": [
            {"name": "Good", "type": MANUAL_TRIGGER, "position": [0, 0]},
            {"name": "Broken", "type": 42, "position": "left"},
            {"type": "n8n-nodes-base.set"},
        ],
        "connections": {},
    }
    with pytest.raises(WorkflowFileError) as info:
        parse_workflow(bad, "bad.json")
    problems = info.value.problems
    assert any(p.startswith('node "Broken", field type') for p in problems)
    assert any(p.startswith('node "Broken", field position') for p in problems)
    assert any(p.startswith("node #3, field name") for p in problems)
    assert "bad.json" in str(info.value)


def test_connections_to_missing_nodes_and_duplicate_names_are_reported() -> None:
    """A stale key with no links (n8n leaves some behind) is harmless and not reported."""
    data = {
        "nodes": [node("A", MANUAL_TRIGGER), node("A", MANUAL_TRIGGER)],
        "connections": {"A": {"main": [[{"node": "Ghost", "type": "main", "index": 0}]]}, "Nobody": {"main": [[{"node": "A", "type": "main", "index": 0}]]}, "Empty": {"main": [[]]}},
    }
    with pytest.raises(WorkflowFileError) as info:
        parse_workflow(data)
    assert info.value.problems == [
        'node "A": the name is used by more than one node',
        'connections > A > main: target node "Ghost" does not exist',
        'connections: source node "Nobody" does not exist',
    ]


def test_not_json_and_not_an_object() -> None:
    with pytest.raises(WorkflowFileError, match=r"not valid JSON at line 1, column 2"):
        load_workflow_text("{nope", "f.json")
    with pytest.raises(WorkflowFileError, match="holds a JSON list"):
        load_workflow_text("[]", "f.json")


def test_unreadable_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(WorkflowFileError, match="No such file"):
        load_workflow(tmp_path / "missing.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(WorkflowFileError, match="not UTF-8"):
        load_workflow(binary)


def test_save_is_atomic_and_leaves_no_temporary_files(tmp_path: Path) -> None:
    wf = load_workflow(FIXTURE)
    target = tmp_path / "wf.json"
    target.write_text("old content")
    save_workflow(wf, target)
    assert json.loads(target.read_text())["name"] == "Agent with a Slack step"
    assert [p.name for p in tmp_path.iterdir()] == ["wf.json"]


def test_registry_refuses_a_duplicate_type_id() -> None:
    registry = Registry([ManualTrigger])
    with pytest.raises(RegistryError, match='"n8n-nodes-base.manualTrigger" is registered twice'):
        registry.register(ManualTrigger)


def test_every_example_workflow_loads_and_its_types_are_known() -> None:
    registry = builtin_registry()
    examples = sorted((Path(__file__).parents[2] / "resources" / "examples").glob("*.json"))
    assert examples
    for path in examples:
        wf = load_workflow(path)
        unknown = [n.type for n in wf.nodes if not registry.knows(n.type)]
        assert unknown == [], f"{path.name}: {unknown}"
