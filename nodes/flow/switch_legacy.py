"""Switch v1–v2 (n8n's first Switch): one value compared with each rule's value (boolean, date,
number or string comparisons of the first-generation conditions), or an expression naming the
output. v1 has four fixed outputs and rules that name theirs; v2 one output per rule."""

from __future__ import annotations

from typing import Any

from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.run_data import Item
from nodes.core.set_values import is_nan, js_number

from .conditions import js_to_string
from .if_node import paired
from .js_values import JsValues
from .legacy_compare import LegacyComparer
from .params import parameter, plain

VALUE1_DEFAULT = {"boolean": False, "dateTime": "", "number": 0, "string": ""}
RULE_DEFAULTS = {"boolean": ("equal", False), "dateTime": ("after", 0), "number": ("smaller", 0), "string": ("equal", "")}


def _index(value: Any) -> Any:
    """An output index as JavaScript reads `returnData[index]` (numeric text counts)."""
    if isinstance(value, str) and value.strip() != "":
        number = js_number(value)
        return value if is_nan(number) else number
    return value


def _in_range(outputs: list[list[Item]], index: Any, node: str) -> None:
    """n8n's checkIndexRange of Switch v1–v2 (a value JavaScript cannot compare passes)."""
    number = _index(index)
    if isinstance(number, (int, float)) and not isinstance(number, bool) and (number < 0 or number >= len(outputs)):
        raise NodeOperationError(f"The ouput {js_to_string(index)} is not allowed. It has to be between 0 and "
                                 f"{len(outputs) - 1}!", node=node)


def _check(outputs: list[list[Item]], index: Any, node: str) -> list[Item]:
    """The output list at an index that passed the range check (JavaScript fails on any other)."""
    _in_range(outputs, index, node)
    number = _index(index)
    if isinstance(number, bool) or not isinstance(number, (int, float)) or number != int(number):
        raise NodeOperationError("Cannot read properties of undefined (reading 'push')", node=node)
    return outputs[int(number)]


def switch_legacy(ctx: NodeContext) -> list[list[Item]]:
    node = ctx.node.name
    v1 = float(ctx.node.typeVersion) < 2
    comparer = LegacyComparer(JsValues(ctx.expression_scope().state), node)
    outputs: list[list[Item]] = [[], [], [], []] if v1 else []
    for index, source in enumerate(ctx.items):
        item = paired(source, index)
        rules = (plain(parameter(ctx, "rules", index, {})) or {}).get("rules") or []
        mode = plain(parameter(ctx, "mode", index, "rules"))
        if mode == "expression":
            if not v1 and index == 0:
                count = js_number(plain(parameter(ctx, "outputsAmount", index, 4)))
                outputs = [[] for _ in range(int(count) if not is_nan(count) and count > 0 else 0)]
            _check(outputs, plain(parameter(ctx, "output", index, 0 if v1 else "")), node).append(item)
            continue
        if mode != "rules":
            continue
        if not v1 and index == 0:
            outputs = [[] for _ in rules]
        data_type = plain(parameter(ctx, "dataType", 0, "number"))
        defaults = RULE_DEFAULTS.get(data_type, RULE_DEFAULTS["string"])
        value1 = plain(parameter(ctx, "value1", index, VALUE1_DEFAULT.get(data_type, "")))
        if data_type == "dateTime":
            value1 = comparer.date(value1)
        matched = False
        for rule_index, rule in enumerate(rules or []):
            rule = rule if isinstance(rule, dict) else {}
            value2 = rule.get("value2", defaults[1])
            if data_type == "dateTime":
                value2 = comparer.date(value2)
            operation = rule.get("operation", defaults[0])
            compare = comparer.ops.get(operation)
            if compare is None or operation in ("isEmpty", "isNotEmpty"):
                raise NodeOperationError("compareOperationFunctions[ruleData.operation] is not a function", node=node)
            if compare(value1, value2):
                if v1:  # v1: the rule names its output
                    _check(outputs, rule.get("output", 0), node).append(item)
                else:  # v2: the rule's own output (a stray `output` is only range-checked)
                    _in_range(outputs, rule.get("output"), node)
                    outputs[rule_index].append(item)
                matched = True
                break
        if matched:
            continue
        fallback = plain(parameter(ctx, "fallbackOutput", index, -1))
        if _index(fallback) != -1:
            _check(outputs, fallback, node).append(item)
    return outputs
