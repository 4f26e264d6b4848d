"""The document API for editors: every change a user makes to a workflow, headless and exact.

Each operation edits a `Workflow` in place; where the old value cannot be read back from the
document (unset fields, rewritten expressions) it returns it, so an undo stack above it can
restore the document exactly.
"""

from __future__ import annotations

import copy
import re
import uuid
from typing import Any, NamedTuple

from .errors import MiniN8nError
from .registry import Registry
from .rules import connection_refusal
from .workflow import ConnectionTarget, Connections, Node, Workflow

_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)$")

# A parameter path: keys of dicts and indexes of lists, from the node's `parameters`.
ParamPath = tuple[str | int, ...]


class EditError(MiniN8nError):
    """An edit that cannot be made; the message says why, in the user's terms."""


class Link(NamedTuple):
    """One connection: source node, connection type, output index, target node, input index."""

    source: str
    type: str
    output: int
    target: str
    input: int = 0

    @classmethod
    def of(cls, source: str, conn_type: str, output: int, target: ConnectionTarget) -> "Link":
        return cls(source, conn_type, output, target.node, target.index)


def copy_connections(connections: Connections) -> Connections:
    """A copy of the connection map whose targets can be edited without touching the original."""
    return {
        src: {ctype: [[t.model_copy() for t in out] for out in outputs] for ctype, outputs in by_type.items()}
        for src, by_type in connections.items()
    }


def unique_name(wanted: str, taken: set[str]) -> str:
    """`wanted`, or n8n's way of making it unique: a number at the end (`Calculator1`, ...)."""
    wanted = wanted.strip() or "Node"
    if wanted not in taken:
        return wanted
    match = _TRAILING_NUMBER.match(wanted)
    base = match.group(1) if match else wanted
    number = 1
    while f"{base}{number}" in taken:
        number += 1
    return f"{base}{number}"


def new_workflow(name: str = "My workflow") -> Workflow:
    """An empty workflow whose every part is written when saved (as n8n writes a new one)."""
    return Workflow(name=name, nodes=[], connections={}, settings={"executionOrder": "v1"}, pinData={})


def links_of(workflow: Workflow) -> list[Link]:
    return [Link.of(src, ctype, i, t) for src, ctype, i, t in workflow.links()]


