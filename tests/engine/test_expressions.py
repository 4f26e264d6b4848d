"""n8n expressions: JavaScript in `{{ }}` with n8n's globals, evaluated by the embedded engine."""

from __future__ import annotations

from typing import Any

import pytest

from engine.errors import ExpressionError
from engine.executor import Engine
from engine.expressions import evaluate, has_expressions, resolve_parameters
from engine.expressions import template
from engine.run_data import with_paired_items
from engine.workflow import parse_workflow
from tests.builders import MANUAL_TRIGGER, SET, link, node

ITEM = {"chatInput": "hi there", "user": {"name": "Ada", "tags": ["a", "b"], "n": 3}, "odd key": 1, "zero": 0,
        "flag": False, "nothing": None, "price": 2.5}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("={{ $json.chatInput }}", "hi there"),
        ("={{ $json.user.n }}", 3),
        ("={{ $json.user }}", ITEM["user"]),
        ("={{ $json.user.tags[1] }}", "b"),
        ('={{ $json["odd key"] }}', 1),
        ("={{ $json.missing }}", None),
        ("={{ $json.chatInput.toUpperCase() }}", "HI THERE"),
        ("={{ $json.chatInput.length }}", 8),
        ("={{ $json.missing || 'default' }}", "default"),
        ("={{ $json.user.n + 1 }}", 4),
        ("={{ $json.user.tags.map(t => t + '!') }}", ["a!", "b!"]),
        ("={{ 1 + 1 }}", 2),
        ("={{ $json.price * 2 }}", 5),
        ("={{ $json.flag }}", False),
        ("={{ $json.nothing }}", None),
        ("={{ { a: 1, b: [2] } }}", {"a": 1, "b": [2]}),
        ("={{ $json.user.n > 2 ? 'big' : 'small' }}", "big"),
        ("={{ `${$json.user.name}-${$json.zero}` }}", "Ada-0"),
        ("={{ Math.max(...$json.user.tags.map(t => t.length)) }}", 1),
        ("={{ JSON.stringify($json.user.tags) }}", '["a","b"]'),
        ("={{ $json.user.name; }}", "Ada"),  # a trailing semicolon is dropped, as n8n does
        ("=plain text", "plain text"),
        ("=", ""),
        ("={{ $json.chatInput }} ", "hi there "),  # text after the segment: a string
    ],
)
def test_a_lone_segment_keeps_its_type(expression: str, expected: Any) -> None:
    assert evaluate(expression, ITEM) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("=Hello {{ $json.user.name }}, you said {{ $json.chatInput }}", "Hello Ada, you said hi there"),
        # in a template, null and undefined render empty and everything else as String() does
        ("=[{{ $json.missing }}|{{ $json.nothing }}|{{ $json.zero }}|{{ $json.flag }}]", "[||0|false]"),
        ("=tags={{ $json.user.tags }} user={{ $json.user }}", "tags=a,b user=[object Object]"),
        ("=n={{ $json.price }}", "n=2.5"),
        ("=x {{ $json.user.n * 2 }} y", "x 6 y"),
        ("={{ 'a' }}{{ 'b' }}", "ab"),
        ("=unclosed {{ $json.x", "unclosed {{ $json.x"),
    ],
)
def test_text_around_segments_makes_a_string(expression: str, expected: str) -> None:
    assert evaluate(expression, ITEM) == expected


@pytest.mark.parametrize(
    "expression",
    ["={{ $json.chatInput }}", "={{ $json.user }}", "={{ $json.user.tags[0] }}", '={{ $json["odd key"] }}',
     "={{ $json.missing }}", "={{ $json.user.missing }}", "=a {{ $json.user.n }} b {{ $json.nothing }}"],
)
def test_plain_json_reads_skip_the_engine_but_give_what_the_engine_gives(expression: str) -> None:
    parsed = template.parse(expression)
    from engine.expressions import _fast, _MISS  # the fast path, compared with the engine itself

    fast = _fast(parsed, {"json": ITEM})
    assert fast is not _MISS
    spaced = "=" + expression[1:].replace("{{ ", "{{ (").replace(" }}", ") }}")  # the same read, via the engine
    assert template.parse(spaced).paths[-1 if parsed.single else 1] is None
    assert evaluate(spaced, ITEM) == fast


