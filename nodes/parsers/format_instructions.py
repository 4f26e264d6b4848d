"""The format instructions a chain appends to its prompt for a structured output parser:
LangChain's StructuredOutputParser text with the parser's schema as compact JSON (as n8n's
Basic LLM Chain sends it, braces of the example doubled as the template leaves them)."""

from __future__ import annotations

import json
from typing import Any

_INSTRUCTIONS = """You must format your output as a JSON value that adheres to a given "JSON Schema" instance.

"JSON Schema" is a declarative language that allows you to annotate and validate JSON documents.

For example, the example "JSON Schema" instance {{"properties": {{"foo": {{"description": "a list of test words", "type": "array", "items": {{"type": "string"}}}}}}, "required": ["foo"]}}}}
would match an object with one required property, "foo". The "type" property specifies "foo" must be an "array", and the "description" property semantically describes it as "a list of test words". The items within "foo" must be strings.
Thus, the object {{"foo": ["bar", "baz"]}} is a well-formatted instance of this example "JSON Schema". The object {{"properties": {{"foo": ["bar", "baz"]}}}} is not well-formatted.

Your output will be parsed and type-checked according to the provided schema instance, so make sure all fields in your output match the schema exactly and there are no trailing commas!

Here is the JSON Schema instance your output must adhere to. Include the enclosing markdown codeblock:
```json
"""


def format_instructions(schema: dict[str, Any]) -> str:
    """The instructions for `schema` (the parser's schema as the model is shown it)."""
    return _INSTRUCTIONS + json.dumps(schema, ensure_ascii=False, separators=(",", ":")) + "\n```\n"
