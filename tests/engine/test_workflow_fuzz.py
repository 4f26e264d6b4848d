"""Random and mutated workflow files are either loaded or rejected with a clear error, never a crash.

Besides random JSON and mutations of real files, generator classes aim at what broke loaders
before: deep nesting, lone surrogates, loops of main connections, and huge files. Whatever loads
must also save, store and load again unchanged.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import WorkflowFileError
from engine.executor import Engine
from engine.registry import builtin_registry
from engine.store import ExecutionStore
from engine.workflow import MAX_NESTING, Workflow, dump_workflow, load_workflow_text, parse_workflow

EXAMPLES = sorted((Path(__file__).parents[2] / "resources" / "examples").glob("*.json")) + sorted(
    (Path(__file__).parents[1] / "fixtures").glob("*.json")
)
SEEDS = [json.loads(p.read_text()) for p in EXAMPLES]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


def check(data: Any) -> Workflow | None:
    """Load decoded JSON: a workflow that saves and loads again the same, or a clean refusal (None)."""
    try:
        wf = parse_workflow(data, "fuzz.json")
    except WorkflowFileError as exc:
        assert_clean(exc)
        return None
    # what loads can be saved (as UTF-8) and loaded again to the same document
    text = dump_workflow(wf)
    text.encode("utf-8")
    assert dump_workflow(load_workflow_text(text)) == text
    return wf


def check_text(text: str) -> Workflow | None:
    try:
        wf = load_workflow_text(text, "fuzz.json")
    except WorkflowFileError as exc:
        assert_clean(exc)
        return None
    return check(json.loads(dump_workflow(wf)))


def assert_clean(exc: WorkflowFileError) -> None:
    assert exc.problems, "a rejection must say what is wrong"
    assert all(isinstance(p, str) and p for p in exc.problems)
    str(exc).encode("utf-8")  # printable anywhere


_STORE_DIR = tempfile.TemporaryDirectory(prefix="mini-n8n-fuzz-")
_STORE = ExecutionStore(Path(_STORE_DIR.name) / "executions.sqlite")
_ENGINE = Engine(builtin_registry(), store=_STORE)


def check_stored(wf: Workflow) -> None:
    """The workflow is written to the execution store with an execution and read back unchanged."""
    execution = _ENGINE.create(wf, start=wf.nodes[0].name, items=[])
    assert dump_workflow(_STORE.load(execution.state.id).workflow) == dump_workflow(wf)


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


# ----- deep nesting ------------------------------------------------------------------------------
def nest(depth: int, shapes: list[bool]) -> str:
    """JSON text of `depth` nested containers, objects or lists after `shapes`, around a string."""
    opening, closing = [], []
    for level in range(depth):
        is_object = shapes[level % len(shapes)]
        opening.append('{"k":' if is_object else "[")
        closing.append("}" if is_object else "]")
    return "".join(opening) + '"leaf"' + "".join(reversed(closing))


PLACES = {  # where in a workflow the nested value goes, and how many levels the place itself adds
    "parameters": ('{{"nodes":[{{"name":"A","type":"n8n-nodes-base.set","parameters":{{"v":{}}}}}],"connections":{{}}}}', 4),
    "node extra": ('{{"nodes":[{{"name":"A","type":"n8n-nodes-base.set","extra":{}}}],"connections":{{}}}}', 3),
    "settings": ('{{"nodes":[],"settings":{{"v":{}}},"connections":{{}}}}', 2),
    "pinData": ('{{"nodes":[],"pinData":{{"A":{}}},"connections":{{}}}}', 2),
    "connections": ('{{"nodes":[],"connections":{{"A":{{"main":{}}}}}}}', 3),
    "top level": ('{{"nodes":[],"connections":{{}},"x":{}}}', 1),
    "bare": ("{}", 0),
}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(depth=st.one_of(st.integers(1, MAX_NESTING + 20), st.integers(MAX_NESTING, 3_000), st.sampled_from([50_000, 200_000])),
       shapes=st.lists(st.booleans(), min_size=1, max_size=5), place=st.sampled_from(sorted(PLACES)))
def test_deeply_nested_files_load_or_fail_clearly(depth: int, shapes: list[bool], place: str) -> None:
    template, levels = PLACES[place]
    wf = check_text(template.format(nest(depth, shapes)))
    if depth + levels > MAX_NESTING:
        assert wf is None, f"{depth + levels} levels loaded"


# ----- lone surrogates ---------------------------------------------------------------------------
PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
surrogate_text = st.lists(st.one_of(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), st.characters()),
                          min_size=1, max_size=8).map("".join)


def strings_of(data: Any, prefix: tuple = ()) -> list[tuple[tuple, bool]]:
    """Paths of every string (False) and every object key (True) in `data`."""
    out = []
    if isinstance(data, dict):
        for k, v in data.items():
            out.append((prefix + (k,), True))
            out.extend(strings_of(v, prefix + (k,)))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out.extend(strings_of(v, prefix + (i,)))
    elif isinstance(data, str):
        out.append((prefix, False))
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_lone_surrogates_anywhere_load_store_and_save_or_fail_clearly(data: st.DataObject) -> None:
    doc = json.loads(json.dumps(data.draw(st.sampled_from(SEEDS))))
    for _ in range(data.draw(st.integers(1, 4))):
        path, is_key = data.draw(st.sampled_from(strings_of(doc)))
        text = data.draw(surrogate_text)
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if is_key:
            parent[path[-1] + text] = parent.pop(path[-1])
        else:
            parent[path[-1]] = parent[path[-1]] + text
        pair = PAIR.search(json.dumps(doc, ensure_ascii=False))  # JSON text would join it into one character
        if not pair and data.draw(st.booleans()):  # also as a file holds it: \uXXXX escapes in ASCII text
            from_text, from_data = check_text(json.dumps(doc)), check(doc)
            assert (from_text is None) == (from_data is None)
            assert from_text is None or dump_workflow(from_text) == dump_workflow(from_data)
    wf = check(doc)
    if wf is not None and wf.nodes:
        check_stored(wf)


# ----- loops of main connections -----------------------------------------------------------------
def has_main_loop(wf: Workflow) -> bool:
    """Independently of the loader: can a topological order of the main links be found?"""
    edges = [(s, t.node) for s, ctype, _i, t in wf.links() if ctype == "main"]
    names = {n.name for n in wf.nodes}
    incoming = {n: 0 for n in names}
    for _s, t in edges:
        incoming[t] += 1
    ready = [n for n, c in incoming.items() if c == 0]
    seen = 0
    while ready:
        n = ready.pop()
        seen += 1
        for s, t in edges:
            if s == n:
                incoming[t] -= 1
                if incoming[t] == 0:
                    ready.append(t)
    return seen < len(names)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(count=st.integers(1, 12), data=st.data())
def test_graphs_with_and_without_loops_are_told_apart(count: int, data: st.DataObject) -> None:
    names = [f"N{i}" for i in range(count)]
    pairs = st.tuples(st.sampled_from(names), st.sampled_from(names), st.sampled_from(["main", "main", "ai_tool"]))
    links = data.draw(st.lists(pairs, max_size=20))
    connections: dict[str, Any] = {}
    for source, target, ctype in links:
        outputs = connections.setdefault(source, {}).setdefault(ctype, [[]])
        outputs[0].append({"node": target, "type": ctype, "index": 0})
    doc = {"nodes": [{"name": n, "type": "n8n-nodes-base.set"} for n in names], "connections": connections}
    try:
        wf = parse_workflow(doc, "fuzz.json")
    except WorkflowFileError as exc:
        assert_clean(exc)
        [problem] = exc.problems
        loop = problem.split(" loop ", 1)[1].split(";", 1)[0].split(" → ")
        loop = [name.strip('"') for name in loop]
        assert loop[0] == loop[-1] and len(loop) >= 2
        for source, target in zip(loop, loop[1:]):  # the named loop is real, link by link
            assert (source, target, "main") in links
        return
    assert not has_main_loop(wf)


# ----- huge files --------------------------------------------------------------------------------
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(nodes=st.integers(1, 3_000), text_size=st.sampled_from([0, 1_000, 1_000_000, 8_000_000]),
       chain=st.booleans(), loop_back=st.booleans())
def test_huge_files_load_or_fail_clearly(nodes: int, text_size: int, chain: bool, loop_back: bool) -> None:
    names = [f"Node {i}" for i in range(nodes)]
    doc: dict[str, Any] = {
        "name": "huge",
        "nodes": [{"name": n, "type": "n8n-nodes-base.set", "parameters": {"note": "x" * (text_size // nodes)}}
                  for n in names],
        "connections": {},
    }
    if chain:
        for source, target in zip(names, names[1:] + ([names[0]] if loop_back else [])):
            doc["connections"][source] = {"main": [[{"node": target, "type": "main", "index": 0}]]}
    wf = check_text(json.dumps(doc))
    assert (wf is None) == (chain and loop_back)