class DocumentEditor:
    """Edits one workflow in place; the registry supplies node types and connection rules."""

    def __init__(self, workflow: Workflow, registry: Registry) -> None:
        self.workflow = workflow
        self.registry = registry

    # ----- the workflow ----------------------------------------------------------------------
    def set_name(self, name: str) -> str:
        """Rename the workflow itself; returns the old name."""
        name = name.strip()
        if not name:
            raise EditError("A workflow name cannot be empty")
        old = self.workflow.name
        self.workflow.name = name
        return old

    # ----- nodes ---------------------------------------------------------------------------
    def names(self) -> set[str]:
        return {n.name for n in self.workflow.nodes}

    def new_node(self, type_id: str, position: tuple[float, float], name: str | None = None) -> Node:
        """A node of a registered type with its default name made unique; not yet added."""
        node_type = self.registry.get(type_id)
        if not node_type.supported:
            raise EditError(f'Node type "{type_id}" is not known, so it cannot be added')
        wanted = name or node_type.default_name or node_type.display_name
        return Node(
            id=str(uuid.uuid4()),
            name=unique_name(wanted, self.names()),
            type=type_id,
            typeVersion=node_type.version,
            position=(round(position[0]), round(position[1])),
            parameters={},
        )

    def add_node(self, node: Node, index: int | None = None) -> Node:
        """Insert a node; its name must be free (use `new_node` or `unique_name`)."""
        if self.workflow.has_node(node.name):
            raise EditError(f'A node named "{node.name}" exists already')
        self.workflow.model_fields_set.add("nodes")
        if index is None:
            self.workflow.nodes.append(node)
        else:
            self.workflow.nodes.insert(index, node)
        return node

    def remove_nodes(self, names: list[str]) -> None:
        """Take nodes out with every connection from or to them, and their pinned data."""
        gone = set(names)
        for name in gone:
            self.workflow.node(name)  # KeyError names an unknown node
        self.workflow.nodes = [n for n in self.workflow.nodes if n.name not in gone]
        kept: Connections = {}
        for src, by_type in self.workflow.connections.items():
            if src in gone:
                continue
            kept[src] = {
                ctype: [[t for t in out if t.node not in gone] for out in outputs]
                for ctype, outputs in by_type.items()
            }
        self.workflow.connections = kept
        if any(k in gone for k in self.workflow.pinData):
            self.workflow.pinData = {k: v for k, v in self.workflow.pinData.items() if k not in gone}

    def move(self, positions: dict[str, tuple[float, float]]) -> None:
        """Set node positions (the caller knows the old ones: they are in the document)."""
        for name, (x, y) in positions.items():
            self.workflow.node(name).position = (x, y)

    def rename(self, old: str, new: str) -> dict[str, dict[str, Any]]:
        """Rename a node; connections follow (source keys and targets), and so do expressions
        that name it (`$('Old')`, `$node["Old"]`). Returns the parameters it changed, by node."""
        new = new.strip()
        if new == old:
            return {}
        if not new:
            raise EditError("A node name cannot be empty")
        if self.workflow.has_node(new):
            raise EditError(f'A node named "{new}" exists already')
        node = self.workflow.node(old)
        node.name = new
        self.workflow.connections = {
            (new if src == old else src): by_type for src, by_type in self.workflow.connections.items()
        }
        for by_type in self.workflow.connections.values():
            for outputs in by_type.values():
                for out in outputs:
                    for target in out:
                        if target.node == old:
                            target.node = new
        if old in self.workflow.pinData:
            self.workflow.pinData = {(new if k == old else k): v for k, v in self.workflow.pinData.items()}
        changed: dict[str, dict[str, Any]] = {}
        for other in self.workflow.nodes:
            updated = _rename_references(other.parameters, old, new)
            if updated != other.parameters:
                changed[other.name] = other.parameters
                other.parameters = updated
        return changed

    def set_disabled(self, names: list[str], disabled: bool) -> dict[str, bool | None]:
        """Disable or enable nodes; returns the previous `disabled` values (None: not set)."""
        before: dict[str, bool | None] = {}
        for name in names:
            node = self.workflow.node(name)
            before[name] = node.disabled if "disabled" in node.model_fields_set else None
            node.disabled = disabled
        return before

    def restore_disabled(self, before: dict[str, bool | None]) -> None:
        for name, value in before.items():
            node = self.workflow.node(name)
            node.disabled = value
            if value is None:
                node.model_fields_set.discard("disabled")

    # ----- node settings (n8n's Settings tab: kept on the node beside its parameters) -------
    SETTINGS = ("onError", "continueOnFail", "retryOnFail", "maxTries", "waitBetweenTries", "alwaysOutputData",
                "executeOnce")

    def set_setting(self, name: str, key: str, value: Any) -> tuple[bool, Any]:
        """Set (or with None remove) one node setting; returns (whether it was set, its old value)."""
        if key not in self.SETTINGS:
            raise EditError(f'"{key}" is not a node setting')
        node = self.workflow.node(name)
        extra = node.__pydantic_extra__
        if extra is None:
            extra = node.__pydantic_extra__ = {}
        before = (key in extra, extra.get(key))
        if value is None:
            extra.pop(key, None)
        else:
            extra[key] = value
        return before

    def restore_setting(self, name: str, key: str, before: tuple[bool, Any]) -> None:
        was_set, value = before
        self.set_setting(name, key, value if was_set else None)

    # ----- parameters ----------------------------------------------------------------------
    def set_parameter(self, name: str, path: ParamPath, value: Any) -> dict[str, Any]:
        """Set one parameter by path (creating missing dicts); returns the parameters before."""
        if not path:
            raise EditError("A parameter path cannot be empty")
        node = self.workflow.node(name)
        before = copy.deepcopy(node.parameters)
        params = copy.deepcopy(node.parameters)
        container: Any = params
        for step, following in zip(path[:-1], path[1:]):
            container = _child(container, step, following, name, path)
        _assign(container, path[-1], value, name, path)
        node.parameters = params
        return before

    def unset_parameter(self, name: str, path: ParamPath) -> dict[str, Any]:
        """Remove one parameter (an n8n option taken away); returns the parameters before."""
        node = self.workflow.node(name)
        before = copy.deepcopy(node.parameters)
        params = copy.deepcopy(node.parameters)
        container: Any = params
        for step in path[:-1]:
            try:
                container = container[step]
            except (KeyError, IndexError, TypeError):
                return before
        last = path[-1]
        if isinstance(container, dict):
            container.pop(last, None)
        elif isinstance(container, list) and isinstance(last, int) and 0 <= last < len(container):
            container.pop(last)
        node.parameters = params
        return before

    def set_credential(self, name: str, cred_type: str, ref: dict[str, Any] | None) -> dict[str, Any] | None:
        """Point a node at a stored credential (n8n's `{id, name}`), or drop it; returns the old map."""
        node = self.workflow.node(name)
        before = copy.deepcopy(node.credentials) if "credentials" in node.model_fields_set else None
        creds = dict(node.credentials or {})
        if ref is None:
            creds.pop(cred_type, None)
        else:
            creds[cred_type] = dict(ref)
        node.credentials = creds or None
        return before

    def restore_credentials(self, name: str, before: dict[str, Any] | None) -> None:
        node = self.workflow.node(name)
        node.credentials = copy.deepcopy(before)
        if before is None:
            node.model_fields_set.discard("credentials")

    # ----- connections ---------------------------------------------------------------------
    def connect(self, source: str, conn_type: str, target: str, output: int = 0, input: int = 0) -> Link:
        """Add a connection if the rules allow it; otherwise EditError with the rule's reason."""
        reason = connection_refusal(self.workflow, self.registry, source, conn_type, target, input)
        if reason is not None:
            raise EditError(reason)
        self.workflow.model_fields_set.add("connections")
        by_type = self.workflow.connections.setdefault(source, {})
        outputs = by_type.setdefault(conn_type, [])
        while len(outputs) <= output:
            outputs.append([])
        outputs[output].append(ConnectionTarget(node=target, type=conn_type, index=input))
        return Link(source, conn_type, output, target, input)

    def disconnect(self, link: Link) -> None:
        """Remove one connection."""
        outputs = self.workflow.connections.get(link.source, {}).get(link.type, [])
        if link.output >= len(outputs):
            raise EditError(f'"{link.source}" is not connected to "{link.target}"')
        out = outputs[link.output]
        for i, target in enumerate(out):
            if target.node == link.target and target.index == link.input:
                del out[i]
                return
        raise EditError(f'"{link.source}" is not connected to "{link.target}"')

    # ----- copy and paste ------------------------------------------------------------------
    def fragment(self, names: list[str]) -> dict[str, Any]:
        """The chosen nodes and the connections among them, as n8n's clipboard JSON."""
        chosen = set(names)
        nodes = [n.model_dump(mode="json", exclude_unset=True) for n in self.workflow.nodes if n.name in chosen]
        connections: dict[str, Any] = {}
        for src, by_type in self.workflow.connections.items():
            if src not in chosen:
                continue
            kept = {
                ctype: [[t.model_dump(mode="json") for t in out if t.node in chosen] for out in outputs]
                for ctype, outputs in by_type.items()
            }
            if any(out for outputs in kept.values() for out in outputs):
                connections[src] = kept
        return {"nodes": nodes, "connections": connections}

    def paste(self, fragment: dict[str, Any], offset: tuple[float, float] = (40, 40)) -> list[str]:
        """Add the nodes of a fragment with fresh ids and unique names; returns the new names."""
        try:
            nodes = [Node.model_validate(n) for n in fragment.get("nodes", [])]
        except Exception as exc:  # pydantic ValidationError: reported with its own text
            raise EditError(f"The pasted nodes are not valid: {exc}") from None
        self.workflow.model_fields_set.update(("nodes", "connections"))
        taken = self.names()
        renamed: dict[str, str] = {}
        for node in nodes:
            new_name = unique_name(node.name, taken)
            taken.add(new_name)
            renamed[node.name] = new_name
        added = []
        for node in nodes:
            node.name = renamed[node.name]
            node.id = str(uuid.uuid4())
            node.position = (node.position[0] + offset[0], node.position[1] + offset[1])
            self.workflow.nodes.append(node)
            added.append(node.name)
        for src, by_type in (fragment.get("connections") or {}).items():
            if src not in renamed or not isinstance(by_type, dict):
                continue
            for ctype, outputs in by_type.items():
                for index, out in enumerate(outputs or []):
                    for target in out or []:
                        if isinstance(target, dict) and target.get("node") in renamed:
                            dest = self.workflow.connections.setdefault(renamed[src], {}).setdefault(ctype, [])
                            while len(dest) <= index:
                                dest.append([])
                            dest[index].append(
                                ConnectionTarget(node=renamed[target["node"]], type=target.get("type", ctype),
                                                 index=int(target.get("index", 0)))
                            )
        return added


