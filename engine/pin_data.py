"""n8n's pinned data: `pinData` in the workflow file maps a node name to the items it outputs
instead of running (any node type, also ones mini-n8n does not support). Saved with the file."""

from __future__ import annotations

import copy
from typing import Any

from .errors import MiniN8nError
from .run_data import Item
from .workflow import Workflow


def as_items(data: Any, where: str) -> list[Item]:
    """Pinned data as items: n8n writes `[{"json": {...}}, ...]`; older files a list of objects."""
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise MiniN8nError(f"pinned data of {where} is not a list of items")
    items: list[Item] = []
    for entry in data:
        if isinstance(entry, dict) and isinstance(entry.get("json"), dict):
            item: Item = {"json": copy.deepcopy(entry["json"])}
            if "binary" in entry:
                item["binary"] = copy.deepcopy(entry["binary"])
            items.append(item)
        elif isinstance(entry, dict):
            items.append({"json": copy.deepcopy(entry)})
        else:
            raise MiniN8nError(f"pinned data of {where} holds {type(entry).__name__} where an item object belongs")
    return items


def pinned_items(workflow: Workflow, node: str) -> list[Item] | None:
    """The items pinned on a node (copies: a run never changes the file's data); None if unpinned."""
    data = workflow.pinData.get(node) if workflow.pinData else None
    if data is None:
        return None
    return as_items(data, f'node "{node}"')


def pin(workflow: Workflow, node: str, items: list[Item]) -> None:
    """Pin items on a node, as n8n stores them: `{"json": ...}` per item."""
    if not workflow.has_node(node):
        raise MiniN8nError(f'cannot pin data on "{node}": no such node')
    workflow.pinData = {**workflow.pinData, node: [{"json": copy.deepcopy(i.get("json", {}))} for i in items]}


def unpin(workflow: Workflow, node: str) -> None:
    workflow.pinData = {k: v for k, v in workflow.pinData.items() if k != node}