@pytest.mark.parametrize("expression", ["={{ $json.user.tags.length }}", "={{ $json.chatInput.length }}",
                                        "={{ $json.user.keys }}", "={{ $json.missing.deeper }}"])
def test_reads_the_fast_path_cannot_answer_go_to_the_engine(expression: str) -> None:
    from engine.expressions import _fast, _MISS

    assert _fast(template.parse(expression), {"json": ITEM}) is _MISS


def test_resolve_nested_parameters_names_the_failing_parameter() -> None:
    params = {"text": "={{ $json.chatInput }}", "options": {"list": ["={{ $json.user.n }}", "x"]}, "n": 1}
    assert has_expressions(params)
    assert resolve_parameters(params, ITEM) == {"text": "hi there", "options": {"list": [3, "x"]}, "n": 1}
    assert not has_expressions({"a": "b", "c": [1, "d"]})
    with pytest.raises(ExpressionError, match=r'parameter "options.list\[1\]"'):
        resolve_parameters({"options": {"list": ["x", "={{ $json.a.b( }}"]}}, ITEM)


def test_luxon_dates_in_the_workflow_time_zone() -> None:
    assert evaluate("={{ DateTime.fromISO('2024-03-05T10:00:00Z').setZone('Europe/Berlin').toFormat('yyyy-MM-dd HH:mm ZZZZ') }}",
                    {}) == "2024-03-05 11:00 CET"
    assert evaluate("={{ DateTime.fromISO('2024-07-05T10:00:00Z').setZone('Europe/Berlin').toFormat('HH:mm ZZZZ') }}",
                    {}) == "12:00 CEST"
    assert evaluate("={{ $now.zoneName }}", {}) == "America/New_York"  # n8n's default GENERIC_TIMEZONE
    assert evaluate("={{ $today.hour + $today.minute }}", {}) == 0
    assert evaluate("={{ $now.diff($now.minus({ days: 2 }), 'days').days }}", {}) == 2
    # one instant an evaluation, as n8n's data proxy holds one DateTime.now(): the very same object
    assert evaluate("={{ $now === $now }}", {}) is True
    assert evaluate("={{ Duration.fromObject({ hours: 2 }).as('minutes') }}", {}) == 120
    assert evaluate("={{ DateTime.fromISO('2024-01-31').plus({ months: 1 }).toISODate() }}", {}) == "2024-02-29"
    assert evaluate("={{ DateTime.fromISO('2024-03-10T12:00:00Z').startOf('month').toISO() }}", {}).startswith("2024-03-01T00:00:00.000-05:00")
    assert evaluate("={{ DateTime.fromISO('2024-03-10T12:00:00Z').toFormat('cccc d LLLL') }}", {}) == "Sunday 10 March"
    assert evaluate("={{ DateTime.fromISO('2024-03-10T12:00:00Z').setZone('Nowhere/Else').isValid }}", {}) is False
    assert evaluate("={{ DateTime.fromMillis(0, { zone: 'utc' }) }}", {}) == "1970-01-01T00:00:00.000Z"


