"""The workflow document: n8n's export format as pydantic models, loaded and saved as JSON.

Unknown keys (top level and per node) are kept so that a load/save round trip loses nothing.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import WorkflowFileError


class ConnectionTarget(BaseModel):
    """One end of a connection: the target node, the connection type and the input index."""

    model_config = ConfigDict(extra="allow")

    node: str
    type: str = "main"
    index: int = 0


# connections[source node name][connection type][output index] -> targets
Connections = dict[str, dict[str, list[list[ConnectionTarget]]]]


class Node(BaseModel):
    """One node of a workflow as n8n stores it."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    name: str
    type: str
    typeVersion: int | float = 1
    position: tuple[int | float, int | float] = (0, 0)
    parameters: dict[str, Any] = Field(default_factory=dict)
    credentials: dict[str, Any] | None = None
    disabled: bool | None = None

    @field_validator("name")
    @classmethod
    def _name_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a node name cannot be empty")
        return value

    @property
    def is_disabled(self) -> bool:
        return bool(self.disabled)


class Workflow(BaseModel):
    """A workflow document: nodes, connections keyed by source node name, settings, pin data."""

    model_config = ConfigDict(extra="allow")

    name: str = "My workflow"
    nodes: list[Node] = Field(default_factory=list)
    connections: Connections = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    pinData: dict[str, Any] = Field(default_factory=dict)
    meta: dict[str, Any] | None = None

    @field_validator("connections", mode="before")
    @classmethod
    def _null_outputs_are_empty(cls, value: Any) -> Any:
        """n8n writes `null` for an output with no links; read it as an empty list."""
        if isinstance(value, dict):
            for by_type in value.values():
                if isinstance(by_type, dict):
                    for conn_type, outputs in by_type.items():
                        if isinstance(outputs, list):
                            by_type[conn_type] = [o if o is not None else [] for o in outputs]
        return value

    # ----- queries -------------------------------------------------------------------------
    def node(self, name: str) -> Node:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

    def has_node(self, name: str) -> bool:
        return any(n.name == name for n in self.nodes)

    def links(self) -> list[tuple[str, str, int, ConnectionTarget]]:
        """Every connection as (source, connection type, output index, target)."""
        out = []
        for source, by_type in self.connections.items():
            for conn_type, outputs in by_type.items():
                for index, targets in enumerate(outputs):
                    for target in targets:
                        out.append((source, conn_type, index, target))
        return out

    def to_json(self) -> str:
        return dump_workflow(self)


def _location(wf_data: Any, loc: tuple[Any, ...]) -> str:
    """Describe a pydantic error location in the user's terms (node name, field)."""
    parts = list(loc)
    if len(parts) >= 2 and parts[0] == "nodes" and isinstance(parts[1], int):
        index = parts[1]
        name = None
        try:
            name = wf_data["nodes"][index].get("name")
        except (KeyError, IndexError, TypeError, AttributeError):
            pass
        where = f'node "{name}"' if isinstance(name, str) and name else f"node #{index + 1}"
        rest = ".".join(str(p) for p in parts[2:])
        return f"{where}, field {rest}" if rest else where
    if parts and parts[0] == "connections":
        rest = " > ".join(str(p) for p in parts[1:])
        return f"connections > {rest}" if rest else "connections"
    return ".".join(str(p) for p in parts) or "workflow"


def parse_workflow(data: Any, source: str = "<workflow>") -> Workflow:
    """Validate decoded JSON as a workflow; collect every problem with where it is."""
    if not isinstance(data, dict):
        raise WorkflowFileError(source, [f"the file holds a JSON {type(data).__name__}, not a workflow object"])
    try:
        wf = Workflow.model_validate(data)
    except ValidationError as exc:
        problems = [f"{_location(data, tuple(e['loc']))}: {e['msg']}" for e in exc.errors()]
        raise WorkflowFileError(source, problems) from None
    problems: list[str] = []
    seen: set[str] = set()
    for node in wf.nodes:
        if node.name in seen:
            problems.append(f'node "{node.name}": the name is used by more than one node')
        seen.add(node.name)
    for src, conn_type, _index, target in wf.links():
        if src not in seen:
            problems.append(f'connections: source node "{src}" does not exist')
        if target.node not in seen:
            problems.append(f'connections > {src} > {conn_type}: target node "{target.node}" does not exist')
    if problems:
        raise WorkflowFileError(source, sorted(set(problems), key=problems.index))
    return wf


def load_workflow_text(text: str, source: str = "<workflow>") -> Workflow:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WorkflowFileError(source, [f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"]) from None
    return parse_workflow(data, source)


def load_workflow(path: str | os.PathLike[str]) -> Workflow:
    """Read a workflow file; a file that cannot be read is a WorkflowFileError naming it."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise WorkflowFileError(str(p), [exc.strerror or str(exc)]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise WorkflowFileError(str(p), [f"not UTF-8 text (byte {exc.start})"]) from None
    return load_workflow_text(text, str(p))


def workflow_to_data(wf: Workflow) -> dict[str, Any]:
    """The JSON-ready dict of a workflow, leaving out only what the file never had."""
    return wf.model_dump(mode="json", exclude_unset=True, by_alias=True)


def dump_workflow(wf: Workflow) -> str:
    return json.dumps(workflow_to_data(wf), indent=2, ensure_ascii=False) + "\n"


def save_workflow(wf: Workflow, path: str | os.PathLike[str]) -> None:
    """Write atomically: a temporary file in the same folder, then a rename over the target."""
    p = Path(path)
    text = dump_workflow(wf)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=str(p.parent or "."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
