"""Edit Fields (Set): sets fields on each item, as n8n's Set node does in each of its versions.

v1–v2 `values` (string/number/boolean lists, keepOnlySet), v3.0–3.2 `fields` with typed values
and `include`, v3.3–3.4 `assignments` with `includeOtherFields`; from v3 also `mode: raw`, a
JSON object written with `{{ }}` segments. The rules per version are n8n's (Set/v1, Set/v2).
"""

import copy
from typing import Any, Literal

from pydantic import ConfigDict, Field

from engine.context import NodeContext
from engine.defaults import new_list
from engine.errors import NodeOperationError
from engine.expressions import evaluate
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

from .set_values import (MISSING, convert_field, get_path, js_number, is_nan, js_string, js_truthy,
                         parse_js_object, plain_key, set_path, unset_path)


class Assignment(NodeParams):
    id: str = ""
    name: str = ""
    value: Any = None
    type: str = "string"


class AssignmentCollection(NodeParams):
    assignments: list[Assignment] = Field(default_factory=new_list)


class SetOptions(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    dotNotation: bool = Field(True, title="Support Dot Notation")
    ignoreConversionErrors: bool = Field(False, title="Ignore Type Conversion Errors")


V3_EARLY = [3, 3.1, 3.2]  # n8n's displayOptions name these versions


class SetParams(NodeParams):
    """The v3.4 form; parameters of older versions (values, fields, keepOnlySet) are kept as extras."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    mode: Literal["manual", "raw"] = Field("manual", title="Mode")
    assignments: AssignmentCollection = Field(default_factory=AssignmentCollection, title="Fields to Set",
                                              json_schema_extra={"displayOptions": {"show": {"mode": ["manual"]}}})
    jsonOutput: Any = Field('{\n  "my_field_1": "value",\n  "my_field_2": 1\n}\n', title="JSON",
                            json_schema_extra={"multiline": True, "displayOptions": {"show": {"mode": ["raw"]}}})
    # v3-v3.2 choose the input fields with `include` alone; v3.3 on behind includeOtherFields
    includeOtherFields: bool = Field(False, title="Include Other Input Fields", json_schema_extra={
        "displayOptions": {"hide": {"@version": V3_EARLY}}})
    include: Literal["all", "none", "selected", "except"] = Field("all", title="Input Fields to Include", json_schema_extra={
        "displayOptions": [{"show": {"@version": V3_EARLY}},
                           {"hide": {"@version": V3_EARLY, "/includeOtherFields": [False]}}]})
    includeFields: str = Field("", title="Fields to Include", json_schema_extra={
        "displayOptions": [{"show": {"include": ["selected"], "@version": V3_EARLY}},
                           {"show": {"include": ["selected"], "/includeOtherFields": [True]}, "hide": {"@version": V3_EARLY}}]})
    excludeFields: str = Field("", title="Fields to Exclude", json_schema_extra={
        "displayOptions": [{"show": {"include": ["except"], "@version": V3_EARLY}},
                           {"show": {"include": ["except"], "/includeOtherFields": [True]}, "hide": {"@version": V3_EARLY}}]})
    options: SetOptions = Field(default_factory=SetOptions, title="Options")


# n8n duplicates items ("Duplicate Item", a testing aid) only in runs started from the editor
EDITOR_MODES = ("manual", "debug")

# v3.0–3.2 `fields.values` entries: what n8n fills in for a value left out of the file
V3_VALUE_DEFAULTS = {"stringValue": "", "numberValue": "", "booleanValue": "true", "arrayValue": "", "objectValue": "={}"}


class SetFields(NodeType):
    type = "n8n-nodes-base.set"
    version = 3.4
    versions = (1, 2, 3, 3.1, 3.2, 3.3, 3.4)
    display_name = "Edit Fields (Set)"
    default_name = "Edit Fields"
    description = "Sets fields on each item, from fixed values or the input's fields"
    group = "Core"
    icon = "set"
    Params = SetParams
    implemented_parameters = frozenset({
        "mode", "duplicateItem", "duplicateCount", "values", "keepOnlySet", "fields", "assignments", "jsonOutput",
        "include", "includeOtherFields", "includeFields", "excludeFields", "options", "options.dotNotation",
        "options.ignoreConversionErrors", "options.includeBinary", "options.stripBinary"})

    @classmethod
    def n8n_parameters(cls, parameters: dict[str, Any], version: float) -> dict[str, Any]:
        """v3+: the parameters n8n's form shows for this mode and version, in its order, each
        defaulted; v1-v2 (another form in n8n) as written."""
        if float(version) < 3:
            return parameters
        p, v3_fields = parameters, float(version) < 3.3
        out: dict[str, Any] = {"mode": p.get("mode", "manual"), "duplicateItem": p.get("duplicateItem", False)}
        if out["duplicateItem"] is True:
            out["duplicateCount"] = p.get("duplicateCount", 0)
            out["duplicateWarning"] = p.get("duplicateWarning", "")
        if out["mode"] == "raw":
            out["jsonOutput"] = p.get("jsonOutput", SetParams.model_fields["jsonOutput"].default)
        elif v3_fields:
            fields = p.get("fields", {})
            if isinstance(fields, dict) and isinstance(fields.get("values"), list):
                fields = {**fields, "values": [_shown_field(e) for e in fields["values"]]}
            out["fields"] = fields
        else:
            out["assignments"] = p.get("assignments", {})
        include = None
        if v3_fields:
            include = out["include"] = p.get("include", "all")
        else:
            out["includeOtherFields"] = p.get("includeOtherFields", False)
            if out["includeOtherFields"] is True:
                include = out["include"] = p.get("include", "all")
        if include == "selected":
            out["includeFields"] = p.get("includeFields", "")
        elif include == "except":
            out["excludeFields"] = p.get("excludeFields", "")
        out["options"] = p.get("options", {})
        return out

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        version = float(ctx.node.typeVersion)
        if version < 3:
            items = ctx.items or [{"json": {}}]  # v1–v2 set fields on an empty item when given none
            return [[_set_v1(ctx, i, item, version) for i, item in enumerate(items)]]
        out = []
        for i, item in enumerate(ctx.items):
            try:
                params = ctx.params(i).model_dump(by_alias=True)
                options = dict(params.get("options") or {})
                if version >= 3.3:
                    options["include"] = params.get("include", "all") if params.get("includeOtherFields") else "none"
                else:
                    options["include"] = params.get("include", "all")
                if params.get("mode") == "raw":
                    fields = _raw_fields(ctx, i, params)
                else:
                    fields = _manual_fields(ctx, i, params, options, version)
                new = _compose(ctx, i, item, fields, options, params, version)
            except NodeOperationError as exc:
                if not ctx.continue_on_fail():
                    raise
                new = _error_item(ctx, i, exc.message)
                params = {"duplicateItem": ctx.node.parameters.get("duplicateItem")}
            copies = 1
            if params.get("duplicateItem") and ctx.execution_mode in EDITOR_MODES:
                copies += max(0, int(js_number(ctx.params(0).model_dump().get("duplicateCount", 0)) or 0))
            out.extend(copy.deepcopy(new) for _ in range(copies))
        return [out]


def _error_item(ctx: NodeContext, i: int, message: str) -> Item:
    """n8n's item for an item that failed under continueOnFail: raw mode pairs it with the item;
    manual mode puts the pairing inside `json` (as n8n's Edit Fields does)."""
    if ctx.node.parameters.get("mode") == "raw":
        return {"json": {"error": message}, "pairedItem": {"item": i}}
    return {"json": {"error": message, "pairedItem": {"item": i}}}


def _set_v1(ctx: NodeContext, i: int, item: Item, version: float) -> Item:
    """Set v1/v2: booleans, then numbers, then strings; input fields kept unless keepOnlySet."""
    params = ctx.params(i).model_dump(by_alias=True) if ctx.items else _unresolved(ctx)
    options = params.get("options") or {}
    values = params.get("values") or {}
    new: Item = {"json": {}}
    if not params.get("keepOnlySet", False):
        new["json"] = copy.deepcopy(item.get("json", {}))
        if item.get("binary") is not None:
            new["binary"] = dict(item["binary"])
    data = new["json"]

    def put(name: str, value: Any) -> None:
        if options.get("dotNotation") is False:
            data[name] = value
        else:
            set_path(data, name, value)

    for entry in values.get("boolean") or []:
        put(entry.get("name", "propertyName"), js_truthy(entry.get("value", False)))
    for entry in values.get("number") or []:
        value = entry.get("value", 0)
        if version >= 2 and isinstance(value, str) and not is_nan(js_number(value)):
            value = js_number(value)
        put(entry.get("name", "propertyName"), value)
    for entry in values.get("string") or []:
        put(entry.get("name", "propertyName"), entry.get("value", ""))
    return new


def _shown_field(entry: Any) -> Any:
    """A v3.0-3.2 `fields.values` entry as n8n's form holds it: name, type and that type's value."""
    if not isinstance(entry, dict):
        return entry
    kind = entry.get("type", "stringValue")
    return {"name": entry.get("name", ""), "type": kind, kind: entry.get(kind, V3_VALUE_DEFAULTS.get(kind, ""))}


def _unresolved(ctx: NodeContext) -> dict[str, Any]:
    return dict(ctx.node.parameters)


def _manual_fields(ctx: NodeContext, i: int, params: dict[str, Any], options: dict[str, Any], version: float) -> dict[str, Any]:
    ignore = bool(options.get("ignoreConversionErrors", False))
    name_of = ctx.node.name
    fields: dict[str, Any] = {}
    if version < 3.3:
        raw_entries = ((ctx.node.parameters.get("fields") or {}).get("values") or [])
        entries = (params.get("fields") or {}).get("values") or []
        for index, entry in enumerate(entries):
            kind = entry.get("type") or "stringValue"
            value = entry.get(kind, V3_VALUE_DEFAULTS.get(kind))
            raw_object = raw_entries[index].get("objectValue") if index < len(raw_entries) else None
            if kind == "objectValue" and isinstance(raw_object, str) and raw_object.startswith("="):
                value = _parse_object(_resolve_raw(ctx, i, raw_object.lstrip("=")), name_of, i, entry.get("name", ""))
            raw_value = raw_entries[index].get(kind) if index < len(raw_entries) else None
            if value is None and isinstance(raw_value, str) and raw_value.startswith("="):
                value = _undefined_or_null(ctx, i, raw_value, f"fields.values[{index}].{kind}")
            name = entry.get("name", "")
            fields[name] = convert_field(name, kind.removesuffix("Value"), value, node=name_of, item_index=i,
                                         ignore_errors=ignore, version=version)
        return fields
    for assignment in (params.get("assignments") or {}).get("assignments") or []:
        kind = assignment.get("type") or "string"
        if kind == "binary":
            raise NodeOperationError(f"Field '{assignment.get('name')}' is of type binary, which mini-n8n does not support",
                                     node=name_of)
        name = js_string(assignment.get("name", ""))
        fields[name] = convert_field(name, kind, assignment.get("value"), node=name_of, item_index=i,
                                     ignore_errors=ignore, version=version)
    return fields


def _undefined_or_null(ctx: NodeContext, i: int, expression: str, parameter: str) -> Any:
    """An expression's null value told apart from `undefined` (MISSING): Set v3.0-3.1 write and
    report them differently (the text 'undefined' vs 'null')."""
    return evaluate(expression, scope=ctx.expression_scope(), item_index=i, parameter=parameter, undefined=MISSING)


def _raw_fields(ctx: NodeContext, i: int, params: dict[str, Any]) -> dict[str, Any]:
    raw = ctx.node.parameters.get("jsonOutput", SetParams.model_fields["jsonOutput"].default)
    if isinstance(raw, str) and raw.startswith("="):
        return _parse_object(_resolve_raw(ctx, i, raw.lstrip("=")), ctx.node.name, i)
    return _parse_object(params.get("jsonOutput"), ctx.node.name, i)


def _resolve_raw(ctx: NodeContext, i: int, text: str) -> str:
    """n8n's resolveRawData: each `{{ }}` segment replaced by its value, objects as JSON."""
    out, pos = [], 0
    while True:
        start = text.find("{{", pos)
        end = text.find("}}", start + 2) if start >= 0 else -1
        if start < 0 or end < 0:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos:start])
        value = ctx.evaluate("=" + text[start:end + 2], i)
        out.append(js_string(value))
        pos = end + 2


