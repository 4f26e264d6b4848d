"""Aggregate: gathers many items into one, as n8n's Aggregate node v1 does: chosen fields into
lists (renamed, lists merged, empty values kept or dropped), or every item into one list."""

from typing import Any

from pydantic import ConfigDict, Field

from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item
from nodes.core.set_values import MISSING, get_path, set_path

from .conditions import js_to_string
from .params import parameter, plain
from .split_out import field_list

DEFAULT_FIELDS = {"fieldToAggregate": [{"fieldToAggregate": "", "renameField": False}]}


class AggregateParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    aggregate: str = Field("aggregateIndividualFields", title="Aggregate")
    fieldsToAggregate: Any = Field(default_factory=lambda: DEFAULT_FIELDS, title="Fields To Aggregate")
    destinationFieldName: str = Field("data", title="Put Output in Field")
    include: str = Field("allFields", title="Include")
    options: Any = Field(default_factory=dict, title="Options")


class AggregateNode(NodeType):
    type = "n8n-nodes-base.aggregate"
    version = 1
    display_name = "Aggregate"
    description = "Combines a field from many items into a list in a single item"
    group = "Core"
    icon = "aggregate"
    Params = AggregateParams
    implemented_parameters = frozenset({
        "aggregate", "fieldsToAggregate", "destinationFieldName", "include", "fieldsToExclude", "fieldsToInclude", "options",
        "options.disableDotNotation", "options.keepMissing", "options.mergeLists"})
    unsupported_parameters = {"options.includeBinaries": "including binaries is refused with an error naming it",
                              "options.keepOnlyUnique": "an option of including binaries, which is refused"}

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        items = ctx.items
        options = plain(parameter(ctx, "options", 0, {})) or {}
        if options.get("includeBinaries"):
            raise NodeOperationError(f'Node "{ctx.node.name}" includes binary data, which mini-n8n does not support',
                                     node=ctx.node.name)
        if plain(parameter(ctx, "aggregate", 0, "aggregateIndividualFields")) == "aggregateIndividualFields":
            return [[self._fields(ctx, items, options)]]
        return [[self._all(ctx, items)]]

    @staticmethod
    def _fields(ctx: NodeContext, items: list[Item], options: dict[str, Any]) -> Item:
        node = ctx.node.name
        dots = not options.get("disableDotNotation")
        merge_lists = bool(options.get("mergeLists"))
        keep_missing = bool(options.get("keepMissing"))
        fields = (plain(parameter(ctx, "fieldsToAggregate", 0, DEFAULT_FIELDS)) or {}).get("fieldToAggregate") or []
        if not fields:
            raise NodeOperationError("No fields specified", node=node, description="Please add a field to aggregate")
        values: dict[str, list[Any]] = {}
        used: list[str] = []
        for spec in fields:
            name = js_to_string(spec.get("fieldToAggregate", ""))
            rename = spec.get("renameField", False)
            output_name = spec.get("outputFieldName", "")
            label = output_name if rename else name
            if label in used:
                raise NodeOperationError(f"The '{js_to_string(label)}' output field is used more than once", node=node,
                                         description="Please make sure each output field name is unique")
            used.append(label)
            key = output_name or (name.split(".")[-1] if dots and "." in name else name)
            if name == "":
                continue
            gathered = values[key] = []
            for item in items:
                data = item.get("json", {})
                value = get_path(data, name) if dots else data.get(name, MISSING)
                if not keep_missing:
                    if isinstance(value, list):
                        value = [entry for entry in value if entry is not None]
                    elif value is None or value is MISSING:
                        continue
                if isinstance(value, list) and merge_lists:
                    gathered.extend(value)
                else:
                    gathered.append(None if value is MISSING else value)
        out: Item = {"json": {}, "pairedItem": [{"item": index} for index in range(len(items))]}
        for key, gathered in values.items():
            if dots:
                set_path(out["json"], key, gathered)
            else:
                out["json"][key] = gathered
        return out

    @staticmethod
    def _all(ctx: NodeContext, items: list[Item]) -> Item:
        destination = js_to_string(plain(parameter(ctx, "destinationFieldName", 0, "data")))
        exclude = field_list(plain(parameter(ctx, "fieldsToExclude", 0, "")), "Fields To Exclude")
        include = field_list(plain(parameter(ctx, "fieldsToInclude", 0, "")), "Fields To Include")
        rows = [item.get("json", {}) for item in items]
        if not exclude and not include:
            return {"json": {destination: rows}, "pairedItem": [{"item": i} for i in range(len(rows))]}
        kept, pairs = [], []
        for index, row in enumerate(rows):
            keys = [k for k in row if k not in exclude]
            if include:
                keys = [k for k in keys if k in include]
            new = {k: row[k] for k in keys}
            if new:
                kept.append(new)
                pairs.append({"item": index})
        return {"json": {destination: kept}, "pairedItem": pairs}
