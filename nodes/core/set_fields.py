"""Edit Fields (Set): sets fields on each item, values may be `{{ $json.path }}` expressions."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field

from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item


class Assignment(NodeParams):
    id: str = ""
    name: str
    value: Any = None
    type: Literal["string", "number", "boolean", "array", "object"] = "string"


class AssignmentCollection(NodeParams):
    assignments: list[Assignment] = Field(default_factory=list)


class SetParams(NodeParams):
    mode: Literal["manual"] = "manual"
    assignments: AssignmentCollection = Field(default_factory=AssignmentCollection, title="Fields to Set")
    includeOtherFields: bool = Field(False, title="Include Other Input Fields")


def _convert(a: Assignment, node: str) -> Any:
    value = a.value
    try:
        if a.type == "string":
            return value if isinstance(value, str) else ("" if value is None else json.dumps(value))
        if a.type == "number":
            return value if isinstance(value, (int, float)) and not isinstance(value, bool) else float(value)
        if a.type == "boolean":
            return value if isinstance(value, bool) else str(value).strip().lower() in ("true", "1", "yes")
        if isinstance(value, str):
            return json.loads(value)
        return value
    except (TypeError, ValueError) as exc:
        raise NodeOperationError(f"Field '{a.name}' cannot be read as {a.type}: {value!r}", node=node) from exc


class SetFields(NodeType):
    type = "n8n-nodes-base.set"
    version = 3.4
    display_name = "Edit Fields (Set)"
    default_name = "Edit Fields"
    description = "Sets fields on each item, from fixed values or the input's fields"
    group = "Core"
    icon = "set"
    Params = SetParams

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        out = []
        for i, item in enumerate(ctx.items):
            params: SetParams = ctx.params(i)
            data = dict(item.get("json", {})) if params.includeOtherFields else {}
            for a in params.assignments.assignments:
                data[a.name] = _convert(a, ctx.node.name)
            out.append({"json": data})
        return [out]
