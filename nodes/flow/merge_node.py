"""Merge: combines the items of its inputs, as n8n's Merge node v3–v3.2 does (v2–v2.1 in merge_v2).

Modes: append (each input's items in turn), combine by matching fields (inner, outer, left,
right joins and non-matches), by position, all combinations (cross join), and choose branch.
The run waits for every connected input (engine/executor.py); when the run would otherwise end
it goes ahead with the inputs that came, except in choose-branch mode, which needs both, as in
n8n. SQL Query mode and v1 are refused with a clear error.
"""

import copy
from typing import Any

from pydantic import ConfigDict, Field

from engine.connection_types import MAIN, PortSpec
from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item
from nodes.core.set_values import MISSING, is_nan, js_number

from .conditions import js_to_string
from .if_node import paired
from .merge_items import combine_by_fields, merge_method, paired_list, with_suffix
from .merge_v2 import merge_v2
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


class MergeNode(NodeType):
    type = "n8n-nodes-base.merge"
    version = 3.2
    versions = (1, 2, 2.1, 3, 3.1, 3.2)  # v1 is refused at run
    display_name = "Merge"
    description = "Merges the items of several inputs once all of them arrived"
    group = "Core"
    icon = "merge"
    inputs = (PortSpec(MAIN, "Input 1"), PortSpec(MAIN, "Input 2"))
    Params = MergeParams
    implemented_parameters = frozenset({
        "mode", "combineBy", "combinationMode", "numberInputs", "advanced", "fieldsToMatchString", "mergeByFields",
        "joinMode", "outputDataFrom", "chooseBranchMode", "output", "useDataOfInput", "options", "options.clashHandling",
        "options.disableDotNotation", "options.fuzzyCompare", "options.includeUnpaired", "options.multipleMatches"})
    unsupported_parameters = {
        "query": "SQL Query mode (combineBySql) is refused with an error naming it",
        "options.emptyQueryResult": "an option of SQL Query mode, which is refused",
        "join": "Merge v1 is refused with an error naming its version",
        "overwrite": "Merge v1 is refused with an error naming its version",
        "propertyName1": "Merge v1 is refused with an error naming its version",
        "propertyName2": "Merge v1 is refused with an error naming its version",
    }

    def ports_for(self, parameters: dict[str, Any], version: float) -> tuple[tuple[PortSpec, ...], tuple[PortSpec, ...]]:
        """v3's `numberInputs` inputs (2 to 10), two before."""
        count = parameters.get("numberInputs", 2) if version >= 3 else 2
        count = count if isinstance(count, int) and not isinstance(count, bool) and 2 <= count <= 10 else 2
        return tuple(PortSpec(MAIN, f"Input {i + 1}") for i in range(count)), self.outputs

    @classmethod
    def required_inputs(cls, parameters: dict[str, Any]) -> int | list[int] | None:
        return [0, 1] if parameters.get("mode") == "chooseBranch" else 1

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        node = ctx.node.name
        version = float(ctx.node.typeVersion)
        if version < 2:
            raise NodeOperationError(
                f'Node "{node}" is a Merge of typeVersion {ctx.node.typeVersion}, which mini-n8n does not run '
                "(it supports versions 2 to 3.2)", node=node,
                description="Open the workflow in n8n and replace the node with a new Merge node")
        count = int(js_number(plain(parameter(ctx, "numberInputs", 0, 2))) or 2) if version >= 3 else 2
        mode = plain(parameter(ctx, "mode", 0, "append"))
        if mode == "combine":
            mode = plain(parameter(ctx, "combineBy", 0, "combineByFields"))
        # a deep merge that keeps values over empty ones merges into nested objects in place: copies
        in_place = mode != "append" and bool(self._clash(ctx).get("overrideEmpty"))
        inputs = [[paired({**item, "json": copy.deepcopy(item.get("json", {}))} if in_place else item, i, k)
                   for i, item in enumerate(ctx.input_data(k))] for k in range(count)]
        if version < 3:
            return merge_v2(ctx, inputs, self._clash(ctx))
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
        if plain(parameter(ctx, "advanced", 0, False)):
            pairs = (plain(parameter(ctx, "mergeByFields", 0, {"values": [{"field1": "", "field2": ""}]})) or {}).get("values") or []
            fields = [(js_to_string(p.get("field1", "")), js_to_string(p.get("field2", ""))) for p in pairs]
        else:
            text = js_to_string(plain(parameter(ctx, "fieldsToMatchString", 0, "")))
            fields = [(f.strip(), f.strip()) for f in text.split(",")]
        return combine_by_fields(ctx.node.name, inputs[0], inputs[1], fields,
                                 join=plain(parameter(ctx, "joinMode", 0, "keepMatches")),
                                 source=plain(parameter(ctx, "outputDataFrom", 0, "both")),
                                 options=plain(parameter(ctx, "options", 0, {})) or {}, clash=self._clash(ctx),
                                 stop=[], prefer_second="preferLast")
