"""The node-type registry: one per engine; a duplicate type id is an error.

A type can be registered by where its class lives ("module:Class"); its module is imported the
first time the type is asked for, so start-up costs only the node types a workflow uses.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping

from .errors import RegistryError
from .node_type import NodeType, UnsupportedNodeType

ClassLoader = Callable[[str], type[NodeType]]


class Registry:
    """Maps n8n type ids to node-type instances."""

    def __init__(self, types: Iterable[type[NodeType]] = (), lazy: Mapping[str, str] | None = None,
                 loader: ClassLoader | None = None) -> None:
        # type id -> instance, or the "module:Class" it is made from on first use (in registration order)
        self._types: dict[str, NodeType | str] = {}
        self._loader = loader
        for node_type in types:
            self.register(node_type)
        for type_id, where in (lazy or {}).items():
            self.register_lazy(type_id, where)

    def register(self, node_type: type[NodeType]) -> None:
        self._claim(node_type.type)
        self._types[node_type.type] = node_type()

    def register_lazy(self, type_id: str, where: str) -> None:
        """Register the class at `where` ("module:Class") under `type_id`, imported when first used."""
        if self._loader is None:
            raise RegistryError(f'node type "{type_id}": this registry has no class loader for "{where}"')
        self._claim(type_id)
        self._types[type_id] = where

    def _claim(self, type_id: str) -> None:
        if type_id in self._types:
            raise RegistryError(f'node type "{type_id}" is registered twice')

    def _instance(self, type_id: str) -> NodeType | None:
        found = self._types.get(type_id)
        if not isinstance(found, str):
            return found
        assert self._loader is not None
        node_type = self._loader(found)
        if node_type.type != type_id:
            raise RegistryError(f'"{found}" has type id "{node_type.type}", registered as "{type_id}"')
        instance = self._types[type_id] = node_type()
        return instance

    def get(self, type_id: str) -> NodeType:
        """The node type for an id; an UnsupportedNodeType placeholder when unknown."""
        found = self._instance(type_id)
        return found if found is not None else UnsupportedNodeType(type_id)

    def knows(self, type_id: str) -> bool:
        return type_id in self._types

    def types(self) -> list[NodeType]:
        """Every registered type (importing those not used yet)."""
        return [self._instance(type_id) for type_id in list(self._types)]  # type: ignore[misc]


def builtin_registry() -> Registry:
    """A registry with every node type mini-n8n ships (the composition root of the core)."""
    import nodes  # the node package depends on engine, never the other way at import time

    return Registry(lazy=nodes.BUILTIN_NODE_CLASSES, loader=nodes.load_class)
