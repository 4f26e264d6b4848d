"""The Agent's fallback model (`needsFallback`): asked when the Chat Model's call fails, shown as
such in the steps table and the run log; the connection rules take a model on each input."""

from __future__ import annotations

import json

from engine.executor import Engine
from engine.registry import Registry
from engine.rules import connection_refusal, node_problems
from engine.steps_table import MODEL_ERROR_FALLBACK, StepBook
from engine.hooks import Hooks, NodeAfter
from engine.workflow import Workflow, parse_workflow
from nodes.triggers.chat_trigger import chat_item
from tests.builders import SCRIPTED, agent_workflow, node

FALLBACK_MISSING = "A Fallback Model sub-node must be connected and enabled"


def _with_fallback(primary: list[dict], fallback: list[dict] | None, needs: bool = True) -> Workflow:
    wf = agent_workflow(primary, tools=[], agent_params={"needsFallback": needs})
    doc = json.loads(wf.to_json())
    if fallback is not None:
        doc["nodes"].append(node("Backup", SCRIPTED, {"replies": fallback}))
        doc["connections"]["Backup"] = {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 1}]]}
    return parse_workflow(doc)


async def _run(engine: Engine, wf: Workflow) -> tuple:
    events: list[NodeAfter] = []
    state = await engine.run(wf, items=[chat_item("hello", "s1")], hooks=Hooks(lambda e: events.append(e) if isinstance(e, NodeAfter) else None))
    return state, events


async def test_the_fallback_answers_when_the_chat_model_fails(engine: Engine) -> None:
    state, events = await _run(engine, _with_fallback([{"error": "rate limited"}], [{"text": "from the backup"}]))
    assert state.status == "success", state.error
    assert state.result[0]["json"] == {"output": "from the backup"}
    assert [t.execution_status for t in state.run_data["Model"]] == ["error"]
    backup = state.run_data["Backup"][0]
    assert backup.metadata["fallback"] is True
    notes = state.run_data["AI Agent"][0].metadata["notes"]
    assert any('"Model" failed (rate limited); the Fallback Model answered' in n for n in notes)
    book = StepBook()
    for event in events:
        book.feed(event)
    book.finish("not run")
    assert [(r.tool, r.status) for r in book.rows] == [(MODEL_ERROR_FALLBACK, "error"), ("final answer", "ok")]
    assert 'the Fallback Model "Backup" was asked instead' in book.rows[0].observation


async def test_when_both_fail_the_chat_models_error_is_the_agents(engine: Engine) -> None:
    state, _ = await _run(engine, _with_fallback([{"error": "first broke"}], [{"error": "second broke"}]))
    assert state.status == "error"
    assert state.error.message == "first broke"
    assert [t.execution_status for t in state.run_data["Backup"]] == ["error"]


async def test_the_option_without_a_fallback_model_is_n8ns_error(engine: Engine) -> None:
    state, _ = await _run(engine, _with_fallback([{"text": "hi"}], None))
    assert state.status == "error"
    assert state.error.message == FALLBACK_MISSING
    assert "Model" not in state.run_data


async def test_a_fallback_model_with_the_option_off_is_not_used(engine: Engine) -> None:
    state, _ = await _run(engine, _with_fallback([{"error": "broke"}], [{"text": "never"}], needs=False))
    assert state.status == "error"
    assert "Backup" not in state.run_data
    state, _ = await _run(engine, _with_fallback([{"text": "fine"}], [{"text": "never"}], needs=False))
    assert state.result[0]["json"] == {"output": "fine"}
    assert any("Enable Fallback Model" in n for n in state.run_data["AI Agent"][0].metadata["notes"])


def test_rules_take_one_model_on_each_input(registry: Registry) -> None:
    wf = _with_fallback([{"text": "a"}], [{"text": "b"}])
    assert node_problems(wf, registry, "AI Agent") == []
    doc = json.loads(wf.to_json())
    doc["nodes"].append(node("Third", SCRIPTED, {"replies": []}))
    assert connection_refusal(parse_workflow(doc), registry, "Third", "ai_languageModel", "AI Agent", 1) \
        == '"AI Agent" takes only 1 Chat Model; "Backup" is connected already'
    doc["connections"]["Backup"]["ai_languageModel"][0][0]["index"] = 0
    wf2 = parse_workflow(doc)
    assert node_problems(wf2, registry, "AI Agent") == ['Node "AI Agent" takes at most 1 Chat Model connection, but 2 are connected']
    assert connection_refusal(wf2, registry, "Third", "ai_languageModel", "AI Agent", 1) is None
