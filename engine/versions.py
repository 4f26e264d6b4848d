"""Node versions: which `typeVersion`s a node type knows, and the note a run log gets when a
node's version is one it does not (a file from a newer n8n loads and keeps its parameters)."""

from __future__ import annotations

from .node_type import NodeType
from .workflow import Node


def known_versions(node_type: NodeType) -> tuple[float, ...]:
    """The typeVersions a node type maps; a type that declares none knows only its `version`."""
    return tuple(float(v) for v in (node_type.versions or (node_type.version,)))


def version_note(node: Node, node_type: NodeType) -> str | None:
    """None when the node's typeVersion is one its type knows; else what we run it as, and why."""
    if not node_type.supported:
        return None
    versions = known_versions(node_type)
    wanted = float(node.typeVersion)
    if wanted in versions:
        return None
    newest = max(versions)
    if wanted > newest:
        return (f'Node "{node.name}" has typeVersion {node.typeVersion}, newer than mini-n8n knows for '
                f'{node_type.display_name} (up to {_text(newest)}): it runs as version {_text(newest)}; '
                "parameters that version does not have are kept but not used")
    lower = [v for v in versions if v < wanted]
    runs_as = max(lower) if lower else min(versions)
    return (f'Node "{node.name}" has typeVersion {node.typeVersion}, which {node_type.display_name} does not have '
            f"(known: {', '.join(_text(v) for v in versions)}): it runs as version {_text(runs_as)}")


def _text(version: float) -> str:
    return str(int(version)) if float(version).is_integer() else str(version)
