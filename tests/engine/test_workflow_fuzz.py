"""Random and mutated workflow files are either loaded or rejected with a clear error, never a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import WorkflowFileError
from engine.workflow import dump_workflow, load_workflow_text, parse_workflow

EXAMPLES = sorted((Path(__file__).parents[2] / "resources" / "examples").glob("*.json")) + sorted(
    (Path(__file__).parents[1] / "fixtures").glob("*.json")
)
SEEDS = [json.loads(p.read_text()) for p in EXAMPLES]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


def check(data: Any) -> None:
    try:
        wf = parse_workflow(data, "fuzz.json")
    except WorkflowFileError as exc:
        assert exc.problems, "a rejection must say what is wrong"
        assert all(isinstance(p, str) and p for p in exc.problems)
        return
    # what loads can be saved and loaded again to the same document
    text = dump_workflow(wf)
    assert dump_workflow(load_workflow_text(text)) == text


def paths(data: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out.extend(paths(v, prefix + (k,)))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out.extend(paths(v, prefix + (i,)))
    return out


def mutate(data: Any, path: tuple, action: str, value: Any) -> Any:
    if not path:
        return value
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if action == "delete":
        del parent[last]
    else:
        parent[last] = value
    return data


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_example_files_load_or_fail_clearly(data: st.DataObject) -> None:
    doc = json.loads(json.dumps(data.draw(st.sampled_from(SEEDS))))
    for _ in range(data.draw(st.integers(1, 4))):
        target = data.draw(st.sampled_from(paths(doc)))
        action = data.draw(st.sampled_from(["replace", "delete"])) if target else "replace"
        doc = mutate(doc, target, action, data.draw(json_values))
    check(doc)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_random_json_loads_or_fails_clearly(value: Any) -> None:
    check(value)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_random_text_loads_or_fails_clearly(text: str) -> None:
    try:
        load_workflow_text(text, "fuzz.json")
    except WorkflowFileError as exc:
        assert exc.problems
