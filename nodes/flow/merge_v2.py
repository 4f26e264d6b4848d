"""Merge v2–v2.1 (n8n's previous Merge): append; combine by matching fields, by position or every
combination ("multiplex"); choose branch (input 1, input 2 or one empty item). Its rules differ
from v3's in the details kept here: an input without items, unpaired items, "preferInput2"."""

from __future__ import annotations

from typing import Any

from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.run_data import Item
from nodes.core.set_values import MISSING, get_path

from .conditions import js_to_string
from .merge_items import combine_by_fields, merge_method, paired_list, with_suffix
from .params import parameter, plain


def merge_v2(ctx: NodeContext, inputs: list[list[Item]], clash: dict[str, Any]) -> list[list[Item]]:
    """The outputs of a Merge v2 run over its two inputs (items paired as n8n hands them over)."""
    first, second = inputs[0], inputs[1]
    mode = plain(parameter(ctx, "mode", 0, "append"))
    if mode == "append":
        return [first + second]
    if mode == "chooseBranch":
        if plain(parameter(ctx, "chooseBranchMode", 0, "waitForBoth")) != "waitForBoth":
            return [[]]
        output = plain(parameter(ctx, "output", 0, "input1"))
        if output == "input1":
            return [list(first)]
        if output == "input2":
            return [list(second)]
        if output == "empty":
            return [[{"json": {}, "pairedItem": [p for i in first + second for p in paired_list(i.get("pairedItem"))]}]]
        return [[]]
    if mode != "combine":
        return [[]]
    combination = plain(parameter(ctx, "combinationMode", 0, "mergeByFields"))
    if combination == "multiplex":
        return [_multiplex(first, second, clash)]
    if combination == "mergeByPosition":
        return [_by_position(ctx, first, second, clash)]
    if combination == "mergeByFields":
        pairs = (plain(parameter(ctx, "mergeByFields", 0, {"values": [{"field1": "", "field2": ""}]})) or {}).get("values") or []
        fields = [(js_to_string(p.get("field1", "")), js_to_string(p.get("field2", ""))) for p in pairs]
        options = plain(parameter(ctx, "options", 0, {})) or {}
        if float(ctx.node.typeVersion) < 2.1:
            _check_present(ctx.node.name, first, [f for f, _ in fields], options, "Input 1")
            _check_present(ctx.node.name, second, [f for _, f in fields], options, "Input 2")
        return combine_by_fields(ctx.node.name, first, second, fields,
                                 join=plain(parameter(ctx, "joinMode", 0, "keepMatches")),
                                 source=plain(parameter(ctx, "outputDataFrom", 0, "both")), options=options,
                                 clash=clash, stop=[[]], prefer_second="preferInput2")
    return [[]]


def _check_present(node: str, items: list[Item], fields: list[str], options: dict[str, Any], label: str) -> None:
    """Merge v2.0's checkInput: every field to match is in at least one item of the input."""
    plain_names = bool(options.get("disableDotNotation"))
    for name in fields:
        present = any((name in item.get("json", {})) if plain_names else get_path(item.get("json", {}), name) is not MISSING
                      for item in items)
        if not present:
            raise NodeOperationError(f"Field '{name}' is not present in any of items in '{label}'", node=node)


def _multiplex(first: list[Item], second: list[Item], clash: dict[str, Any]) -> list[Item]:
    if clash.get("resolveClash") == "preferInput1":
        first, second = second, first
    if clash.get("resolveClash") == "addSuffix":
        first, second = with_suffix(first, "1"), with_suffix(second, "2")
    combine = merge_method(clash)
    return [{"json": combine(a.get("json", {}), b.get("json", {})), "pairedItem": [a.get("pairedItem"), b.get("pairedItem")]}
            for a in first for b in second]


def _by_position(ctx: NodeContext, first: list[Item], second: list[Item], clash: dict[str, Any]) -> list[Item]:
    options = plain(parameter(ctx, "options", 0, {})) or {}
    include_unpaired = bool(options.get("includeUnpaired", False))
    if not first or not second:
        return first + second
    if clash.get("resolveClash") == "preferInput1":
        first, second = second, first
    if clash.get("resolveClash") == "addSuffix":
        first, second = with_suffix(first, "1"), with_suffix(second, "2")
    count = max(len(first), len(second)) if include_unpaired else min(len(first), len(second))
    combine = merge_method(clash)
    out: list[Item] = []
    for index in range(count):
        if index >= len(first):
            out.append(second[index])
        elif index >= len(second):
            out.append(first[index])
        else:
            a, b = first[index], second[index]
            out.append({"json": combine(a.get("json", {}), b.get("json", {})),
                        "pairedItem": [a.get("pairedItem"), b.get("pairedItem")]})
    return out
