"""Merge: combines the items of its inputs, as n8n's Merge node v3–v3.2 does.

Modes: append (each input's items in turn), combine by matching fields (inner, outer, left,
right joins and non-matches), by position, all combinations (cross join), and choose branch.
The run waits for every connected input (engine/executor.py); when the run would otherwise end
it goes ahead with the inputs that came, except in choose-branch mode, which needs both, as in
n8n. SQL Query mode and v1–v2 are refused with a clear error.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pydantic import ConfigDict, Field

from engine.connection_types import MAIN, PortSpec
from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item
from nodes.core.set_values import MISSING, get_path, is_nan, js_number

from .conditions import js_to_string
from .if_node import paired
from .lodash import assign, is_equal, keep_over_empty, merge, merge_into
from .params import parameter, plain


class MergeParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    mode: str = Field("append", title="Mode")
    combineBy: str = Field("combineByFields", title="Combine By")
    numberInputs: int = Field(2, title="Number of Inputs", ge=2, le=10)
    fieldsToMatchString: str = Field("", title="Fields to Match")
    joinMode: str = Field("keepMatches", title="Output Type")
    outputDataFrom: str = Field("both", title="Output Data From")
    options: Any = Field(default_factory=dict, title="Options")


def paired_list(pair: Any) -> list[Any]:
    """n8n's paired_listItemDataArray."""
    if pair is None or pair is MISSING:
        return []
    if isinstance(pair, (int, float)) and not isinstance(pair, bool):
        return [{"item": pair}]
    return list(pair) if isinstance(pair, list) else [pair]


def with_suffix(items: list[Item], suffix: str) -> list[Item]:
    return [{**item, "json": {f"{k}_{suffix}": v for k, v in item.get("json", {}).items()}} for item in items]


def merge_method(clash: dict[str, Any]) -> Any:
    """n8n's selectMergeMethod: deep (default) or shallow, optionally keeping values over empty ones."""
    customizer = keep_over_empty if clash.get("overrideEmpty") else None
    if clash.get("mergeMode") == "shallowMerge":
        return lambda *objects: assign(*objects, customizer=customizer)
    if customizer is not None and clash.get("mergeMode", "deepMerge") == "deepMerge":
        # n8n's mergeWith(Object.assign({}, target), ...): the target's nested objects take the merge
        def merge_with(target: dict[str, Any], *sources: dict[str, Any]) -> dict[str, Any]:
            out = dict(target)
            for source in sources:
                merge_into(out, source or {}, customizer, in_place=True)
            return out
        return merge_with
    return lambda *objects: merge(*objects, customizer=customizer)


def _falsy(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value == "") or (isinstance(value, list) and not value)


def fuzzy_equal(a: Any, b: Any) -> bool:
    """n8n's fuzzyCompare (version 1) for matching field values."""
    def kind(v: Any) -> str:
        if v is MISSING:
            return "undefined"
        if isinstance(v, bool):
            return "boolean"
        if isinstance(v, (int, float)):
            return "number"
        if isinstance(v, str):
            return "string"
        return "object"

    if a is not None and b is not None and kind(a) == kind(b):
        return is_equal(a, b)
    if _falsy(a) and _falsy(b):
        return True
    if (_falsy(a) and b is MISSING) or (a is MISSING and _falsy(b)):
        return True
    for x, y in ((a, b), (b, a)):
        if kind(x) == "number" and kind(y) == "string":
            return js_to_string(x) == y
        if kind(x) == "object" and x is not None and kind(y) == "string":
            try:
                return is_equal(json.loads(y), x)
            except ValueError:
                return False
    for x, y in ((a, b), (b, a)):
        if kind(x) == "boolean" and kind(y) == "string":
            if y.lower() == ("true" if x else "false") or y == ("1" if x else "0"):
                return True
        if kind(x) == "boolean" and kind(y) == "number" and y == (1 if x else 0):
            return True
    return is_equal(a, b)


