"""Structured Output Parser (n8n's `outputParserStructured`, v1–v1.3): the answer an Agent or a
chain must give, as a JSON schema written out or generated from an example.

The schema the answer is checked against wraps the user's schema: `{"output": <schema>}` from
v1.1 (`output` optional before v1.3), `{"__structured__output": {...object or ...array}}` in v1.
A generated schema marks every field required from v1.3 on. The answer is parsed as n8n's Zod
schema parses it (nodes/parsers/json_schema_check.py): unknown keys dropped, defaults filled.
"""

import json
import re
from typing import Any, Literal

from pydantic import Field, field_validator

from engine.connection_types import AI_OUTPUT_PARSER, PortSpec
from engine.context import SupplyContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from .js_errors import json_parse_message, zod_message
from .json_schema_check import SchemaViolation, parse_with_schema, unsupported_keywords
from .model_schema import model_schema
from .schema_from_example import ExampleError, schema_from_example

WRAPPER = "__structured__output"
WRAPPER_OBJECT = "__structured__output__object"
WRAPPER_ARRAY = "__structured__output__array"
FORMAT_ERROR = "Model output doesn't fit required format"
FORMAT_ERROR_HINT = "To continue the execution when this happens, change the 'On Error' parameter in the root node's settings"
EXAMPLE = '{\n\t"state": "California",\n\t"cities": ["Los Angeles", "San Francisco", "San Diego"]\n}'
SCHEMA = json.dumps(
    {"type": "object", "properties": {"state": {"type": "string"}, "cities": {"type": "array", "items": {"type": "string"}}}},
    indent="\t",
)
_FENCE = re.compile(r"```(?:json)?")


class StructuredParams(NodeParams):
    schemaType: Literal["fromJson", "manual"] = Field(
        "fromJson", title="Schema Type", description="fromJson: generate the schema from a JSON example; manual: a JSON schema",
    )
    jsonSchemaExample: str = Field(EXAMPLE, title="JSON Example", json_schema_extra={"multiline": True})
    inputSchema: str = Field(SCHEMA, title="Input Schema", json_schema_extra={"multiline": True})
    jsonSchema: str = Field(SCHEMA, title="JSON Schema (v1, v1.1)", json_schema_extra={"multiline": True})
    autoFix: bool = Field(False, title="Auto-Fix Format", description="Ask the model again when its answer does not fit")

    @field_validator("jsonSchemaExample", "inputSchema", "jsonSchema", mode="before")
    @classmethod
    def _json_text(cls, value: Any) -> Any:
        """n8n keeps these as JSON text; a file may hold the JSON itself."""
        return value if isinstance(value, str) else json.dumps(value)


class OutputParserError(NodeOperationError):
    """The answer does not fit: n8n's message, the reason and the schema violations in the description;
    `raw` is the error as JavaScript words it (JSON.parse's or Zod's message), which a fixing prompt shows."""

    def __init__(self, message: str, *, node: str | None = None, description: str | None = None, raw: str = "") -> None:
        super().__init__(message, node=node, description=description)
        self.raw = raw


