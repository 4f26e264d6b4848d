"""The workflow document: n8n's export format as pydantic models, loaded and saved as JSON.

Unknown keys (top level and per node) are kept so that a load/save round trip loses nothing.
A file is refused with a clear error, never a crash, when it nests deeper than MAX_NESTING, a
key or node name holds a lone surrogate, or its main connections form a loop that does not pass
through a Loop Over Items node (the one node that leaves a loop: no other could, it would run
forever). Lone surrogates in values are kept, written escaped.
"""

import json
import os
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from . import json_text
from .defaults import new_list
from .errors import WorkflowFileError

MAX_NESTING = 100  # levels of JSON objects/arrays a workflow file may nest (n8n's own stay under 20)


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
        odd = json_text.first_surrogate(value)
        if odd is not None:  # names key connections and stored runs: they must be real text
            raise ValueError(f"a node name cannot hold a lone UTF-16 surrogate (U+{ord(odd):04X})")
        return value

    @property
    def is_disabled(self) -> bool:
        return bool(self.disabled)


class Workflow(BaseModel):
    """A workflow document: nodes, connections keyed by source node name, settings, pin data."""

    model_config = ConfigDict(extra="allow")

    name: str = "My workflow"
    nodes: list[Node] = Field(default_factory=new_list)
    connections: Connections = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    pinData: dict[str, Any] = Field(default_factory=dict)
    meta: dict[str, Any] | None = None
    _load_warnings: list[str] = PrivateAttr(default_factory=new_list)

    @property
    def load_warnings(self) -> list[str]:
        """What loading the file changed to read it (links to missing nodes dropped): to be said."""
        return self._load_warnings

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


def _shape_problem(data: Any) -> str | None:
    """What makes decoded JSON unreadable as a document before any field is looked at: nesting
    deeper than MAX_NESTING, or an object key with a lone surrogate (keys are not stored escaped).

    Walked without recursion, so any depth is measured safely."""
    pending: list[tuple[Any, int, tuple[Any, ...]]] = [(data, 1, ())]
    while pending:
        value, depth, path = pending.pop()
        if isinstance(value, dict):
            children: Any = value.items()
            for key in value:
                odd = json_text.first_surrogate(key) if isinstance(key, str) else None
                if odd is not None:
                    return (f"{_path_text(path + (json_text.escape_surrogates(key),))}: a key cannot hold a lone UTF-16 "
                            f"surrogate (U+{ord(odd):04X})")
        elif isinstance(value, list):
            children = enumerate(value)
        else:
            continue
        if depth > MAX_NESTING:
            return f"the JSON nests more than {MAX_NESTING} levels deep (at {_path_text(path)}); a workflow file nests far less"
        pending.extend((child, depth + 1, path + (key,)) for key, child in children
                       if isinstance(child, (dict, list)))
    return None


def _path_text(path: tuple[Any, ...]) -> str:
    return " > ".join(str(p) for p in path[:6]) + (" > …" if len(path) > 6 else "") or "the top level"


# n8n's Loop Over Items (Split in Batches): a main loop through it ends when its items run out
LOOP_NODE_TYPES = frozenset({"n8n-nodes-base.splitInBatches"})


def _following(wf: Workflow) -> dict[str, list[str]]:
    """Main links by source node, leaving out those from Loop Over Items nodes (loops through them
    are allowed: they end)."""
    loop_nodes = {n.name for n in wf.nodes if n.type in LOOP_NODE_TYPES}
    following: dict[str, list[str]] = {}
    for source, conn_type, _index, target in wf.links():
        if conn_type == "main" and source not in loop_nodes:
            following.setdefault(source, []).append(target.node)
    return following


