"""The GUI's one door to the engine: document access and rules here, runs in `RunBridge` below.

Every other module of `gui/` imports engine things from this module only, so the boundary
between the Qt editor and the headless core stays in one place.
"""

from __future__ import annotations

from engine.connection_types import (
    AI_LANGUAGE_MODEL,
    AI_MEMORY,
    AI_OUTPUT_PARSER,
    AI_TOOL,
    ALL_TYPES,
    MAIN,
    SUB_NODE_TYPES,
    PortSpec,
)
from engine.errors import MiniN8nError, WorkflowFileError
from engine.node_type import NodeType, UnsupportedNodeType
from engine.registry import Registry, builtin_registry
from engine.rules import connection_refusal, node_problems, port_name, workflow_problems
from engine.workflow import (
    ConnectionTarget,
    Node,
    Workflow,
    dump_workflow,
    load_workflow,
    load_workflow_text,
    parse_workflow,
    save_workflow,
    workflow_to_data,
)

__all__ = [
    "AI_LANGUAGE_MODEL", "AI_MEMORY", "AI_OUTPUT_PARSER", "AI_TOOL", "ALL_TYPES", "MAIN", "SUB_NODE_TYPES",
    "PortSpec", "MiniN8nError", "WorkflowFileError", "NodeType", "UnsupportedNodeType", "Registry",
    "builtin_registry", "connection_refusal", "node_problems", "port_name", "workflow_problems",
    "ConnectionTarget", "Node", "Workflow", "dump_workflow", "load_workflow", "load_workflow_text",
    "parse_workflow", "save_workflow", "workflow_to_data",
]

# ----- running workflows (RunBridge: engine hook events -> Qt signals) ------------------------