def _text_of(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _parse_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


class StructuredOutputParser:
    """What the node supplies: the schema for the model's format tool, and `parse(text)`."""

    def __init__(self, node: str, version: float, item_schema: dict[str, Any]) -> None:
        self.node = node
        self.version = version
        if version == 1:
            wrapper = {
                "type": "object",
                "properties": {WRAPPER_OBJECT: item_schema, WRAPPER_ARRAY: {"type": "array", "items": item_schema}},
                "description": f"Wrapper around the output data. It can only contain {WRAPPER_OBJECT} or {WRAPPER_ARRAY} but never both.",
            }
            self.schema: dict[str, Any] = {"type": "object", "properties": {WRAPPER: wrapper}, "required": [WRAPPER]}
        else:
            required = ["output"] if version >= 1.3 else []
            self.schema = {"type": "object", "properties": {"output": item_schema}, "required": required}

    def tool_schema(self) -> dict[str, Any]:
        """The parameters of the Agent's `format_final_json_response` tool."""
        return model_schema(self.schema)

    async def parse(self, text: str) -> Any:
        """The answer as n8n's parser returns it; OutputParserError when it does not fit."""
        body = (_FENCE.split(text)[1] if "```" in text else text).strip()
        try:
            value = _parse_json(body)
        except json.JSONDecodeError as exc:
            said = json_parse_message(body, exc)
            raise self._error("Invalid JSON in model output", said, said) from None
        except (ValueError, RecursionError) as exc:
            raise self._error("Invalid JSON in model output", str(exc), str(exc)) from None
        try:
            parsed = parse_with_schema(self.schema, value)
        except SchemaViolation as exc:
            reason = "Model output does not match the expected schema"
            if text.strip() == "{}" or (exc.issues[0].path == ["output"] and exc.issues[0].message == "Required"):
                reason = "Model output wrapper is an empty object"
            raise self._error(reason, str(exc), zod_message(exc.issues)) from None
        if self.version == 1 and self._exactly_one_wrapped(parsed) is False:
            refine = f"One and only one of {WRAPPER_OBJECT} and {WRAPPER_ARRAY} should be present."
            raise self._error("Model output does not match the expected schema", f"{WRAPPER}: {refine}",
                              json.dumps([{"code": "custom", "message": refine, "path": [WRAPPER]}], indent=2))
        result = _unwrapped(parsed)
        return _unnested(result)

    @staticmethod
    def _exactly_one_wrapped(parsed: Any) -> bool:
        inner = parsed.get(WRAPPER) if isinstance(parsed, dict) else None
        if not isinstance(inner, dict):
            return True
        return bool(inner.get(WRAPPER_OBJECT)) != bool(inner.get(WRAPPER_ARRAY))

    def _error(self, reason: str, detail: str, raw: str) -> OutputParserError:
        return OutputParserError(
            FORMAT_ERROR, node=self.node, description=f"{reason}: {detail}. {FORMAT_ERROR_HINT}", raw=raw,
        )


def _unwrapped(parsed: Any) -> Any:
    """lodash `get` on the v1 wrapper keys, `??` after each (a null falls through)."""
    if isinstance(parsed, dict):
        inner = parsed.get(WRAPPER)
        if isinstance(inner, dict):
            for key in (WRAPPER_OBJECT, WRAPPER_ARRAY):
                if inner.get(key) is not None:
                    return inner[key]
        if inner is not None:
            return inner
    return parsed


def _unnested(result: Any) -> Any:
    """`{output: {output: {...}}}` becomes `{output: {...}}`, as n8n's unwrapNestedOutput does."""
    if (isinstance(result, dict) and list(result) == ["output"] and isinstance(result["output"], dict)
            and list(result["output"]) == ["output"]):
        return result["output"]
    return result


def item_schema(node: str, version: float, parameters: dict[str, Any], params: StructuredParams) -> dict[str, Any]:
    """The user's schema: generated from the example, or the JSON schema given."""
    schema_type = params.schemaType if version >= 1.2 else parameters.get("schemaType", "")
    try:
        if schema_type == "fromJson":
            return schema_from_example(_text_of(params.jsonSchemaExample), every_field_required=version >= 1.3)
        text = _text_of(params.inputSchema if version >= 1.2 else params.jsonSchema)
        schema = json.loads(text)
    except (ExampleError, ValueError) as exc:
        raise NodeOperationError(
            "Error during parsing of JSON Schema. Please check the schema and try again.", node=node, description=str(exc),
        ) from None
    if not isinstance(schema, dict):
        raise NodeOperationError(
            "Error during parsing of JSON Schema. Please check the schema and try again.", node=node,
            description="the schema is not a JSON object",
        )
    unsupported = unsupported_keywords(schema)
    if unsupported:
        raise NodeOperationError(
            f'Structured Output Parser "{node}": its JSON schema uses {", ".join(unsupported)}, which mini-n8n does not check',
            node=node,
            description="Remove these keywords, or describe the constraint in the field's description instead",
        )
    return schema


class StructuredOutputParserNode(NodeType):
    type = "@n8n/n8n-nodes-langchain.outputParserStructured"
    version = 1.3
    versions = (1, 1.1, 1.2, 1.3)
    display_name = "Structured Output Parser"
    description = "Return data in a defined JSON format: the Agent's answer is checked against a JSON schema"
    group = "AI"
    icon = "node"
    inputs = ()
    outputs = (PortSpec(AI_OUTPUT_PARSER, "Output Parser"),)
    Params = StructuredParams
    implemented_parameters = frozenset({"schemaType", "jsonSchemaExample", "inputSchema", "jsonSchema"})
    unsupported_parameters = {
        "autoFix": "Auto-Fix Format on is refused with an error naming it",
        "customizeRetryPrompt": "a setting of Auto-Fix Format, which is refused with an error naming it",
        "prompt": "a setting of Auto-Fix Format, which is refused with an error naming it",
    }

    async def supply_data(self, ctx: SupplyContext) -> StructuredOutputParser:
        params: StructuredParams = ctx.params()
        name = ctx.node.name
        version = float(ctx.node.typeVersion)
        schema = item_schema(name, version, ctx.node.parameters, params)
        if params.autoFix:
            raise NodeOperationError(
                f'Structured Output Parser "{name}" has Auto-Fix Format on, which mini-n8n does not support yet',
                node=name,
                description="Turn Auto-Fix Format off, or use an Auto-fixing Output Parser node",
            )
        return StructuredOutputParser(name, version, schema)