async def test_the_workflow_time_zone_setting_wins(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GENERIC_TIMEZONE", "Asia/Tokyo")
    wf = _workflow([("Set", {"zone": "={{ $now.zoneName }}"})])
    state = await engine.run(wf)
    assert state.run_data["Set"][0].data["main"][0][0]["json"]["zone"] == "Asia/Tokyo"
    wf = _workflow([("Set", {"zone": "={{ $now.zoneName }}"})], settings={"timezone": "Europe/Paris"})
    state = await engine.run(wf)
    assert state.run_data["Set"][0].data["main"][0][0]["json"]["zone"] == "Europe/Paris"


def test_helpers_and_jmespath() -> None:
    assert evaluate("={{ $if($json.user.n > 2, 'yes', 'no') }}", ITEM) == "yes"
    assert evaluate("={{ $ifEmpty($json.nothing, 'fallback') }}", ITEM) == "fallback"
    assert evaluate("={{ $ifEmpty([], 'fallback') }}", ITEM) == "fallback"
    assert evaluate("={{ $ifEmpty($json.zero, 'fallback') }}", ITEM) == 0
    assert evaluate("={{ $min(4, 2, 9) + $max(4, 2, 9) }}", ITEM) == 11
    assert evaluate("={{ $jmespath($json, 'user.tags[-1]') }}", ITEM) == "b"
    assert evaluate("={{ $jmespath({ people: [{ a: 1 }, { a: 2 }] }, 'people[*].a') }}", ITEM) == [1, 2]


def test_n8ns_deny_list_and_no_host_access() -> None:
    assert evaluate("={{ typeof require }}", {}) == "object"  # n8n: denied names are {}
    assert evaluate("={{ typeof process.env }}", {}) == "undefined"
    assert evaluate("={{ Object.keys(globalThis).length }}", {}) == 0
    assert evaluate("={{ typeof std + typeof os + typeof fetch }}", {}) == "undefinedundefinedobject"
    assert evaluate("={{ this.constructor === undefined || typeof this === 'object' }}", {}) is True


def test_paired_item_rule() -> None:
    one = [{"json": {"a": 1}}]
    assert with_paired_items([[{"json": {}}, {"json": {}}]], one) == [
        [{"json": {}, "pairedItem": {"item": 0}}, {"json": {}, "pairedItem": {"item": 0}}]]
    two = [{"json": {"a": 1}}, {"json": {"a": 2}}]
    assert with_paired_items([[{"json": {"x": 1}}, {"json": {"x": 2}}]], two)[0][1]["pairedItem"] == {"item": 1}
    three = [{"json": {}}] * 3
    assert "pairedItem" not in with_paired_items([[{"json": {}}]], three)[0][0]  # cannot tell: unpaired
    assert with_paired_items([[{"json": {}, "pairedItem": {"item": 2}}]], three)[0][0]["pairedItem"] == {"item": 2}


# ----- expressions that read the workflow: real runs through the engine ---------------------------
def _workflow(sets: list[tuple[str, dict[str, Any]]], settings: dict[str, Any] | None = None) -> Any:
    """Trigger -> Set nodes in a chain; each Set assigns fields: name -> value, or (value, Set type)."""
    nodes = [node("Trigger", MANUAL_TRIGGER)]
    connections: dict[str, Any] = {}
    previous = "Trigger"
    for name, fields in sets:
        assignments = [{"id": k, "name": k, "value": v[0] if isinstance(v, tuple) else v,
                        "type": v[1] if isinstance(v, tuple) else "string"} for k, v in fields.items()]
        nodes.append(node(name, SET, {"assignments": {"assignments": assignments}, "includeOtherFields": False},
                          typeVersion=3.4))
        link(connections, previous, name)
        previous = name
    data: dict[str, Any] = {"name": "expressions", "nodes": nodes, "connections": connections, "id": "wf-7", "active": False}
    if settings:
        data["settings"] = settings
    return parse_workflow(data)


async def test_other_nodes_through_paired_items_and_the_legacy_forms(engine: Engine) -> None:
    wf = _workflow([
        ("A", {"doubled": ("={{ $json.n * 2 }}", "number")}),
        ("B", {
            "fromA": ("={{ $('A').item.json.doubled }}", "number"),
            "fromTrigger": ("={{ $('Trigger').item.json.n }}", "number"),
            "first": ("={{ $('Trigger').first().json.n }}", "number"),
            "last": ("={{ $('Trigger').last().json.n }}", "number"),
            "all": ("={{ $('A').all().map(i => i.json.doubled) }}", "array"),
            "matching": ("={{ $('Trigger').itemMatching(1).json.n }}", "number"),
            "executed": ("={{ $('A').isExecuted }}", "boolean"),
            "legacy": ("={{ $node['A'].json.doubled }}", "number"),
            "items": ("={{ $items('Trigger').length }}", "number"),
            "input": "={{ $input.all().length + ':' + $input.first().json.doubled + ':' + $input.item.json.doubled }}",
            "where": "={{ $prevNode.name + '/' + $runIndex + '/' + $itemIndex + '/' + $nodeVersion }}",
            "meta": "={{ $workflow.name + '/' + $workflow.id + '/' + $workflow.active + '/' + $execution.mode }}",
            "param": ("={{ $parameter.includeOtherFields }}", "boolean"),
            "params": ("={{ $('A').params.includeOtherFields }}", "boolean"),
            "inputParams": ("={{ $input.params.assignments.assignments[0].name }}", "string"),
        }),
    ])
    state = await engine.run(wf, items=[{"json": {"n": 1}}, {"json": {"n": 2}}])
    assert state.status == "success", state.error
    out = [i["json"] for i in state.run_data["B"][0].data["main"][0]]
    assert [o["fromA"] for o in out] == [2, 4]
    assert [o["fromTrigger"] for o in out] == [1, 2]
    assert out[1]["first"] == 1 and out[1]["last"] == 2 and out[0]["all"] == [2, 4]
    assert out[0]["matching"] == 2 and out[0]["executed"] is True
    assert [o["legacy"] for o in out] == [2, 4]
    assert out[0]["items"] == 2
    assert [o["input"] for o in out] == ["2:2:2", "2:2:4"]
    assert [o["where"] for o in out] == ["A/0/0/3.4", "A/0/1/3.4"]
    assert out[0]["meta"] == "expressions/wf-7/false/test"
    assert out[0]["param"] is False and out[0]["params"] is False
    assert out[0]["inputParams"] == "doubled"  # n8n: the parameters of the node the input came from
    assert state.run_data["A"][0].data["main"][0][1]["pairedItem"] == {"item": 1}


async def test_execution_id_is_the_runs_id(engine: Engine) -> None:
    wf = _workflow([("A", {"id": "={{ $execution.id }}"})])
    state = await engine.run(wf)
    assert state.run_data["A"][0].data["main"][0][0]["json"]["id"] == state.id


async def test_a_tool_reads_the_chat_item_through_its_calling_agent(engine: Engine) -> None:
    from nodes.triggers.chat_trigger import chat_item
    from tests.builders import AGENT, CHAT_TRIGGER, SCRIPTED, tool_call

    nodes = [
        node("Chat", CHAT_TRIGGER),
        node("AI Agent", AGENT),
        node("Outer model", SCRIPTED, {"replies": [
            {"toolCalls": [tool_call("Helper", {"q": "six times seven"}, "o1")]}, {"text": "done"}]}),
        node("Helper", "@n8n/n8n-nodes-langchain.agentTool", {
            "toolDescription": "Answers",
            "text": "={{ $('Chat').item.json.sessionId }}: {{ $fromAI('q') }}",
        }),
        node("Inner model", SCRIPTED, {"replies": [{"text": "42"}]}),
    ]
    connections: dict = {}
    link(connections, "Chat", "AI Agent")
    link(connections, "Outer model", "AI Agent", "ai_languageModel")
    link(connections, "Helper", "AI Agent", "ai_tool")
    link(connections, "Inner model", "Helper", "ai_languageModel")
    wf = parse_workflow({"name": "tool pairing", "nodes": nodes, "connections": connections})
    state = await engine.run(wf, items=[chat_item("hello", "session-9")])
    assert state.status == "success", state.error
    messages = state.run_data["Inner model"][0].input["ai_languageModel"][0][0]["json"]["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["session-9: six times seven"]


async def test_the_editor_preview_uses_the_last_runs_input(engine: Engine) -> None:
    from engine.expressions.preview import Preview, expression_preview

    wf = _workflow([("A", {"doubled": ("={{ $json.n * 2 }}", "number")}), ("B", {"x": "plain"})])
    assert expression_preview(None, wf, "B", "={{ $json.doubled }}") is None  # no run, no preview
    state = await engine.run(wf, items=[{"json": {"n": 21}}])
    assert expression_preview(state, wf, "B", "={{ $json.doubled + 1 }}") == Preview("43")
    assert expression_preview(state, wf, "B", "={{ $('Trigger').item.json }}") == Preview('[Object: {"n": 21}]')
    assert expression_preview(state, wf, "B", "=n is {{ $json.missing }}") == Preview("n is ")
    assert expression_preview(state, wf, "B", "={{ $json.missing }}") == Preview("[empty]")
    assert expression_preview(state, wf, "B", "={{ $json.missing.x }}") == Preview("[empty]")  # n8n drops the TypeError
    failed = expression_preview(state, wf, "B", "={{ $('Nowhere').item.json }}")
    assert failed == Preview("ERROR: Referenced node doesn't exist", error=True)
    assert expression_preview(state, wf, "A", "={{ $json.n }}") == Preview("21")  # its own last input
    assert expression_preview(state, wf, "B", "not an expression") is None


def test_undefined_can_be_told_from_null() -> None:
    undefined = object()
    assert evaluate("={{ $json.missing }}", {"n": None}, undefined=undefined) is undefined  # the fast path
    assert evaluate("={{ $json.n }}", {"n": None}, undefined=undefined) is None
    assert evaluate("={{ $json.n ?? undefined }}", {"n": None}, undefined=undefined) is undefined  # the engine
    assert evaluate("={{ $json.missing }}", {"n": None}) is None


def test_dates_before_standard_time_use_local_mean_time() -> None:
    """Before 1883 New York kept its local mean time, -4:56:02: n8n (V8's Intl) shows it to the second."""
    assert (evaluate("={{ DateTime.fromISO('1815-12-10T00:00:00Z').setZone('America/New_York').toISO() }}", {})
            == "1815-12-09T19:03:58.000-04:56")


def test_a_name_n8n_does_not_provide_reads_undefined() -> None:
    """n8n resolves free names from its data or an empty object: no ReferenceError, and only its globals."""
    assert evaluate("={{ someVariable === undefined }}", {}) is True
    assert evaluate("={{ typeof console }}", {}) == "undefined"  # QuickJS's own globals are not n8n's
    assert evaluate("={{ (x => x + 1)(1) + Math.max(1, parseInt('2')) }}", {}) == 4


def test_a_large_value_crosses_from_the_engine() -> None:
    from engine.expressions import evaluate

    assert len(evaluate('={{ Array.from({length: 20000}, (_, i) => ({n: i, s: "abcdefgh"})) }}')) == 20000
    assert len(evaluate('=x{{ "a".repeat(300000) }}')) == 300001


async def test_the_preview_reads_parameter_as_a_run_does(engine: Engine) -> None:
    """n8n's editor resolves `$parameter` against the node's parameters as its form holds them
    (defaults filled in): the preview shows what the run reads, not the file's raw parameters."""
    from engine.expressions.preview import Preview, expression_preview
    from engine.registry import builtin_registry

    wf = _workflow([("A", {"x": "1"}), ("B", {"y": ("={{ $parameter.mode }}", "string")})])
    state = await engine.run(wf, items=[{"json": {"n": 1}}])
    assert state.result[0]["json"] == {"y": "manual"}  # the run: mode is not in the file, n8n's default is
    registry = builtin_registry()
    assert expression_preview(state, wf, "B", "={{ $parameter.mode }}", registry) == Preview("manual")
    assert expression_preview(state, wf, "B", "={{ $parameter.duplicateItem }}", registry) == Preview("false")
    assert expression_preview(state, wf, "B", "={{ $('A').params.mode }}", registry) == Preview("manual")
    assert expression_preview(state, wf, "B", "={{ $parameter.mode }}") == Preview("[empty]")  # raw: not in the file


@pytest.mark.parametrize(("params", "expected"), [
    ({"replies": [{"text": f"reply {i}", "n": i} for i in range(500)] + [{"text": "=x"}]}, True),  # deep, last
    ({"replies": [{"text": f"reply {i}", "n": i} for i in range(500)]}, False),
    ({"=not a value": "plain"}, False),  # a key that starts with "=" is no expression
    ({"text": 'quoted "=inside" text'}, False),  # "= inside a string, not at its start
    ({"big": 2**70, "text": "=x"}, True),  # not JSON for orjson: walked
    ({1: "=x"}, True),
    ({1: "x", "list": [None, 1.5, True]}, False),
])
def test_has_expressions_finds_exactly_the_strings_that_start_with_equals(params: dict, expected: bool) -> None:
    assert has_expressions(params) is expected
