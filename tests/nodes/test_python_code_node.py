"""Code node in Python, run in the Code Tool's sandboxed process: n8n's Pyodide globals (`_input`,
`_json`, `items`/`item`, `_('Node')`), items read both ways, return values checked by n8n's rules
worded for dictionaries, print() to the run log, errors as n8n words them; native Python's
`_items`/`_item`. (Outputs recorded from real n8n are in tests/parity/workflows/code-py-*.json.)"""

from __future__ import annotations

import asyncio
from typing import Any

from engine.executor import Engine
from engine.registry import builtin_registry
from engine.run_data import TaskData
from engine.workflow import parse_workflow
from nodes.flow.python_code import NATIVE_NOTE
from tests.builders import link, node

ITEMS = [{"json": {"n": 1, "gone": None}}, {"json": {"n": 2, "gone": None}}]


def run(code: str, mode: str = "runOnceForAllItems", language: str = "python") -> TaskData:
    nodes = [node("Start", "n8n-nodes-base.manualTrigger"), node("Items", "n8n-nodes-base.noOp"),
             node("Code", "n8n-nodes-base.code", {"language": language, "pythonCode": code, "mode": mode})]
    connections: dict[str, Any] = {}
    link(connections, "Start", "Items")
    link(connections, "Items", "Code")
    workflow = parse_workflow({"name": "code", "nodes": nodes, "connections": connections, "pinData": {"Items": ITEMS}})
    state = asyncio.run(Engine(builtin_registry()).run(workflow))
    return state.run_data["Code"][0]


def out(task: TaskData) -> list[Any]:
    assert task.error is None, task.error
    return [item["json"] for item in task.data["main"][0]]


def test_the_default_code_adds_a_field_to_every_item() -> None:
    task = run("for item in _input.all():\n  item.json.myNewField = 1\nreturn _input.all()")
    assert out(task) == [{"n": 1, "gone": None, "myNewField": 1}, {"n": 2, "gone": None, "myNewField": 1}]
    assert [item["pairedItem"] for item in task.data["main"][0]] == [{"item": 0}, {"item": 1}]


def test_items_read_both_ways_and_dicts_of_the_codes_own_lose_none() -> None:
    code = "return [{'json': {'sum': sum(i['json']['n'] for i in items), 'first': _input.first().json.n, 'none': None}}]"
    assert out(run(code)) == [{"sum": 3, "first": 1}]
    assert out(run("return {'total': len(_input.all())}")) == [{"total": 2}]


def test_each_item_sees_item_and_json() -> None:
    code = "item.json.double = _json['n'] * 2\nreturn item"
    assert out(run(code, "runOnceForEachItem")) == [{"n": 1, "gone": None, "double": 2}, {"n": 2, "gone": None, "double": 4}]
    assert out(run("return {'i': _itemIndex, 'from': _('Items').item.json.n}", "runOnceForEachItem")) == [
        {"i": 0, "from": 1}, {"i": 1, "from": 2}]


def test_other_nodes_outputs_and_workflow_globals() -> None:
    code = "return [{'n': len(_('Items').all()), 'last': _('Items').last().json.n, 'prev': _prevNode.name, 'run': _runIndex}]"
    assert out(run(code)) == [{"n": 2, "last": 2, "prev": "Items", "run": 0}]


def test_print_goes_to_the_run_log() -> None:
    task = run("print('seen', len(items))\nreturn items")
    assert task.metadata["notes"] == ["print: seen 2"]


def test_errors_are_worded_as_n8n_words_them() -> None:
    task = run("return [{'x': undefined_name}]")
    assert task.error is not None and task.error.message == "NameError: name 'undefined_name' is not defined\n"
    task = run("return items[0].json.missing")
    assert task.error is not None and task.error.message == "AttributeError: missing\n"
    task = run("return 5")
    assert task.error is not None and task.error.message == "Code doesn't return items properly"
    assert task.error.description == "Please return an array of dictionaries, one for each item you would like to output."
    task = run("return [1, 2]", "runOnceForEachItem")
    assert task.error is not None and task.error.message == "Code doesn't return a single dictionary [item 0]"
    task = run("return None", "runOnceForEachItem")
    assert task.error is not None and task.error.message == "Code doesn't return a dictionary [item 0]"
    assert task.error.description == "Please return a dictionary representing the output item. ('undefined' was returned instead.)"


def test_globals_mini_n8n_does_not_give_say_so() -> None:
    task = run("return [{'when': str(_now)}]")
    assert task.error is not None
    assert task.error.message == "NotImplementedError: _now (Luxon's DateTime) is not available in mini-n8n's Python Code node\n"


def test_the_code_runs_without_network_or_the_users_files() -> None:
    task = run("import os\nreturn [{'home': os.environ.get('HOME', ''), 'keys': [k for k in os.environ if 'KEY' in k]}]")
    [result] = out(task)
    assert result["keys"] == [] and "mini-n8n-code-" in result["home"]


def test_native_python_gets_plain_dictionaries_and_a_note() -> None:
    task = run("return [{'n': i['json']['n'], 'gone': i['json']['gone']} for i in _items]", language="pythonNative")
    assert out(task) == [{"n": 1, "gone": None}, {"n": 2, "gone": None}]
    assert NATIVE_NOTE in task.metadata["notes"]
    each = run("return {'n': _item['json']['n'] + 10}", "runOnceForEachItem", language="pythonNative")
    assert out(each) == [{"n": 11}, {"n": 12}]
