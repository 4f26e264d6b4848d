"""Tool sub-nodes of types mini-n8n does not run (SerpAPI, vector-store tools, ...): the Agent
still runs. Such a tool is offered to the model under its n8n tool name, with its description
and the arguments its `$fromAI()` expressions ask for (else one `input` text, which is what most
of n8n's LangChain tools take); every call of it fails with an error observation naming the
type, recorded as an error run of the node, so the rest of the agent can be debugged. Pinned
data on the node is its answer instead (our extension: n8n ignores pins on sub-nodes).
"""

from __future__ import annotations

import re
from typing import Any

from .chat import ToolSpec
from .workflow import Node

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The input for this tool"}},
    "required": ["input"],
}


def tool_name(node_name: str) -> str:
    """n8n's nodeNameToToolName: every character outside [A-Za-z0-9_-] becomes `_`."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", node_name.strip()) or "tool"


def placeholder_tool(node: Node, has_model_fields: bool) -> ToolSpec:
    """What the model is offered for an unsupported tool node."""
    params = node.parameters or {}
    described = next((params[k] for k in ("toolDescription", "description") if isinstance(params.get(k), str) and params[k]), None)
    description = described or f"{node.name} ({node.type})"
    schema = {"type": "object", "properties": {}, "required": []} if has_model_fields else dict(INPUT_SCHEMA)
    return ToolSpec(name=tool_name(node.name), description=description, parameters=schema, sourceNodeName=node.name)
