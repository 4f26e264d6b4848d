"""n8n's node settings: the ones mini-n8n does not run are said in the run log (the parity corpus
checks "Execute Once" and "Always Output Data" against n8n: tests/parity/workflows/node-settings.json)."""

from __future__ import annotations

import asyncio
from typing import Any

from engine.executor import Engine
from engine.registry import builtin_registry
from engine.workflow import parse_workflow
from tests.builders import link, node


def test_settings_mini_n8n_does_not_run_are_noted_on_the_nodes_run() -> None:
    connections: dict[str, Any] = {}
    link(connections, "Start", "Pass")
    workflow = parse_workflow({"name": "settings", "connections": connections, "nodes": [
        node("Start", "n8n-nodes-base.manualTrigger"),
        node("Pass", "n8n-nodes-base.noOp", onError="continueErrorOutput", retryOnFail=True)]})
    state = asyncio.run(Engine(builtin_registry()).run(workflow))
    notes = state.run_data["Pass"][0].metadata["notes"]
    assert notes == ['Node "Pass" sets On Error "continueErrorOutput", Retry On Fail, which mini-n8n does not run: '
                     "an error of this node stops the run"]
