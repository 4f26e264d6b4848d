"""Where a run starts: the trigger it starts from, what that trigger outputs, and which nodes on
the way cannot run here. A trigger of a type mini-n8n does not run (Telegram, webhook, form...)
can still start a run: with its pinned data, or with an item given for it (`--trigger/--input`)."""

from __future__ import annotations

import json
from pathlib import Path

from .connection_types import AI_TOOL, MAIN
from .errors import MiniN8nError
from .pin_data import as_items
from .registry import Registry
from .run_data import Item
from .workflow import Node, Workflow

# n8n node types that start a workflow although their name does not end in "Trigger"
_TRIGGER_NAMES = {"webhook", "cron", "interval", "start", "n8nTrigger", "errorTrigger", "executeWorkflowTrigger"}


class StartError(MiniN8nError):
    """The run cannot start: the message names the trigger(s), their types and what to do."""


def is_trigger(node: Node, registry: Registry) -> bool:
    """A node that starts a workflow: a trigger type we run, or an n8n trigger type we do not."""
    node_type = registry.get(node.type)
    if node_type.supported:
        return node_type.is_trigger
    name = node.type.rsplit(".", 1)[-1]
    return name.endswith("Trigger") or name in _TRIGGER_NAMES


def is_pinned(workflow: Workflow, name: str) -> bool:
    return workflow.pinData.get(name) is not None


def _how_to_start(nodes: list[Node]) -> str:
    example = nodes[0].name
    return (f'Start the run from it with `mini-n8n run FILE --trigger "{example}" --input \'{{"field": "value"}}\'` '
            f"(or --input @item.json), or pin data on the trigger (pinData) so its pinned items start the run")


def _request_only(node: Node) -> str:
    return (f'trigger "{node.name}" ({node.type}) starts a run with the request it receives: serve the workflow with '
            f'`mini-n8n serve FILE`, or start it here with `mini-n8n run FILE --trigger "{node.name}" --input JSON` '
            "(its output item) or with data pinned on it (pinData)")


def choose_start(workflow: Workflow, registry: Registry, *, trigger: str | None = None,
                 prefer_chat: bool = False, injected: bool = False) -> Node:
    """The node a run starts from. `trigger` names it; `injected` says its output item is given."""
    if trigger is not None:
        if not workflow.has_node(trigger):
            names = ", ".join(f'"{n.name}"' for n in workflow.nodes if is_trigger(n, registry)) or "none"
            raise StartError(f'workflow "{workflow.name}" has no node "{trigger}" (its triggers: {names})')
        node = workflow.node(trigger)
        if node.is_disabled:
            raise StartError(f'trigger "{trigger}" is disabled')
        if not is_trigger(node, registry):
            raise StartError(f'"{trigger}" ({node.type}) is not a trigger node: a run starts from a trigger')
        if not injected and not is_pinned(workflow, node.name):
            if not registry.get(node.type).supported:
                raise StartError(f'trigger "{node.name}" has type "{node.type}", which mini-n8n does not run: '
                                 f"give its output item with --input JSON, or pin data on it (pinData)")
            if registry.get(node.type).starts_with_request:
                raise StartError(_request_only(node))
        return node
    enabled = [n for n in workflow.nodes if not n.is_disabled and is_trigger(n, registry)]
    runnable = [n for n in enabled if is_pinned(workflow, n.name)
                or (registry.get(n.type).supported and not registry.get(n.type).starts_with_request)]
    if prefer_chat:
        chat = [n for n in runnable if registry.get(n.type).is_chat_trigger]
        if chat:
            return chat[0]
    if runnable:
        others = [n for n in runnable if not registry.get(n.type).is_chat_trigger]
        return (others or runnable)[0]
    waiting = [n for n in enabled if registry.get(n.type).supported and registry.get(n.type).starts_with_request]
    if waiting:
        raise StartError(_request_only(waiting[0]))
    if enabled:
        listed = ", ".join(f'"{n.name}" ({n.type})' for n in enabled)
        plural = "s are types" if len(enabled) > 1 else " is a type"
        raise StartError(f'workflow "{workflow.name}" cannot start: its trigger{plural} mini-n8n does not run: {listed}. '
                         + _how_to_start(enabled))
    raise StartError(f'workflow "{workflow.name}" has no enabled trigger node to start from')


def unsupported_on_path(workflow: Workflow, registry: Registry, start: str, *, injected: bool = False) -> list[Node]:
    """Every node the run from `start` would have to run but cannot (unsupported types), in path
    order: main nodes reachable from the start and the sub-nodes they use. Pinned nodes do not
    run, and neither does the start trigger when its item is given; tools of types we do not run
    are offered to the model and answer with an error."""
    by_name = {n.name: n for n in workflow.nodes}
    subs: dict[str, list[tuple[str, str]]] = {}
    children: dict[str, list[str]] = {}
    for source, conn_type, _index, target in workflow.links():
        if conn_type == MAIN:
            children.setdefault(source, []).append(target.node)
        else:
            subs.setdefault(target.node, []).append((source, conn_type))
    found: list[Node] = []
    seen: set[str] = set()

    def check(name: str, main: bool, tool: bool = False) -> None:
        node = by_name[name]
        if node.is_disabled:
            return
        if (main or tool) and is_pinned(workflow, name):
            return
        # a tool of a type we do not run answers each call with an error (engine/unsupported_tools.py)
        if not (main and injected and name == start) and not tool and not registry.get(node.type).supported:
            found.append(node)
        for sub, conn_type in subs.get(name, ()):
            if sub not in seen:
                seen.add(sub)
                check(sub, False, conn_type == AI_TOOL)

    queue = [start]
    seen.add(start)
    while queue:
        name = queue.pop(0)
        check(name, True)
        for child in children.get(name, ()):
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return found


def unsupported_message(nodes: list[Node]) -> str:
    listed = "; ".join(f'"{n.name}" ({n.type})' for n in nodes)
    count = f"{len(nodes)} nodes" if len(nodes) > 1 else "1 node"
    return (f"{count} on the run's path {'have types' if len(nodes) > 1 else 'has a type'} mini-n8n does not support: "
            f"{listed}. Pin their data (pinData) to run the rest of the workflow")


def read_input(text: str) -> list[Item]:
    """`--input`: JSON text, or `@file.json`; an object is one item, a list several."""
    source = "--input"
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            text = path.read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise StartError(f"--input {path}: {exc.strerror or exc}") from None
        source = f"--input {path}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StartError(f"{source} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    try:
        return as_items([data] if isinstance(data, dict) else data, source)
    except MiniN8nError as exc:
        raise StartError(str(exc)) from None
