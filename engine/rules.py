"""Connection rules, decided by the engine from the ports each node type declares.

The GUI asks the same functions whether a connection may be made, so the canvas and the
executor never disagree.
"""

from __future__ import annotations

from .connection_types import AI_LANGUAGE_MODEL, AI_MEMORY, AI_OUTPUT_PARSER, AI_TOOL, MAIN, PortSpec
from .node_type import NodeType
from .registry import Registry
from .workflow import Node, Workflow, main_path

PORT_NAMES = {
    MAIN: "main",
    AI_LANGUAGE_MODEL: "Chat Model",
    AI_MEMORY: "Memory",
    AI_TOOL: "Tool",
    AI_OUTPUT_PARSER: "Output Parser",
}


def port_name(conn_type: str) -> str:
    return PORT_NAMES.get(conn_type, conn_type)


def incoming(workflow: Workflow, target: str, conn_type: str, index: int | None = None) -> list[str]:
    """Names of the nodes connected into `target` with `conn_type` (into input `index` only, when
    given), in file order."""
    return [src for src, ctype, _i, t in workflow.links()
            if ctype == conn_type and t.node == target and (index is None or t.index == index)]


def node_problems(workflow: Workflow, registry: Registry, name: str) -> list[str]:
    """Broken rules of one node's inputs, each naming the node."""
    return problems_by_node(workflow, registry, [name])[name]


def problems_by_node(workflow: Workflow, registry: Registry, names: list[str] | None = None) -> dict[str, list[str]]:
    """`node_problems` of each node named (None: every node), in one pass over the links: a
    canvas of 1,000 nodes checks them all after every edit that can break a rule."""
    nodes: dict[str, Node] = {}
    for node in workflow.nodes:
        nodes.setdefault(node.name, node)  # the first of a repeated name, as Workflow.node finds it
    wanted = list(nodes) if names is None else names
    into: dict[str, list[tuple[str, int]]] = {name: [] for name in wanted}
    for src, ctype, _i, target in workflow.links():
        found = into.get(target.node)
        if found is not None and ctype != MAIN and not nodes[src].is_disabled:
            found.append((ctype, target.index))
    out: dict[str, list[str]] = {}
    for name in wanted:
        if name not in nodes:
            raise KeyError(name)
        out[name] = _input_problems(name, registry.get(nodes[name].type), into[name])
    return out


def _input_problems(name: str, node_type: NodeType, incoming: list[tuple[str, int]]) -> list[str]:
    """Broken rules of a node's inputs given its links in (connection type, input index; no main)."""
    if not node_type.supported:
        return []
    problems = []
    counts: dict[tuple[str, int], int] = {}
    for ctype, index in incoming:
        key = (ctype, index if _input_spec(node_type.inputs, ctype, index) else 0)
        counts[key] = counts.get(key, 0) + 1
    seen: dict[str, int] = {}
    for spec in node_type.inputs:
        if spec.type == MAIN:
            continue
        index = seen[spec.type] = seen.get(spec.type, -1) + 1
        n = counts.get((spec.type, index), 0)
        label = spec.label if index else port_name(spec.type)
        if spec.required and n == 0:
            problems.append(f'Node "{name}" needs a {label} connected')
        if spec.max_connections is not None and n > spec.max_connections:
            problems.append(
                f'Node "{name}" takes at most {spec.max_connections} {label} '
                f"connection{'s' if spec.max_connections != 1 else ''}, but {n} are connected"
            )
    accepted = {spec.type for spec in node_type.inputs}
    for ctype, _index in counts:
        if ctype not in accepted:
            problems.append(f'Node "{name}" has no {port_name(ctype)} input, but a node is connected to it')
    return problems


def _input_spec(inputs: tuple[PortSpec, ...], conn_type: str, index: int) -> PortSpec | None:
    """The port of `conn_type` at input `index` (the index-th port of that type), if declared."""
    ports = [spec for spec in inputs if spec.type == conn_type]
    return ports[index] if 0 <= index < len(ports) else None


def workflow_problems(workflow: Workflow, registry: Registry) -> list[str]:
    """Every broken connection rule of the workflow."""
    return [problem for problems in problems_by_node(workflow, registry).values() for problem in problems]


def connection_refusal(
    workflow: Workflow, registry: Registry, source: str, conn_type: str, target: str, index: int = 0
) -> str | None:
    """Why `source` may not be connected into input `index` of `target` with `conn_type`; None when it may."""
    if source == target:
        return "A node cannot be connected to itself"
    src_type = registry.get(workflow.node(source).type)
    dst_type = registry.get(workflow.node(target).type)
    if conn_type not in src_type.output_types():
        return f'"{source}" has no {port_name(conn_type)} output'
    spec = _input_spec(dst_type.inputs, conn_type, index) or dst_type.input_spec(conn_type)
    if spec is None:
        return f'"{target}" has no {port_name(conn_type)} input'
    existing = incoming(workflow, target, conn_type, index if _input_spec(dst_type.inputs, conn_type, 1) else None)
    if source in existing:
        return f'"{source}" is already connected to "{target}"'
    if spec.max_connections is not None and len(existing) >= spec.max_connections:
        return f'"{target}" takes only {spec.max_connections} {port_name(conn_type)}; "{existing[0]}" is connected already'
    if conn_type == MAIN and main_path(workflow, target, source):
        return f'"{target}" already leads to "{source}": this connection would make a loop that runs forever'
    return None
