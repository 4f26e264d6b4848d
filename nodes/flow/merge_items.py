"""Combining items as n8n's Merge node does (its helpers of v2 and v3): keys suffixed by input,
clashes resolved by deep or shallow merge, items matched by field values (exactly or fuzzily)."""

from __future__ import annotations

import json
from typing import Any

from engine.errors import NodeOperationError
from engine.run_data import Item
from nodes.core.set_values import MISSING, get_path

from .conditions import js_to_string
from .lodash import assign, is_equal, keep_over_empty, merge, merge_into

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


def field_value(data: dict[str, Any], path: str, plain_names: bool) -> Any:
    return data.get(path, MISSING) if plain_names else get_path(data, path)


def find_matches(first: list[Item], second: list[Item], fields: list[tuple[str, str]], options: dict[str, Any],
                  join: str, source: str) -> tuple[list[tuple[Item, list[Item]]], list[Item], list[Item], list[Item]]:
    """n8n's findMatches: (input-1 item, its matches) pairs, matched input-2 items, the unmatched."""
    equal = fuzzy_equal if options.get("fuzzyCompare") else is_equal
    plain_names = bool(options.get("disableDotNotation"))
    first_only = options.get("multipleMatches", "all") == "first"
    matched: list[tuple[Item, list[Item]]] = []
    unmatched1: list[Item] = []
    hit: set[int] = set()
    for entry in first:
        lookup = {f2: field_value(entry.get("json", {}), f1, plain_names) for f1, f2 in fields}
        if any(v is MISSING for v in lookup.values()):
            unmatched1.append(entry)
            continue
        found = []
        for index, other in enumerate(second):
            if all(equal(v, field_value(other.get("json", {}), k, plain_names)) for k, v in lookup.items()):
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


def merge_matched(matched: list[tuple[Item, list[Item]]], clash: dict[str, Any], join: str,
                  prefer_second: str = "preferLast") -> list[Item]:
    """n8n's mergeMatched: each item merged with its matches, clashes resolved as chosen
    (`prefer_second`: what the version calls preferring input 2, preferLast or preferInput2)."""
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
                resolve = "preferInput1" if join == "enrichInput2" else prefer_second
            data, pairs = {}, []  # another choice (the form's empty one) merges nothing, as in n8n
            if resolve == "preferInput1":
                head, *rest = matches
                data = combine(dict(head.get("json", {})), *(m.get("json", {}) for m in rest), entry.get("json", {}))
                pairs = paired_list(head.get("pairedItem")) + [p for m in rest for p in paired_list(m.get("pairedItem"))] \
                    + paired_list(entry.get("pairedItem"))
            elif resolve == prefer_second:
                data = combine(dict(entry.get("json", {})), *(m.get("json", {}) for m in matches))
                pairs = paired_list(entry.get("pairedItem")) + [p for m in matches for p in paired_list(m.get("pairedItem"))]
        out.append({"json": data, "pairedItem": pairs})
    return out


def check_fields(node: str, fields: list[tuple[str, str]]) -> None:
    """n8n's checkMatchFieldsInput."""
    if len(fields) == 1 and fields[0] == ("", ""):
        raise NodeOperationError('You need to define at least one pair of fields in "Fields to Match" to match on',
                                 node=node)
    for index, (a, b) in enumerate(fields):
        if a == "" or b == "":
            raise NodeOperationError(f"You need to define both fields in \"Fields to Match\" for pair {index + 1},\n"
                                     f"\t\t\t\t field 1 = '{a}'\n\t\t\t\t field 2 = '{b}'", node=node)


def combine_by_fields(node: str, first: list[Item], second: list[Item], fields: list[tuple[str, str]], *, join: str,
                      source: str, options: dict[str, Any], clash: dict[str, Any], stop: list[list[Item]],
                      prefer_second: str) -> list[list[Item]]:
    """n8n's combine by matching fields (Merge v2 mergeByFields, v3 combineByFields): inner, outer,
    left and right joins and the non-matches. `stop` is what the version outputs when an input it
    needs has no items."""
    check_fields(node, fields)
    if not first or not second:
        if not first and join == "keepNonMatches" and source == "input1":
            return [[]]
        if not second and join == "keepNonMatches" and source == "input2":
            return [[]]
        if join == "keepMatches" or (join == "enrichInput1" and not first) or (join == "enrichInput2" and not second):
            return stop
        return [first + second]
    matched, matched2, unmatched1, unmatched2 = find_matches(first, second, fields, options, join, source)
    if join in ("keepMatches", "keepEverything"):
        if source == "input1":
            out = [entry for entry, _ in matched]
        elif source == "input2":
            out = matched2
        else:
            out = merge_matched(matched, clash, join, prefer_second)
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
        merged = merge_matched(matched, clash, join, prefer_second)
        rest = unmatched1 if join == "enrichInput1" else unmatched2
        if clash.get("resolveClash") == "addSuffix":
            rest = with_suffix(rest, "1" if join == "enrichInput1" else "2")
        return [merged + rest]
    return [[]]
