"""Tools whose supply depends on their parameters alone are supplied once per execution; a tool
whose parameters hold an expression is asked again at every round of the Agent."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine.executor import Engine
from engine.registry import builtin_registry
from nodes.tools.calculator import Calculator
from nodes.triggers.chat_trigger import chat_item
from tests.builders import CALCULATOR, agent_workflow, tool_call

ROUNDS = 3


def counted_supplies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Calculator's supply_data, counting its calls (the description it gave each time)."""
    calls: list[str] = []
    supply = Calculator.supply_data

    async def counting(self: Calculator, ctx: Any) -> Any:
        spec = await supply(self, ctx)
        calls.append(spec.description)
        return spec

    monkeypatch.setattr(Calculator, "supply_data", counting)
    return calls


def run(params: dict[str, Any]) -> Any:
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} + 1"})]} for i in range(ROUNDS)] + [{"text": "done"}]
    workflow = agent_workflow(replies, tools=[("Calculator", CALCULATOR, params)], agent_options={"maxIterations": 10})
    state = asyncio.run(Engine(builtin_registry()).run(workflow, items=[chat_item("go", "s")]))
    assert state.status == "success", state.error
    assert [run.data["ai_tool"][0][0]["json"] for run in state.run_data["Calculator"]] == [
        {"response": str(i + 1)} for i in range(ROUNDS)]
    return state


def test_a_tool_of_fixed_parameters_is_supplied_once_for_every_round(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counted_supplies(monkeypatch)
    state = run({"description": "Adds numbers"})
    assert calls == ["Adds numbers"]
    # every round of the model saw the tool as it was supplied
    tools = [run.input["ai_languageModel"][0][0]["json"]["tools"] for run in state.run_data["Model"]]
    assert tools == [["Calculator"]] * (ROUNDS + 1)


def test_a_tool_with_an_expression_is_supplied_again_at_every_round(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counted_supplies(monkeypatch)
    run({"description": "={{ 'Adds numbers, round ' + $runIndex }}"})
    assert len(calls) == ROUNDS + 1  # once per model call: the Agent asks at each of its rounds
