"""n8n's workflow JSON: loading with located errors, lossless round trips, unsupported nodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.errors import WorkflowFileError
from engine.executor import Engine
from engine.registry import Registry, builtin_registry
from engine.errors import RegistryError
from engine.store import ExecutionStore
from engine.workflow import (MAX_NESTING, dump_workflow, load_workflow, load_workflow_text, main_loop, parse_workflow,
                             save_workflow)
from nodes.triggers.manual_trigger import ManualTrigger
from tests.builders import MANUAL_TRIGGER, SET, link, node

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


def test_duplicate_names_are_refused() -> None:
    data = {"nodes": [node("A", MANUAL_TRIGGER), node("A", MANUAL_TRIGGER)], "connections": {}}
    with pytest.raises(WorkflowFileError) as info:
        parse_workflow(data)
    assert info.value.problems == ['node "A": the name is used by more than one node']


def test_links_to_missing_nodes_are_dropped_and_said() -> None:
    """One stale link does not make the file unreadable: the rest loads, the dropped links are
    listed. A stale key with no links (n8n leaves some behind) is harmless and not reported."""
    data = {
        "nodes": [node("A", MANUAL_TRIGGER), node("B", SET)],
        "connections": {"A": {"main": [[{"node": "Ghost", "type": "main", "index": 0},
                                        {"node": "B", "type": "main", "index": 0}]]},
                        "Nobody": {"main": [[{"node": "A", "type": "main", "index": 0}]]}, "Empty": {"main": [[]]}},
    }
    wf = parse_workflow(data)
    assert [(src, ctype, target.node) for src, ctype, _i, target in wf.links()] == [("A", "main", "B")]
    assert wf.load_warnings == [
        'connections > A > main: target node "Ghost" does not exist; the link was dropped',
        'connections > Nobody > main: source node "Nobody" does not exist; its link to "A" was dropped',
    ]
    assert parse_workflow(json.loads(dump_workflow(wf))).load_warnings == []  # saved clean


def test_not_json_and_not_an_object() -> None:
    with pytest.raises(WorkflowFileError, match=r"not valid JSON at line 1, column 2"):
        load_workflow_text("{nope", "f.json")
    with pytest.raises(WorkflowFileError, match="holds a JSON list"):
        load_workflow_text("[]", "f.json")


def test_a_json_object_that_is_not_a_workflow_is_refused() -> None:
    with pytest.raises(WorkflowFileError) as info:
        load_workflow_text('{"hello": "world"}', "hello.json")
    assert info.value.problems == ['not an n8n workflow: the JSON object has no "nodes" list (its keys: "hello")']
    with pytest.raises(WorkflowFileError, match=r'no "nodes" list \(it is empty\)'):
        load_workflow_text("{}", "empty.json")
    assert load_workflow_text('{"nodes": []}').nodes == []  # an empty workflow is a workflow


def test_the_cli_warns_of_dropped_links_and_refuses_a_non_workflow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from engine.cli import main

    stale = tmp_path / "stale.json"
    connections: dict = {}
    link(connections, "Start", "Edit Fields")
    link(connections, "Start", "Ghost")
    stale.write_text(json.dumps({"nodes": [node("Start", MANUAL_TRIGGER), node("Edit Fields", SET)],
                                 "connections": connections}))
    assert main(["run", str(stale)]) == 0
    err = capsys.readouterr().err
    assert f'mini-n8n: warning: {stale}: connections > Start > main: target node "Ghost" does not exist; the link was dropped' in err
    hello = tmp_path / "hello.json"
    hello.write_text('{"hello": "world"}')
    assert main(["run", str(hello)]) == 2
    assert 'not an n8n workflow: the JSON object has no "nodes" list (its keys: "hello")' in capsys.readouterr().err


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


def nested(depth: int) -> dict:
    """A one-node workflow whose parameter nests `depth` levels of objects and lists in all."""
    value: object = "leaf"
    for level in range(depth - 4):  # the document, "nodes", the node and "parameters" are 4 levels
        value = [value] if level % 2 else {"k": value}
    return {"nodes": [node("Start", MANUAL_TRIGGER, {"deep": value})], "connections": {}}


def test_nesting_up_to_the_limit_loads_saves_and_stores(tmp_path: Path) -> None:
    wf = parse_workflow(nested(MAX_NESTING))
    path = tmp_path / "deep.json"
    save_workflow(wf, path)
    assert dump_workflow(load_workflow(path)) == path.read_text()
    store = ExecutionStore(tmp_path / "store.sqlite")
    execution = Engine(builtin_registry(), store=store).create(wf)
    assert store.load(execution.state.id).workflow == wf


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 300, 5_000, 200_000])
def test_deeper_nesting_is_a_clear_error_not_a_crash(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(nested(MAX_NESTING)).replace('"leaf"', "[" * (depth - MAX_NESTING) + "]" * (depth - MAX_NESTING)))
    with pytest.raises(WorkflowFileError) as info:
        load_workflow(path)
    [problem] = info.value.problems
    assert problem.startswith(f"the JSON nests more than {MAX_NESTING} levels deep (at ")
    assert problem.endswith("; a workflow file nests far less")


def test_lone_surrogates_round_trip_through_file_and_store(tmp_path: Path) -> None:
    text = json.dumps({"name": "odd \ud800", "nodes": [node("Start ünï", MANUAL_TRIGGER, {"note": "a\udc80b ünï 😀"})],
                       "connections": {}})
    wf = load_workflow_text(text)
    assert wf.nodes[0].parameters["note"] == "a\udc80b ünï 😀"
    path = tmp_path / "odd.json"
    save_workflow(wf, path)
    saved = path.read_text(encoding="utf-8")
    assert "\\udc80" in saved and "ünï 😀" in saved  # only what UTF-8 cannot hold is escaped
    assert load_workflow(path) == wf
    store = ExecutionStore(tmp_path / "store.sqlite")
    execution = Engine(builtin_registry(), store=store).create(wf)
    assert store.load(execution.state.id).workflow == wf
    assert store.list()[0].workflow_name == "odd \\ud800"  # the list shows it escaped


def test_a_lone_surrogate_in_a_node_name_is_refused() -> None:
    with pytest.raises(WorkflowFileError) as info:
        parse_workflow({"nodes": [node("Start \udfff", MANUAL_TRIGGER)], "connections": {}})
    assert info.value.problems == ['node "Start \\udfff", field name: Value error, a node name cannot hold a lone '
                                   "UTF-16 surrogate (U+DFFF)"]


def loop_workflow(*names: str, back_to: str) -> dict:
    connections: dict = {}
    for source, target in zip(names, names[1:]):
        link(connections, source, target)
    link(connections, names[-1], back_to)
    return {"nodes": [node(n, MANUAL_TRIGGER if i == 0 else SET) for i, n in enumerate(names)],
            "connections": connections}


def test_a_loop_of_main_connections_is_refused_and_named() -> None:
    with pytest.raises(WorkflowFileError) as info:
        parse_workflow(loop_workflow("Start", "A", "B", "C", back_to="A"), "loop.json")
    assert info.value.problems == [
        'connections: the main connections loop "A" → "B" → "C" → "A"; only a loop through a Loop Over Items '
        "node can end, so it would run forever"]
    with pytest.raises(WorkflowFileError, match='loop "Start" → "Start"'):
        parse_workflow(loop_workflow("Start", back_to="Start"))


def test_a_loop_through_loop_over_items_is_allowed_and_others_still_refused() -> None:
    data = loop_workflow("Start", "Loop", "A", "B", back_to="Loop")
    data["nodes"][1]["type"] = "n8n-nodes-base.splitInBatches"
    assert main_loop(parse_workflow(data)) is None
    link(data["connections"], "B", "A")  # a second loop, inside the first, that nothing ends
    with pytest.raises(WorkflowFileError, match='loop "A" → "B" → "A"'):
        parse_workflow(data)


def test_the_editor_allows_closing_a_loop_through_loop_over_items() -> None:
    from engine.rules import connection_refusal

    data = loop_workflow("Start", "Loop", "A", back_to="Loop")
    data["nodes"][1]["type"] = "n8n-nodes-base.splitInBatches"
    data["connections"]["A"]["main"] = [[]]
    wf = parse_workflow(data)
    assert connection_refusal(wf, builtin_registry(), "A", "main", "Loop") is None


def test_long_chains_and_diamonds_are_not_loops() -> None:
    names = [f"N{i}" for i in range(5_000)]
    data = loop_workflow(*names, back_to="N1")
    data["connections"]["N4999"]["main"] = [[]]
    assert main_loop(parse_workflow(data)) is None
    diamond = {"nodes": [node(n, SET) for n in "ABCD"], "connections": {}}
    for source, target in ("AB", "AC", "BD", "CD"):
        link(diamond["connections"], source, target)
    assert main_loop(parse_workflow(diamond)) is None


def test_a_loop_through_ai_connections_only_is_not_a_main_loop() -> None:
    data = {"nodes": [node("Start", MANUAL_TRIGGER), node("A", SET)], "connections": {}}
    link(data["connections"], "Start", "A")
    link(data["connections"], "A", "Start", "ai_tool")
    assert main_loop(parse_workflow(data)) is None


def test_the_editor_refuses_a_connection_that_closes_a_main_loop() -> None:
    from engine.rules import connection_refusal

    wf = parse_workflow(loop_workflow("Start", "A", "B", back_to="A") | {"connections": {
        "Start": {"main": [[{"node": "A", "type": "main", "index": 0}]]},
        "A": {"main": [[{"node": "B", "type": "main", "index": 0}]]}}})
    registry = builtin_registry()
    assert connection_refusal(wf, registry, "B", "main", "A") == (
        '"A" already leads to "B": this connection would make a loop that runs forever')
    assert connection_refusal(wf, registry, "B", "main", "Start") is not None
    assert connection_refusal(wf, registry, "Start", "main", "B") is None  # a second path is no loop
