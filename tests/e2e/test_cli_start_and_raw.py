"""`mini-n8n run --trigger/--input`, `--raw-output` and `executions show --json` from a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from engine.workflow import save_workflow, parse_workflow
from tests.builders import MANUAL_TRIGGER, SET, link, node

ROOT = Path(__file__).parents[2]
PARITY = ROOT / "tests" / "parity"


def mini_n8n(*args: str, env_db: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "MINI_N8N_DB": str(env_db)}
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env=env)


def test_raw_output_has_the_shape_of_n8n_execute_raw_output(tmp_path: Path) -> None:
    name = "set-v34-raw"
    result = mini_n8n("run", str(PARITY / "workflows" / f"{name}.json"), "--raw-output", env_db=tmp_path / "x.sqlite")
    assert result.returncode == 0, result.stderr
    ours = json.loads(result.stdout)
    theirs = json.loads((PARITY / "recorded" / f"{name}.json").read_text())
    assert set(theirs) <= set(ours)
    assert set(theirs["data"]) <= set(ours["data"])
    assert ours["status"] == theirs["status"] == "success" and ours["mode"] == theirs["mode"] == "cli"
    assert ours["startedAt"].endswith("Z") and len(ours["startedAt"]) == len(theirs["startedAt"])
    our_runs, their_runs = ours["data"]["resultData"]["runData"], theirs["data"]["resultData"]["runData"]
    assert list(our_runs) == list(their_runs)
    for node_name, runs in their_runs.items():
        for mine, their in zip(our_runs[node_name], runs):
            assert set(their) - {"hints"} <= set(mine), node_name
            assert [[i["json"] for i in out] for out in mine["data"]["main"]] == \
                   [[i["json"] for i in out] for out in their["data"]["main"]]
            assert mine["source"] == their["source"]
    assert ours["data"]["resultData"]["lastNodeExecuted"] == theirs["data"]["resultData"]["lastNodeExecuted"]

    execution_id = None
    listed = mini_n8n("executions", "list", env_db=tmp_path / "x.sqlite")
    execution_id = listed.stdout.split()[0]
    shown = mini_n8n("executions", "show", execution_id, "--json", env_db=tmp_path / "x.sqlite")
    assert shown.returncode == 0, shown.stderr
    stored = json.loads(shown.stdout)
    assert stored["data"]["resultData"]["runData"].keys() == our_runs.keys()
    assert stored["status"] == "success" and stored["startedAt"] == ours["startedAt"]


def test_trigger_and_input_start_an_unsupported_trigger(tmp_path: Path) -> None:
    connections: dict = {}
    link(connections, "Webhook", "Edit Fields")
    wf = parse_workflow({"name": "hook", "nodes": [
        node("Webhook", "n8n-nodes-base.webhook", {"path": "x"}, typeVersion=2),
        node("Edit Fields", SET, {"assignments": {"assignments": [{"name": "got", "value": "={{ $json.body }}", "type": "string"}]}}),
    ], "connections": connections})
    path = tmp_path / "hook.json"
    save_workflow(wf, path)
    db = tmp_path / "x.sqlite"

    refused = mini_n8n("run", str(path), env_db=db)
    assert refused.returncode == 2
    assert '"Webhook" (n8n-nodes-base.webhook)' in refused.stderr and "--trigger" in refused.stderr

    item = tmp_path / "item.json"
    item.write_text('{"body": "from a file"}')
    for given, expected in (('{"body": "hello"}', "hello"), (f"@{item}", "from a file")):
        result = mini_n8n("run", str(path), "--trigger", "Webhook", "--input", given, env_db=db)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-1] == f'answer: {{"got":"{expected}"}}'


def test_all_unsupported_nodes_on_the_path_are_named(tmp_path: Path) -> None:
    connections: dict = {}
    link(connections, "Start", "Sheets")
    link(connections, "Sheets", "Slack")
    wf = parse_workflow({"name": "two", "nodes": [
        node("Start", MANUAL_TRIGGER), node("Sheets", "n8n-nodes-base.googleSheets"), node("Slack", "n8n-nodes-base.slack"),
    ], "connections": connections})
    path = tmp_path / "two.json"
    save_workflow(wf, path)
    result = mini_n8n("run", str(path), env_db=tmp_path / "x.sqlite")
    assert result.returncode == 2
    assert '2 nodes on the run\'s path have types mini-n8n does not support: "Sheets" (n8n-nodes-base.googleSheets); ' \
           '"Slack" (n8n-nodes-base.slack)' in result.stderr
