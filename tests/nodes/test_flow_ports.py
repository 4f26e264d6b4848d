"""Nodes whose ports follow their parameters, as n8n configures them: the canvas draws these."""

from __future__ import annotations

from engine.registry import builtin_registry


def labels(specs: tuple) -> list[str]:
    return [spec.label for spec in specs]


def test_switch_outputs_follow_rules_mode_and_version() -> None:
    switch = builtin_registry().get("n8n-nodes-base.switch")
    rules = {"rules": {"values": [{"outputKey": "small"}, {}]}, "options": {"fallbackOutput": "extra"}}
    assert labels(switch.ports_for(rules, 3.2)[1]) == ["small", "1", "Fallback"]
    assert labels(switch.ports_for({"mode": "expression", "numberOutputs": 3}, 3.4)[1]) == ["0", "1", "2"]
    assert labels(switch.ports_for({"rules": {"rules": [{}, {}, {}]}}, 2)[1]) == ["0", "1", "2"]
    assert len(switch.ports_for({}, 1)[1]) == 4
    assert labels(switch.ports_for({}, 3.4)[1]) == ["0"]  # n8n's default: one rule


def test_merge_inputs_follow_number_of_inputs() -> None:
    merge = builtin_registry().get("n8n-nodes-base.merge")
    assert labels(merge.ports_for({"numberInputs": 4}, 3.2)[0]) == ["Input 1", "Input 2", "Input 3", "Input 4"]
    assert len(merge.ports_for({"numberInputs": 4}, 2.1)[0]) == 2
    assert len(merge.ports_for({"numberInputs": "={{ 3 }}"}, 3)[0]) == 2


def test_if_and_loop_have_their_two_named_outputs() -> None:
    registry = builtin_registry()
    assert labels(registry.get("n8n-nodes-base.if").ports_for({}, 2.2)[1]) == ["true", "false"]
    assert labels(registry.get("n8n-nodes-base.splitInBatches").ports_for({}, 3)[1]) == ["done", "loop"]