class MergeNode(NodeType):
    type = "n8n-nodes-base.merge"
    version = 3.2
    versions = (3, 3.1, 3.2)
    display_name = "Merge"
    description = "Merges the items of several inputs once all of them arrived"
    group = "Core"
    icon = "merge"
    inputs = (PortSpec(MAIN, "Input 1"), PortSpec(MAIN, "Input 2"))
    Params = MergeParams

    @classmethod
    def required_inputs(cls, parameters: dict[str, Any]) -> int | list[int] | None:
        return [0, 1] if parameters.get("mode") == "chooseBranch" else 1

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        node = ctx.node.name
        if float(ctx.node.typeVersion) < 3:
            raise NodeOperationError(
                f'Node "{node}" is a Merge of typeVersion {ctx.node.typeVersion}, which mini-n8n does not run '
                "(it supports versions 3 to 3.2)", node=node,
                description="Open the workflow in n8n and replace the node with a new Merge node")
        count = int(js_number(plain(parameter(ctx, "numberInputs", 0, 2))) or 2)
        mode = plain(parameter(ctx, "mode", 0, "append"))
        if mode == "combine":
            mode = plain(parameter(ctx, "combineBy", 0, "combineByFields"))
        # a deep merge that keeps values over empty ones merges into nested objects in place: copies
        in_place = mode != "append" and bool(self._clash(ctx).get("overrideEmpty"))
        inputs = [[paired({**item, "json": copy.deepcopy(item.get("json", {}))} if in_place else item, i, k)
                   for i, item in enumerate(ctx.input_data(k))] for k in range(count)]
        if mode == "append":
            return [[item for items in inputs for item in items]]
        if mode == "chooseBranch":
            return self._choose_branch(ctx, inputs)
        if mode == "combineAll":
            return self._combine_all(ctx, inputs)
        if mode == "combineByPosition":
            return self._by_position(ctx, inputs)
        if mode == "combineByFields":
            return self._by_fields(ctx, inputs)
        raise NodeOperationError(f'Node "{node}" uses Merge mode "{mode}", which mini-n8n does not support'
                                 + (" (SQL queries need n8n's AlaSQL)" if mode == "combineBySql" else ""), node=node)

    @staticmethod
    def _clash(ctx: NodeContext) -> dict[str, Any]:
        """`options.clashHandling.values`, {} when the file leaves it out (as n8n reads it)."""
        options = plain(parameter(ctx, "options", 0, {})) or {}
        clash = (options.get("clashHandling") or {}).get("values") if isinstance(options.get("clashHandling"), dict) else None
        return clash if isinstance(clash, dict) else {}

    def _choose_branch(self, ctx: NodeContext, inputs: list[list[Item]]) -> list[list[Item]]:
        if plain(parameter(ctx, "chooseBranchMode", 0, "waitForAll")) != "waitForAll":
            return [[]]
        output = plain(parameter(ctx, "output", 0, "specifiedInput"))
        out: list[Item] = []
        if output == "specifiedInput":
            chosen = plain(parameter(ctx, "useDataOfInput", 0, 1))
            number = js_number(chosen)
            if number > len(inputs):
                raise NodeOperationError(f"Input {js_to_string(chosen)} doesn't exist", node=ctx.node.name,
                                         description=f"The node has only {len(inputs)} inputs, so selecting input "
                                                     f"{js_to_string(chosen)} is not possible.")
            if is_nan(number) or number != int(number) or number < 1:
                raise NodeOperationError(f"Input {js_to_string(chosen)} doesn't exist", node=ctx.node.name)
            out.extend(inputs[int(number) - 1])
        if output == "empty":
            pairs = [p for item in inputs[0] + (inputs[1] if len(inputs) > 1 else []) for p in paired_list(item.get("pairedItem"))]
            out.append({"json": {}, "pairedItem": pairs})
        return [out]

    def _combine_all(self, ctx: NodeContext, inputs: list[list[Item]]) -> list[list[Item]]:
        clash = self._clash(ctx)
        first, second = inputs[0], inputs[1]
        if clash.get("resolveClash") == "preferInput1":
            first, second = second, first
        if clash.get("resolveClash") == "addSuffix":
            first, second = with_suffix(first, "1"), with_suffix(second, "2")
        combine = merge_method(clash)
        return [[{"json": combine(a.get("json", {}), b.get("json", {})), "pairedItem": [a.get("pairedItem"), b.get("pairedItem")]}
                 for a in first for b in second]]

    def _by_position(self, ctx: NodeContext, inputs: list[list[Item]]) -> list[list[Item]]:
        clash = self._clash(ctx)
        options = plain(parameter(ctx, "options", 0, {}))
        include_unpaired = bool(options.get("includeUnpaired", False)) if isinstance(options, dict) else False
        resolve = clash.get("resolveClash") or ""
        preferred_index = int(js_number(resolve.replace("preferInput", ""))) - 1 if "preferInput" in resolve else len(inputs) - 1
        preferred = inputs[preferred_index]
        if resolve == "addSuffix":
            inputs = [with_suffix(items, str(k + 1)) for k, items in enumerate(inputs)]
        lengths = [len(items) for items in inputs] + [len(preferred)]
        count = max(lengths) if include_unpaired else min(lengths)
        combine = merge_method(clash)
        out = []
        for index in range(count):
            best = preferred[index] if index < len(preferred) else {}
            rest = [items[index] if index < len(items) else {} for items in inputs]
            data = combine(*(entry.get("json", {}) for entry in rest), best.get("json", {}))
            pairs: list[Any] = []
            for entry in rest:
                pair = entry.get("pairedItem", MISSING)
                pairs.extend(pair if isinstance(pair, list) else [pair])
            pairs.append(best.get("pairedItem", MISSING))
            out.append({"json": data, "pairedItem": [p for p in pairs if p is not MISSING]})
        return [out]

    def _by_fields(self, ctx: NodeContext, inputs: list[list[Item]]) -> list[list[Item]]:
        node = ctx.node.name
        if plain(parameter(ctx, "advanced", 0, False)):
            pairs = (plain(parameter(ctx, "mergeByFields", 0, {"values": [{"field1": "", "field2": ""}]})) or {}).get("values") or []
            fields = [(js_to_string(p.get("field1", "")), js_to_string(p.get("field2", ""))) for p in pairs]
        else:
            text = js_to_string(plain(parameter(ctx, "fieldsToMatchString", 0, "")))
            fields = [(f.strip(), f.strip()) for f in text.split(",")]
        if len(fields) == 1 and fields[0] == ("", ""):
            raise NodeOperationError('You need to define at least one pair of fields in "Fields to Match" to match on',
                                     node=node)
        for index, (a, b) in enumerate(fields):
            if a == "" or b == "":
                raise NodeOperationError(f"You need to define both fields in \"Fields to Match\" for pair {index + 1},\n"
                                         f"\t\t\t\t field 1 = '{a}'\n\t\t\t\t field 2 = '{b}'", node=node)
        join = plain(parameter(ctx, "joinMode", 0, "keepMatches"))
        source = plain(parameter(ctx, "outputDataFrom", 0, "both"))
        options = plain(parameter(ctx, "options", 0, {})) or {}
        first, second = inputs[0], inputs[1]
        if not first or not second:
            if not first and join == "keepNonMatches" and source == "input1":
                return [[]]
            if not second and join == "keepNonMatches" and source == "input2":
                return [[]]
            if join == "keepMatches" or (join == "enrichInput1" and not first) or (join == "enrichInput2" and not second):
                return []
            return [first + second]
        matched, matched2, unmatched1, unmatched2 = _find_matches(first, second, fields, options, join, source)
        clash = self._clash(ctx)
        out: list[Item] = []
        if join in ("keepMatches", "keepEverything"):
            if source == "input1":
                out = [entry for entry, _ in matched]
            elif source == "input2":
                out = matched2
            else:
                out = _merge_matched(matched, clash, join)
            if join == "keepEverything":
                if clash.get("resolveClash") == "addSuffix":
                    unmatched1, unmatched2 = with_suffix(unmatched1, "1"), with_suffix(unmatched2, "2")
                out = out + unmatched1 + unmatched2
            return [out]
        if join == "keepNonMatches":
            if source == "input1":
                return [unmatched1]
            if source == "input2":
                return [unmatched2]
            return [[{**i, "json": {**i.get("json", {}), "_source": "input1"}} for i in unmatched1]
                    + [{**i, "json": {**i.get("json", {}), "_source": "input2"}} for i in unmatched2]]
        if join in ("enrichInput1", "enrichInput2"):
            merged = _merge_matched(matched, clash, join)
            rest = unmatched1 if join == "enrichInput1" else unmatched2
            if clash.get("resolveClash") == "addSuffix":
                rest = with_suffix(rest, "1" if join == "enrichInput1" else "2")
            return [merged + rest]
        return [[]]