def _parse_object(data: Any, node: str, i: int, entry: str | None = None) -> dict[str, Any]:
    where = f"entry \"{entry}\" inside 'Fields to Set'" if entry else "'JSON Output'"
    if isinstance(data, str):
        try:
            data = parse_js_object(data)
        except ValueError:
            raise NodeOperationError(f"The {where} in item {i} contains invalid JSON", node=node, description=data) from None
    if not isinstance(data, dict):
        raise NodeOperationError(f"The {where} in item {i} does not contain a valid JSON object", node=node)
    return data


def _compose(ctx: NodeContext, i: int, item: Item, fields: dict[str, Any], options: dict[str, Any],
             params: dict[str, Any], version: float) -> Item:
    """n8n's composeReturnItem: the kept input fields, then the new fields written into them,
    paired with the input item."""
    include = options.get("include", "all")
    dots = options.get("dotNotation") is not False
    new: Item = {"json": {}, "pairedItem": {"item": i}}
    keep_binary = (not options.get("stripBinary", True) and include != "none") if version >= 3.4 \
        else bool(options.get("includeBinary", False))
    if keep_binary and item.get("binary") is not None:
        new["binary"] = dict(item["binary"])
    source = item.get("json", {})
    if include == "all":
        new["json"] = copy.deepcopy(source)
    elif include == "selected":
        for key in _field_list(params.get("includeFields")):
            value = get_path(source, key) if dots else source.get(plain_key(source, key), MISSING)
            target = key.split(".")[-1] if dots and "." in key else key
            if value is not MISSING:  # lodash writes `undefined`, which JSON leaves out
                _put(new["json"], target, copy.deepcopy(value), dots)
    elif include == "except":
        data = copy.deepcopy(source)
        for key in _field_list(params.get("excludeFields")):
            if dots:
                unset_path(data, key)
            else:
                data.pop(plain_key(data, key), None)
        new["json"] = data
    elif include != "none":
        raise NodeOperationError(f'The include option "{include}" is not known!', node=ctx.node.name)
    for key, value in fields.items():
        _put(new["json"], key, value, dots)
    return new


def _put(data: dict[str, Any], key: str, value: Any, dots: bool) -> None:
    if dots:
        set_path(data, key, value)
    else:
        data[plain_key(data, key)] = value


def _field_list(text: Any) -> list[str]:
    return [part.strip() for part in str(text or "").split(",") if part.strip()]
