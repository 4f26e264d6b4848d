"""Connection rules, decided by the engine from the ports each node type declares.

The GUI asks the same functions whether a connection may be made, so the canvas and the
executor never disagree.
"""

from __future__ import annotations

from .connection_types import AI_LANGUAGE_MODEL, AI_MEMORY, AI_OUTPUT_PARSER, AI_TOOL, MAIN
from .registry import Registry
from .workflow import Workflow, main_path

PORT_NAMES = {
    MAIN: "main",
    AI_LANGUAGE_MODEL: "Chat Model",
    AI_MEMORY: "Memory",
    AI_TOOL: "Tool",
    AI_OUTPUT_PARSER: "Output Parser",
}


def port_name(conn_type: str) -> str:
    return PORT_NAMES.get(conn_type, conn_type)


def incoming(workflow: Workflow, target: str, conn_type: str) -> list[str]:
    """Names of the nodes connected into `target` with `conn_type`, in file order."""
    return [src for src, ctype, _i, t in workflow.links() if ctype == conn_type and t.node == target]


def node_problems(workflow: Workflow, registry: Registry, name: str) -> list[str]:
    """Broken rules of one node's inputs, each naming the node."""
    node = workflow.node(name)
    node_type = registry.get(node.type)
    if not node_type.supported:
        return []
    problems = []
    counts: dict[str, int] = {}
    for src, ctype, _i, target in workflow.links():
        if target.node == name and ctype != MAIN and not workflow.node(src).is_disabled:
            counts[ctype] = counts.get(ctype, 0) + 1
    for spec in node_type.inputs:
        if spec.type == MAIN:
            continue
        n = counts.get(spec.type, 0)
        if spec.required and n == 0:
            problems.append(f'Node "{name}" needs a {port_name(spec.type)} connected')
        if spec.max_connections is not None and n > spec.max_connections:
            problems.append(
                f'Node "{name}" takes at most {spec.max_connections} {port_name(spec.type)} '
                f"connection{'s' if spec.max_connections != 1 else ''}, but {n} are connected"
            )
    accepted = {spec.type for spec in node_type.inputs}
    for ctype in counts:
        if ctype not in accepted:
            problems.append(f'Node "{name}" has no {port_name(ctype)} input, but a node is connected to it')
    return problems


def workflow_problems(workflow: Workflow, registry: Registry) -> list[str]:
    """Every broken connection rule of the workflow."""
    out: list[str] = []
    for node in workflow.nodes:
        out.extend(node_problems(workflow, registry, node.name))
    return out


def connection_refusal(
    workflow: Workflow, registry: Registry, source: str, conn_type: str, target: str
) -> str | None:
    """Why `source` may not be connected into `target` with `conn_type`; None when it may."""
    if source == target:
        return "A node cannot be connected to itself"
    src_type = registry.get(workflow.node(source).type)
    dst_type = registry.get(workflow.node(target).type)
    if conn_type not in src_type.output_types():
        return f'"{source}" has no {port_name(conn_type)} output'
    spec = dst_type.input_spec(conn_type)
    if spec is None:
        return f'"{target}" has no {port_name(conn_type)} input'
    existing = incoming(workflow, target, conn_type)
    if source in existing:
        return f'"{source}" is already connected to "{target}"'
    if spec.max_connections is not None and len(existing) >= spec.max_connections:
        return f'"{target}" takes only {spec.max_connections} {port_name(conn_type)}; "{existing[0]}" is connected already'
    if conn_type == MAIN and main_path(workflow, target, source):
        return f'"{target}" already leads to "{source}": this connection would make a loop that runs forever'
    return None