def main_loop(wf: Workflow) -> list[str] | None:
    """A loop of main connections that no Loop Over Items node ends, as node names, first node
    repeated at the end (`["A", "B", "A"]`); None when there is none."""
    following = _following(wf)
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    for root in following:
        if root in state:
            continue
        path = [root]
        branches = [iter(following.get(root, ()))]
        state[root] = 1
        while branches:
            nxt = next(branches[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                branches.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                branches.append(iter(following.get(nxt, ())))
    return None


def main_path(wf: Workflow, start: str, goal: str) -> bool:
    """Whether main connections lead from `start` to `goal` other than through a Loop Over Items
    node (a link goal -> start would then close a loop nothing ends)."""
    if any(n.name == goal and n.type in LOOP_NODE_TYPES for n in wf.nodes):
        return False  # the link would leave a Loop Over Items node: its loop ends
    following = _following(wf)
    seen, pending = {start}, [start]
    while pending:
        name = pending.pop()
        if name == goal:
            return True
        for nxt in following.get(name, ()):
            if nxt not in seen:
                seen.add(nxt)
                pending.append(nxt)
    return False


def parse_workflow(data: Any, source: str = "<workflow>") -> Workflow:
    """Validate decoded JSON as a workflow; collect every problem with where it is."""
    if not isinstance(data, dict):
        raise WorkflowFileError(source, [f"the file holds a JSON {type(data).__name__}, not a workflow object"])
    shape = _shape_problem(data)
    if shape is not None:
        raise WorkflowFileError(source, [shape])
    if "nodes" not in data:  # every n8n workflow file has its node list, even an empty one
        keys = ", ".join(json.dumps(k, ensure_ascii=False)[:40] for k in list(data)[:5]) + (", …" if len(data) > 5 else "")
        raise WorkflowFileError(source, ['not an n8n workflow: the JSON object has no "nodes" list '
                                         + (f"(its keys: {keys})" if data else "(it is empty)")])
    try:
        wf = Workflow.model_validate(data)
    except ValidationError as exc:
        problems = [json_text.escape_surrogates(f"{_location(data, tuple(e['loc']))}: {e['msg']}") for e in exc.errors()]
        raise WorkflowFileError(source, problems) from None
    problems: list[str] = []
    seen: set[str] = set()
    for node in wf.nodes:
        if node.name in seen:
            problems.append(f'node "{node.name}": the name is used by more than one node')
        seen.add(node.name)
    wf._load_warnings = _drop_dangling_links(wf, seen)
    if not problems:
        loop = main_loop(wf)
        if loop is not None:
            names = " → ".join(f'"{name}"' for name in loop)
            problems.append(f"connections: the main connections loop {names}; only a loop through a Loop Over "
                            "Items node can end, so it would run forever")
    if problems:
        problems = [json_text.escape_surrogates(p) for p in problems]
        raise WorkflowFileError(source, sorted(set(problems), key=problems.index))
    return wf


def _drop_dangling_links(wf: Workflow, names: set[str]) -> list[str]:
    """Remove the links from or to a node that does not exist, and say which: one stale link must
    not make the rest of the file unreadable. An entry with no links (n8n leaves some) is kept."""
    dropped: list[str] = []
    for src, by_type in wf.connections.items():
        for conn_type, outputs in by_type.items():
            for targets in outputs:
                kept = [t for t in targets if src in names and t.node in names]
                for target in targets:
                    if src not in names:
                        dropped.append(f'connections > {src} > {conn_type}: source node "{src}" does not exist; its link to '
                                       f'"{target.node}" was dropped')
                    elif target.node not in names:
                        dropped.append(f'connections > {src} > {conn_type}: target node "{target.node}" does not exist; '
                                       "the link was dropped")
                targets[:] = kept
    return [json_text.escape_surrogates(d) for d in dropped]


def load_workflow_text(text: str, source: str = "<workflow>") -> Workflow:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WorkflowFileError(source, [f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"]) from None
    except RecursionError:  # nested deeper than the parser's own limit
        raise WorkflowFileError(source, [f"the JSON nests more than {MAX_NESTING} levels deep (at the top level); "
                                         "a workflow file nests far less"]) from None
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


def workflow_json(wf: Workflow) -> bytes:
    """workflow_to_data(wf) as compact UTF-8 JSON, written by pydantic in one step (no dict in
    between: half the time). Raises ValueError for what UTF-8 cannot hold (a lone surrogate)."""
    return Workflow.__pydantic_serializer__.to_json(wf, exclude_unset=True, by_alias=True)


def dump_workflow(wf: Workflow) -> str:
    """The file text: indented, non-ASCII as itself, lone surrogates escaped (see engine.json_text)."""
    return json_text.dumps(workflow_to_data(wf), indent=2) + "\n"


def save_workflow(wf: Workflow, path: str | os.PathLike[str]) -> None:
    """Write atomically: a temporary file in the same folder, then a rename over the target."""
    import tempfile  # with shutil, bz2 and lzma: imported when a workflow is saved, not at every start

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
