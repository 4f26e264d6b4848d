"""Stop and Error: fails the run with a message or an error object, as n8n's StopAndError node."""

import json
from typing import Any, Literal

from pydantic import Field

from engine.connection_types import PortSpec
from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

from .conditions import js_to_string
from .params import parameter, plain


class StopAndErrorParams(NodeParams):
    errorType: Literal["errorMessage", "errorObject"] = Field("errorMessage", title="Error Type")
    errorMessage: str = Field("", title="Error Message")
    errorObject: Any = Field("", title="Error Object", json_schema_extra={"multiline": True})


def _text(value: Any) -> str:
    return value if isinstance(value, str) and value else ""


def error_from(error_type: str, value: Any, node: str) -> NodeOperationError:
    """n8n's createErrorFromParameters: the message, or the object's message, description or
    error field (else the whole object), with its description."""
    if error_type == "errorMessage":
        return NodeOperationError(js_to_string(value) if value is not None else "", node=node)
    try:
        data = json.loads(value) if isinstance(value, str) else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        raise NodeOperationError(f'The Error Object of node "{node}" is not a JSON object', node=node,
                                 description=js_to_string(value))
    message = (_text(data.get("message")) or _text(data.get("description")) or _text(data.get("error"))
               or f"Error: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}")
    return NodeOperationError(message, node=node, description=_text(data.get("description")) or None)


class StopAndErrorNode(NodeType):
    type = "n8n-nodes-base.stopAndError"
    version = 1
    display_name = "Stop and Error"
    description = "Fails the run with an error"
    group = "Core"
    icon = "stop"
    outputs: tuple[PortSpec, ...] = ()
    Params = StopAndErrorParams
    implemented_parameters = frozenset({"errorType", "errorMessage", "errorObject"})

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        error_type = plain(parameter(ctx, "errorType", 0, "errorMessage"))
        name = "errorMessage" if error_type == "errorMessage" else "errorObject"
        raise error_from(error_type, plain(parameter(ctx, name, 0, "")), ctx.node.name)