def _field(data: dict[str, Any], path: str, plain_names: bool) -> Any:
    return data.get(path, MISSING) if plain_names else get_path(data, path)


def _find_matches(first: list[Item], second: list[Item], fields: list[tuple[str, str]], options: dict[str, Any],
                  join: str, source: str) -> tuple[list[tuple[Item, list[Item]]], list[Item], list[Item], list[Item]]:
    """n8n's findMatches: (input-1 item, its matches) pairs, matched input-2 items, the unmatched."""
    equal = fuzzy_equal if options.get("fuzzyCompare") else is_equal
    plain_names = bool(options.get("disableDotNotation"))
    first_only = options.get("multipleMatches", "all") == "first"
    matched: list[tuple[Item, list[Item]]] = []
    unmatched1: list[Item] = []
    hit: set[int] = set()
    for entry in first:
        lookup = {f2: _field(entry.get("json", {}), f1, plain_names) for f1, f2 in fields}
        if any(v is MISSING for v in lookup.values()):
            unmatched1.append(entry)
            continue
        found = []
        for index, other in enumerate(second):
            if all(equal(v, _field(other.get("json", {}), k, plain_names)) for k, v in lookup.items()):
                found.append((index, other))
                if first_only:
                    break
        hit.update(index for index, _ in found)
        if not found:
            unmatched1.append(entry)
        elif source == "both" or join in ("enrichInput1", "enrichInput2"):
            matched.extend((entry, [other]) for _, other in found)
        else:
            matched.append((entry, [other for _, other in found]))
    matched2 = [item for i, item in enumerate(second) if i in hit]
    unmatched2 = [item for i, item in enumerate(second) if i not in hit]
    return matched, matched2, unmatched1, unmatched2


