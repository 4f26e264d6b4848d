"""n8n's pinned data: `pinData` in the workflow file maps a node name to the items it outputs
instead of running (any node type, also ones mini-n8n does not support). Saved with the file."""

from __future__ import annotations

import copy
from typing import Any

from .errors import MiniN8nError, NodeOperationError
from .run_data import Item
from .workflow import Workflow


def as_items(data: Any, node: str) -> list[Item]:
    """Pinned data as items: n8n writes `[{"json": {...}}, ...]`; a list of plain objects is taken as
    their `json`, as n8n does. Anything else is an error naming the node and the item."""
    if not isinstance(data, list):
        raise NodeOperationError(f'The pinned data of node "{node}" is not a list of items', node=node)
    items: list[Item] = []
    for index, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise NodeOperationError(
                f'The pinned data of node "{node}" has an item {index} that is {_kind(entry)}, not an object', node=node)
        if "json" not in entry:
            items.append({"json": copy.deepcopy(entry)})
            continue
        if not isinstance(entry["json"], dict):
            raise NodeOperationError(
                f'The pinned data of node "{node}" has an item {index} whose json is {_kind(entry["json"])}, not an object',
                node=node, description='Each pinned item is {"json": {...}}: unpin the data or fix that item')
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
    return as_items(data, node)


def pin(workflow: Workflow, node: str, items: list[Item]) -> None:
    """Pin items on a node, as n8n stores them: `{"json": ...}` per item."""
    if not workflow.has_node(node):
        raise MiniN8nError(f'cannot pin data on "{node}": no such node')
    workflow.pinData = {**workflow.pinData, node: [{"json": copy.deepcopy(i.get("json", {}))} for i in items]}


def unpin(workflow: Workflow, node: str) -> None:
    workflow.pinData = {k: v for k, v in workflow.pinData.items() if k != node}
