"""Bad expressions fail their node loudly, in n8n's words, naming the node, parameter and expression."""

from __future__ import annotations

from typing import Any

import pytest

from engine.executor import Engine
from engine.workflow import parse_workflow
from tests.builders import MANUAL_TRIGGER, SET, link, node

PARAMETER = 'parameter "assignments.assignments[0].value" of node "Bad"'

# (what kind of mistake, the expression, a fragment of the error)
BAD = [
    ("syntax error", "={{ $json.a + }}", "invalid syntax"),
    ("unbalanced parenthesis", "={{ ($json.a }}", "invalid syntax"),
    ("bad regular expression outside any guard", "={{ new RegExp('[') }}", "invalid syntax"),
    ("endless loop", "={{ (() => { while (true) { } })() }}", "ran longer than"),
    ("huge array", "={{ new Array(1e9).fill(0) }}", "MB of memory"),
    ("huge string", "={{ 'x'.repeat(2 ** 28) + 'y'.repeat(2 ** 28) }}", "MB of memory"),
    ("endless recursion", "={{ (function f() { return f() + 1 })() }}", "Maximum call stack size exceeded"),
    ("paired item of a later node", "={{ $('Later').item.json.x }}", "No path back to referenced node"),
    ("unexecuted node, first()", "={{ $('Later').first().json.x }}", "Referenced node is unexecuted"),
    ("no such node", "={{ $('Nowhere').item.json.x }}", "Referenced node doesn't exist"),
    ("legacy $node of no such node", "={{ $node['Nowhere'].json.x }}", "Referenced node doesn't exist"),
    ("$env", "={{ $env.HOME }}", "access to env vars denied"),
    ("a function, not called", "={{ $json.name.toUpperCase }}", "this is a function, please add ()"),
    ("DateTime itself", "={{ DateTime }}", "this is a DateTime, please access its methods"),
    ("$ itself", "={{ $ }}", "invalid syntax"),
    ("invalid DateTime", "={{ DateTime.fromISO('not a date') }}", "invalid DateTime"),
    ("parseJson of text", "={{ $json.name.parseJson() }}", "Parsing failed"),
    ("toInt of text", "={{ $json.name.toInt() }}", "cannot convert"),
    ("sum of text", "={{ ['a', 'b'].sum() }}", "all array elements must be numbers"),
    ("merge on an object", "={{ ({ a: 1 }).merge({ b: 2 }) }}", 'merge() is only callable on type "Array"'),
    ("run that does not exist", "={{ $('Trigger').first(0, 5).json }}", "has no run 5"),
    ("$fromAI outside a tool", "={{ $fromAI('city') }}", "filled in by the model"),
    ("locale not available", "={{ (1234.5).format('de-DE') }}", "only English (en) locales"),
]

# n8n's expression engine hands an error that is not its own (a TypeError, an Error the code
# throws) to an error handler that drops it: the segment is `undefined`, the node goes on.
QUIET = [
    ("throw", "={{ (() => { throw new Error('boom') })() }}"),
    ("field of undefined", "={{ $json.missing.deeper }}"),
    ("field of null", "={{ $json.nothing.deeper }}"),
    ("not a function", "={{ $json.name.shout() }}"),
    ("eval is denied", "={{ eval('1 + 1') }}"),
    ("Function is denied", "={{ Function('return 1')() }}"),
    ("JSON.parse of bad text", "={{ JSON.parse('{nope') }}"),
    ("bad regular expression from data", "={{ new RegExp($json.name + '[') }}"),
]


def _workflow(expression: str) -> Any:
    nodes = [
        node("Trigger", MANUAL_TRIGGER),
        node("Bad", SET, {"assignments": {"assignments": [{"id": "v", "name": "value", "value": expression, "type": "string"}]}},
             typeVersion=3.4),
        node("Later", SET, {}, typeVersion=3.4),
    ]
    connections: dict[str, Any] = {}
    link(connections, "Trigger", "Bad")
    link(connections, "Bad", "Later")
    return parse_workflow({"name": "bad expressions", "nodes": nodes, "connections": connections})


def test_there_are_more_than_twenty_kinds() -> None:
    assert len({kind for kind, _, _ in BAD}) >= 20


@pytest.mark.parametrize(("kind", "expression", "fragment"), BAD, ids=[b[0] for b in BAD])
async def test_a_bad_expression_fails_its_node_clearly(engine: Engine, kind: str, expression: str, fragment: str) -> None:
    state = await engine.run(_workflow(expression), items=[{"json": {"name": "Ada", "nothing": None}}])
    assert state.status == "error", kind
    error = state.error
    assert error is not None and error.node == "Bad"
    assert error.message.startswith("ERROR: "), error.message
    assert fragment in error.message + " " + (error.description or ""), error.message
    assert PARAMETER in error.message
    assert expression[1:].strip() in error.message  # the expression as written
    assert state.run_data["Bad"][0].execution_status == "error"
    assert "Later" not in state.run_data


async def test_the_engine_is_usable_after_a_limit_stopped_it(engine: Engine) -> None:
    for expression in ("={{ (() => { while (true) { } })() }}", "={{ new Array(1e9).fill(0) }}"):
        state = await engine.run(_workflow(expression))
        assert state.status == "error"
    state = await engine.run(_workflow("={{ $json.name.toUpperCase() + '!' }}"), items=[{"json": {"name": "ada"}}])
    assert state.status == "success", state.error
    assert state.run_data["Bad"][0].data["main"][0][0]["json"]["value"] == "ADA!"


@pytest.mark.parametrize(("kind", "expression"), QUIET, ids=[q[0] for q in QUIET])
async def test_an_error_n8n_drops_leaves_the_field_empty(engine: Engine, kind: str, expression: str) -> None:
    state = await engine.run(_workflow(expression), items=[{"json": {"name": "Ada", "nothing": None}}])
    assert state.status == "success", state.error
    assert state.run_data["Bad"][0].data["main"][0][0]["json"] == {"value": None}


async def test_a_dropped_error_empties_only_its_segment_of_a_template(engine: Engine) -> None:
    state = await engine.run(_workflow("=a{{ $json.missing.deeper }}b{{ $json.name }}{{ NaN }}{{ 0 }}{{ false }}"),
                             items=[{"json": {"name": "Ada"}}])
    assert state.status == "success", state.error
    assert state.run_data["Bad"][0].data["main"][0][0]["json"] == {"value": "abAda0false"}


async def test_an_error_outside_any_guard_makes_the_expression_null(engine: Engine) -> None:
    """A segment reading no variable and calling nothing runs unguarded in n8n: its error nulls the whole value."""
    state = await engine.run(_workflow("=x {{ 1n + 1 }}"), items=[{"json": {}}])
    assert state.status == "success", state.error
    assert state.run_data["Bad"][0].data["main"][0][0]["json"] == {"value": None}