def _rename_references(value: Any, old: str, new: str) -> Any:
    """A copy of parameters with expression references to node `old` pointing at `new`."""
    if isinstance(value, str):
        if "$" not in value or old not in value:
            return value
        for quote in ("'", '"'):
            value = value.replace(f"$({quote}{old}{quote})", f"$({quote}{new}{quote})")
            value = value.replace(f"$node[{quote}{old}{quote}]", f"$node[{quote}{new}{quote}]")
        return value
    if isinstance(value, dict):
        return {k: _rename_references(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename_references(v, old, new) for v in value]
    return value


def _child(container: Any, step: str | int, following: str | int, node: str, path: ParamPath) -> Any:
    """Walk one step of a parameter path, creating the dict or list the next step needs."""
    if isinstance(container, dict) and isinstance(step, str):
        value = container.get(step)
        if not isinstance(value, (dict, list)):
            value = [] if isinstance(following, int) else {}
            container[step] = value
        return value
    if isinstance(container, list) and isinstance(step, int) and 0 <= step < len(container):
        return container[step]
    raise EditError(f'Node "{node}": parameter path {"/".join(map(str, path))} does not exist')


def _assign(container: Any, key: str | int, value: Any, node: str, path: ParamPath) -> None:
    if isinstance(container, dict) and isinstance(key, str):
        container[key] = copy.deepcopy(value)
    elif isinstance(container, list) and isinstance(key, int) and 0 <= key <= len(container):
        if key == len(container):
            container.append(copy.deepcopy(value))
        else:
            container[key] = copy.deepcopy(value)
    else:
        raise EditError(f'Node "{node}": parameter path {"/".join(map(str, path))} does not exist')
