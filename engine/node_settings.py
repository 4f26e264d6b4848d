"""n8n's per-node settings (a node's Settings tab, stored on the node): "Execute Once" and "Always
Output Data" run as in n8n; "On Error", "Continue On Fail" and "Retry On Fail" are not run, and a
node that sets them gets a run-log note saying so."""

from __future__ import annotations

from typing import Any

from .run_data import Item
from .workflow import Node


def _settings(node: Node) -> dict[str, Any]:
    return node.model_extra or {}


def executes_once(node: Node) -> bool:
    return _settings(node).get("executeOnce") is True


def always_outputs(node: Node) -> bool:
    return _settings(node).get("alwaysOutputData") is True


def empty_output(inputs: list[list[Item] | None]) -> Item:
    """n8n's item for "Always Output Data": empty, paired with every input item."""
    pairs = [{"item": index, "input": input_index}
             for input_index, items in enumerate(inputs) if items for index in range(len(items))]
    return {"json": {}, "pairedItem": pairs}


def unsupported_note(node: Node) -> str | None:
    """What of the node's settings mini-n8n does not run, in words (None when nothing)."""
    settings = _settings(node)
    found = []
    if settings.get("onError") not in (None, "stopWorkflow"):
        found.append(f'On Error "{settings["onError"]}"')
    if settings.get("continueOnFail") is True:
        found.append("Continue On Fail")
    if settings.get("retryOnFail") is True:
        found.append("Retry On Fail")
    if not found:
        return None
    return (f'Node "{node.name}" sets {", ".join(found)}, which mini-n8n does not run: an error of this node '
            "stops the run")
