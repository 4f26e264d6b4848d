"""n8n's pinned data: `pinData` in the workflow file maps a node name to the items it outputs
instead of running (any node type, also ones mini-n8n does not support). Saved with the file."""

from __future__ import annotations

import copy
from typing import Any

from .errors import MiniN8nError, NodeOperationError
from .run_data import Item
from .workflow import Workflow


def as_items(data: Any, subject: str, node: str | None = None) -> list[Item]:
    """Items from n8n's item list `[{"json": {...}}, ...]`; a plain object in the list is taken as its
    `json`, as n8n does. Anything else is an error that starts with `subject` (and names the node)."""

    def refused(text: str, description: str | None = None) -> MiniN8nError:
        if node is None:
            return MiniN8nError(text)
        return NodeOperationError(text, node=node, description=description)

    if not isinstance(data, list):
        raise refused(f"{subject} is not a list of items")
    items: list[Item] = []
    for index, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise refused(f"{subject} has an item {index} that is {_kind(entry)}, not an object")
        if "json" not in entry:
            items.append({"json": copy.deepcopy(entry)})
            continue
        if not isinstance(entry["json"], dict):
            raise refused(f"{subject} has an item {index} whose json is {_kind(entry['json'])}, not an object",
                          'Each item is {"json": {...}}: unpin the data or fix that item')
        item: Item = {"json": copy.deepcopy(entry["json"])}
        if "binary" in entry:
            item["binary"] = copy.deepcopy(entry["binary"])
        items.append(item)
    return items


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def pinned_items(workflow: Workflow, node: str) -> list[Item] | None:
    """The items pinned on a node (copies: a run never changes the file's data); None if unpinned."""
    data = workflow.pinData.get(node) if workflow.pinData else None
    if data is None:
        return None
    return as_items(data, f'The pinned data of node "{node}"', node)


def pin(workflow: Workflow, node: str, items: list[Item]) -> None:
    """Pin items on a node, as n8n stores them: `{"json": ...}` per item."""
    if not workflow.has_node(node):
        raise MiniN8nError(f'cannot pin data on "{node}": no such node')
    workflow.pinData = {**workflow.pinData, node: [{"json": copy.deepcopy(i.get("json", {}))} for i in items]}


def unpin(workflow: Workflow, node: str) -> None:
    workflow.pinData = {k: v for k, v in workflow.pinData.items() if k != node}
