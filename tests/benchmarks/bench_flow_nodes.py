"""Per-node cost of the flow and data nodes on 10,000 items, next to real n8n's for the same workflow.

One workflow: a Code node makes 10,000 items, then If, Switch (rules), Merge (append, the items on
both inputs), Code (JavaScript, once for all items: n8n's once-per-item mode makes a sandbox per
item, minutes for 10,000) and Edit Fields (Set) each take them. A node's figure is its own run time as the execution records it (`executionTime`), so
start-up and the other nodes are left out. mini-n8n and n8n (`n8n execute`, installed in $N8N_DIR
as tests/parity/record.sh does) run interleaved; min/median/max per node, the ratio of medians
(ours / n8n) and the load average are printed. Without n8n the last recorded figures
(n8n_flow_recorded.json, with their date; `--record` writes them) are printed, marked as recorded.
`--quick` (or $BENCH_QUICK=1): one run each, on 2,000 items when n8n runs beside.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from engine.executor import Engine
from engine.registry import builtin_registry
from engine.workflow import parse_workflow
from tests.benchmarks.n8n_live import n8n_binary, n8n_command, version

ITEMS = 10_000
QUICK_ITEMS = 2_000  # quick mode, when n8n runs beside (the recorded n8n figures are for ITEMS)
RECORDED = Path(__file__).with_name("n8n_flow_recorded.json")
WORKFLOW_ID = "benchFlowNodes01"
CONDITION = {"options": {"caseSensitive": True, "leftValue": "", "typeValidation": "strict", "version": 2},
             "conditions": [{"id": "c1", "leftValue": "={{ $json.n }}", "rightValue": 5000,
                             "operator": {"type": "number", "operation": "gt"}}], "combinator": "and"}
MEASURED = {  # node name -> (type, typeVersion, parameters)
    "If": ("n8n-nodes-base.if", 2.2, {"conditions": CONDITION, "options": {}}),
    "Switch": ("n8n-nodes-base.switch", 3.2, {"rules": {"values": [{"conditions": CONDITION}, {"conditions": CONDITION}]},
                                              "options": {"fallbackOutput": "extra"}}),
    "Merge": ("n8n-nodes-base.merge", 3.2, {}),
    "Code": ("n8n-nodes-base.code", 2, {"jsCode": "return items.map(i => ({ json: { m: i.json.n * 2 } }));"}),
    "Set": ("n8n-nodes-base.set", 3.4, {"assignments": {"assignments": [
        {"id": "a1", "name": "m", "value": "={{ $json.n * 2 }}", "type": "number"},
        {"id": "a2", "name": "label", "value": "={{ $json.name.toUpperCase() }}", "type": "string"}]},
        "includeOtherFields": True, "options": {}}),
}


def workflow(items: int) -> dict[str, Any]:
    make = f"return Array.from({{ length: {items} }}, (_, i) => ({{ json: {{ n: i, name: 'user ' + i }} }}));"
    nodes: list[dict[str, Any]] = [
        {"id": "t", "name": "Start", "type": "n8n-nodes-base.manualTrigger", "typeVersion": 1, "position": [0, 0],
         "parameters": {}},
        {"id": "i", "name": "Items", "type": "n8n-nodes-base.code", "typeVersion": 2, "position": [200, 0],
         "parameters": {"jsCode": make}},
    ]
    links: list[dict[str, Any]] = []
    for index, (name, (type_, version_, parameters)) in enumerate(MEASURED.items()):
        nodes.append({"id": f"n{index}", "name": name, "type": type_, "typeVersion": version_,
                      "position": [450, index * 150], "parameters": parameters})
        links.append({"node": name, "type": "main", "index": 0})
        if name == "Merge":
            links.append({"node": name, "type": "main", "index": 1})
    return {"id": WORKFLOW_ID, "name": "mini-n8n flow node benchmark", "active": False,
            "settings": {"executionOrder": "v1"}, "nodes": nodes,
            "connections": {"Start": {"main": [[{"node": "Items", "type": "main", "index": 0}]]}, "Items": {"main": [links]}}}


def ours(items: int) -> dict[str, float]:
    state = asyncio.run(Engine(builtin_registry()).run(parse_workflow(workflow(items))))
    if state.status != "success":
        raise RuntimeError(f"mini-n8n's run failed: {state.error.message if state.error else state.status}")
    return {name: state.run_data[name][0].execution_time for name in MEASURED}


class N8n:
    """An n8n user folder with the workflow imported; each run is one `n8n execute`."""

    def __init__(self, binary: Path, items: int) -> None:
        self.binary = binary
        self.home = Path(tempfile.mkdtemp(prefix="n8n-flow-bench-"))
        self.env = dict(os.environ, N8N_USER_FOLDER=str(self.home), N8N_DIAGNOSTICS_ENABLED="false",
                        N8N_VERSION_NOTIFICATIONS_ENABLED="false", N8N_TEMPLATES_ENABLED="false",
                        N8N_RUNNERS_ENABLED="false", N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS="false",
                        N8N_EXPRESSION_ENGINE="legacy")
        (self.home / "workflow.json").write_text(json.dumps(workflow(items)))
        self._n8n("import:workflow", f"--input={self.home / 'workflow.json'}")

    def _n8n(self, *args: str) -> str:
        return n8n_command(self.binary, self.env, self.home, *args)

    def run(self) -> dict[str, float]:
        out = self._n8n("execute", f"--id={WORKFLOW_ID}", "--rawOutput")
        execution = json.loads(out[out.index("{"):])
        runs = execution["data"]["resultData"]["runData"]
        if execution.get("status") != "success":
            raise RuntimeError(f"n8n's run failed: {execution['data']['resultData'].get('error')}")
        return {name: float(runs[name][0]["executionTime"]) for name in MEASURED}

    def close(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)


def spread(values: list[float]) -> str:
    return f"min {min(values):8.1f}  median {statistics.median(values):8.1f}  max {max(values):8.1f} ms"


def main() -> None:
    quick = "--quick" in sys.argv or os.environ.get("BENCH_QUICK") == "1"
    repeats = 1 if quick else 3
    binary = n8n_binary()
    items = QUICK_ITEMS if quick and binary is not None else ITEMS
    mine: dict[str, list[float]] = {name: [] for name in MEASURED}
    theirs: dict[str, list[float]] = {name: [] for name in MEASURED}
    peer = N8n(binary, items) if binary is not None else None
    try:
        ours(items)  # warm-up: imports, the JavaScript engine, compiled templates
        for _ in range(repeats):  # interleaved, so both see the same load
            for name, ms in ours(items).items():
                mine[name].append(ms)
            if peer is not None:
                for name, ms in peer.run().items():
                    theirs[name].append(ms)
    finally:
        if peer is not None:
            peer.close()
    label = f"n8n {version()} (measured now)"
    if peer is None:
        saved = json.loads(RECORDED.read_text())
        theirs = {name: [float(ms)] for name, ms in saved["ms"].items()}
        label = f"n8n {saved['n8n']} (recorded {saved['recorded']}, not measured now)"
    print(f"per-node time on {items:,} items{' (quick)' if items != ITEMS else ''}, {repeats} run(s) each; peer: {label}")
    for name in MEASURED:
        ratio = statistics.median(mine[name]) / statistics.median(theirs[name]) if theirs[name] else float("nan")
        print(f"  {name:18s} mini-n8n {spread(mine[name])}")
        print(f"  {'':18s} n8n      {spread(theirs[name])}   ratio {ratio:5.2f}x")
    print(f"load average {os.getloadavg()[0]:.2f}")
    if peer is not None and "--record" in sys.argv and items == ITEMS:
        RECORDED.write_text(json.dumps({"n8n": version(), "recorded": time.strftime("%Y-%m-%d"),
                                        "what": f"per-node executionTime (ms, median) on {ITEMS} items",
                                        "ms": {n: statistics.median(v) for n, v in theirs.items()}}, indent=2) + "\n")


if __name__ == "__main__":
    main()
