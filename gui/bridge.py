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
from engine.editing import DocumentEditor, EditError, Link, ParamPath, copy_connections, links_of, unique_name
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
    "DocumentEditor", "EditError", "Link", "ParamPath", "copy_connections", "links_of", "unique_name",
    "credential_store", "credential_types_of",
]


def credential_store():  # type: ignore[no-untyped-def]
    """The local credential store (the user's credential file, then the environment)."""
    from engine.credentials import default_credential_store

    return default_credential_store()


def credential_types_of(node_type: NodeType) -> tuple[str, ...]:
    """The credential types a node type uses: its `credential_types`, else its module's CREDENTIAL_TYPE."""
    import sys

    declared = getattr(node_type, "credential_types", None)
    if declared:
        return tuple(declared)
    module = sys.modules.get(type(node_type).__module__)
    single = getattr(module, "CREDENTIAL_TYPE", None)
    return (single,) if isinstance(single, str) else ()

# ----- running workflows (RunBridge: engine hook events -> Qt signals) ------------------------
