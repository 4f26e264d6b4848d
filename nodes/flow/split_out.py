"""Split Out: turns a list (or object) field of each item into one item per entry, as n8n's
Split Out node v1 does: several fields side by side, the other fields kept, some, or none."""

import copy
from typing import Any, Literal

from pydantic import ConfigDict, Field

from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item
from nodes.core.set_values import MISSING, get_path, unset_path

from .conditions import js_to_string
from .params import parameter, plain


class SplitOutParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    fieldToSplitOut: str = Field("", title="Fields To Split Out")
    include: Literal["noOtherFields", "allOtherFields", "selectedOtherFields"] = Field("noOtherFields", title="Include")
    fieldsToInclude: str = Field("", title="Fields To Include")
    options: Any = Field(default_factory=dict, title="Options")


def field_list(value: Any, name: str) -> list[Any]:
    """n8n's prepareFieldsArray: comma-separated text, or a list as it is."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip() != ""]
    if isinstance(value, list):
        return value
    raise NodeOperationError(f"The '{name}' parameter must be a string of fields separated by commas or an array of strings.")


def _entries(value: Any) -> list[Any]:
    """What one field splits into: a list's entries, an object's values, a lone value as one entry."""
    if value is MISSING:
        return []
    if not isinstance(value, (dict, list)):
        return [value]
    return list(value.values()) if isinstance(value, dict) else value


class SplitOutNode(NodeType):
    type = "n8n-nodes-base.splitOut"
    version = 1
    display_name = "Split Out"
    description = "Turns a list inside an item into separate items"
    group = "Core"
    icon = "split-out"
    Params = SplitOutParams
    implemented_parameters = frozenset({"fieldToSplitOut", "include", "fieldsToInclude", "options",
                                        "options.destinationFieldName", "options.disableDotNotation", "options.includeBinary"})

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        node = ctx.node.name
        out: list[Item] = []
        for i, source in enumerate(ctx.items):
            fields = [f.strip().removeprefix("$json.") for f in
                      js_to_string(plain(parameter(ctx, "fieldToSplitOut", i, ""))).split(",")]
            options = plain(parameter(ctx, "options", i, {})) or {}
            dots = not options.get("disableDotNotation")
            destinations = [f.strip() for f in js_to_string(options.get("destinationFieldName") or "").split(",")
                            if f.strip() != ""]
            if destinations and len(destinations) != len(fields):
                raise NodeOperationError("If multiple fields to split out are given, the same number of destination "
                                         "fields must be given", node=node)
            include = plain(parameter(ctx, "include", i, "noOtherFields"))
            multi = len(fields) > 1
            data = dict(source.get("json", {}))
            split: list[Item] = []
            for entry_index, field in enumerate(fields):
                destination = destinations[entry_index] if entry_index < len(destinations) else ""
                if field == "$binary":
                    raise NodeOperationError(f'Node "{node}" splits out binary data, which mini-n8n does not support',
                                             node=node)
                value = get_path(data, field) if dots else data.get(field, MISSING)
                name = destination or field
                for element_index, element in enumerate(_entries(value)):
                    if element_index >= len(split):
                        split.append({"json": {}, "pairedItem": {"item": i}})
                    target = split[element_index]
                    if isinstance(element, dict) and include == "noOtherFields" and destination == "" and not multi:
                        split[element_index] = {"json": {**target["json"], **element}, "pairedItem": {"item": i}}
                    else:
                        target["json"][name] = element
            for entry in split:
                if include == "allOtherFields":
                    rest = copy.deepcopy(data)
                    for field in fields:
                        if dots:
                            unset_path(rest, field)
                        else:
                            rest.pop(field, None)
                    entry["json"] = {**rest, **entry["json"]}
                elif include == "selectedOtherFields":
                    wanted = field_list(plain(parameter(ctx, "fieldsToInclude", i, "")), "Fields To Include")
                    if not wanted:
                        raise NodeOperationError("No fields specified", node=node, description="Please add a field to include")
                    for field in wanted:
                        value = get_path(data, field) if dots else data.get(field, MISSING)
                        if value is not MISSING:  # lodash writes undefined, which JSON leaves out
                            entry["json"][field] = value
                if options.get("includeBinary") and source.get("binary") and not entry.get("binary"):
                    entry["binary"] = source["binary"]
                out.append(entry)
        return [out]