def _merge_matched(matched: list[tuple[Item, list[Item]]], clash: dict[str, Any], join: str) -> list[Item]:
    """n8n's mergeMatched: each item merged with its matches, clashes resolved as chosen."""
    resolve = clash.get("resolveClash")
    combine = merge_method(clash)
    out = []
    for entry, matches in matched:
        if resolve == "addSuffix":
            entry = with_suffix([entry], "1")[0]
            matches = with_suffix(matches, "2")
            data = combine(dict(entry.get("json", {})), *(m.get("json", {}) for m in matches))
            pairs = paired_list(entry.get("pairedItem")) + [p for m in matches for p in paired_list(m.get("pairedItem"))]
        else:
            if resolve is None:
                resolve = "preferInput1" if join == "enrichInput2" else "preferLast"
            data, pairs = {}, []  # another choice (the form's empty one) merges nothing, as in n8n
            if resolve == "preferInput1":
                head, *rest = matches
                data = combine(dict(head.get("json", {})), *(m.get("json", {}) for m in rest), entry.get("json", {}))
                pairs = paired_list(head.get("pairedItem")) + [p for m in rest for p in paired_list(m.get("pairedItem"))] \
                    + paired_list(entry.get("pairedItem"))
            elif resolve == "preferLast":
                data = combine(dict(entry.get("json", {})), *(m.get("json", {}) for m in matches))
                pairs = paired_list(entry.get("pairedItem")) + [p for m in matches for p in paired_list(m.get("pairedItem"))]
        out.append({"json": data, "pairedItem": pairs})
    return out
