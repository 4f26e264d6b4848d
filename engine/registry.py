"""The node-type registry: one per engine; a duplicate type id is an error."""

from __future__ import annotations

from typing import Iterable

from .errors import RegistryError
from .node_type import NodeType, UnsupportedNodeType


class Registry:
    """Maps n8n type ids to node-type instances."""

    def __init__(self, types: Iterable[type[NodeType]] = ()) -> None:
        self._types: dict[str, NodeType] = {}
        for node_type in types:
            self.register(node_type)

    def register(self, node_type: type[NodeType]) -> None:
        type_id = node_type.type
        if type_id in self._types:
            raise RegistryError(f'node type "{type_id}" is registered twice')
        self._types[type_id] = node_type()

    def get(self, type_id: str) -> NodeType:
        """The node type for an id; an UnsupportedNodeType placeholder when unknown."""
        found = self._types.get(type_id)
        return found if found is not None else UnsupportedNodeType(type_id)

    def knows(self, type_id: str) -> bool:
        return type_id in self._types

    def types(self) -> list[NodeType]:
        return list(self._types.values())


def builtin_registry() -> Registry:
    """A registry with every node type mini-n8n ships (the composition root of the core)."""
    import nodes  # the node package depends on engine, never the other way at import time

    return Registry(nodes.BUILTIN_NODE_TYPES)
