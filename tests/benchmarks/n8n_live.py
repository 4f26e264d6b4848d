"""Real n8n as the benchmark's peer: the same agent workflow against the same loopback server.

When n8n is installed (`$N8N_DIR`, default /work/n8n, installed as the n8n reference recipe
says) it runs Manual Trigger -> AI Agent -> OpenAI Chat Model + Calculator headless with
`n8n execute` and reads each model call's start time from the execution it prints: the
figure is the time between successive model calls inside one run, so n8n's start-up is left
out. Without n8n, the last recorded figure (n8n_recorded.json, with its date) is what there is.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).with_name("n8n_recorded.json")
WORKFLOW_ID = "benchWf000000001"
CREDENTIAL_ID = "cred0000000001"


def n8n_dir() -> Path:
    return Path(os.environ.get("N8N_DIR", "/work/n8n"))


def n8n_command(binary: Path, env: dict[str, str], folder: Path, *args: str, timeout: float = 900) -> str:
    """What `n8n ARGS` prints, by way of a file in `folder`: through a pipe, Node drops what is
    still buffered when n8n exits (an execution of 19 MB arrived cut at 15 MB)."""
    output = folder / "stdout.txt"
    with output.open("wb") as sink:
        done = subprocess.run([str(binary), *args], env=env, stdout=sink, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"n8n {args[0]} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return output.read_text(encoding="utf-8")


def n8n_binary() -> Path | None:
    binary = n8n_dir() / "node_modules" / ".bin" / "n8n"
    return binary if binary.exists() and shutil.which("node") else None


def recorded() -> dict[str, Any]:
    return json.loads(RECORDED.read_text())


def workflow(rounds: int) -> dict[str, Any]:
    def at(x: int, y: int) -> list[int]:
        return [x, y]

    return {
        "id": WORKFLOW_ID, "name": "mini-n8n benchmark", "active": False, "settings": {"executionOrder": "v1"},
        "nodes": [
            {"id": "1", "name": "Start", "type": "n8n-nodes-base.manualTrigger", "typeVersion": 1,
             "position": at(0, 0), "parameters": {}},
            {"id": "2", "name": "AI Agent", "type": "@n8n/n8n-nodes-langchain.agent", "typeVersion": 2.2,
             "position": at(220, 0),
             "parameters": {"promptType": "define", "text": "go", "options": {"maxIterations": rounds + 5}}},
            {"id": "3", "name": "OpenAI Chat Model", "type": "@n8n/n8n-nodes-langchain.lmChatOpenAi", "typeVersion": 1.2,
             "position": at(200, 200),
             "parameters": {"model": {"__rl": True, "value": "peer-model", "mode": "id"}, "options": {}},
             "credentials": {"openAiApi": {"id": CREDENTIAL_ID, "name": "Benchmark peer"}}},
            {"id": "4", "name": "Calculator", "type": "@n8n/n8n-nodes-langchain.toolCalculator", "typeVersion": 1,
             "position": at(400, 200), "parameters": {}},
        ],
        "connections": {
            "Start": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
            "OpenAI Chat Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
            "Calculator": {"ai_tool": [[{"node": "AI Agent", "type": "ai_tool", "index": 0}]]},
        },
    }


@dataclass
class N8nRunner:
    """One n8n user folder with the workflow and a credential pointing at `base_url` imported."""

    binary: Path
    base_url: str
    rounds: int

    def __post_init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="n8n-bench-"))
        self.env = dict(
            os.environ, N8N_USER_FOLDER=str(self.home), N8N_DIAGNOSTICS_ENABLED="false",
            N8N_VERSION_NOTIFICATIONS_ENABLED="false", N8N_TEMPLATES_ENABLED="false", N8N_RUNNERS_ENABLED="false",
            N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS="false", N8N_EXPRESSION_ENGINE="legacy",
        )
        credentials = [{"id": CREDENTIAL_ID, "name": "Benchmark peer", "type": "openAiApi",
                        "data": {"apiKey": "sk-bench", "url": self.base_url}}]
        (self.home / "credentials.json").write_text(json.dumps(credentials))
        (self.home / "workflow.json").write_text(json.dumps(workflow(self.rounds)))
        self._n8n("import:credentials", f"--input={self.home / 'credentials.json'}")
        self._n8n("import:workflow", f"--input={self.home / 'workflow.json'}")

    def _n8n(self, *args: str) -> str:
        return n8n_command(self.binary, self.env, self.home, *args)

    def ms_per_iteration(self) -> float:
        """One execution; the mean time between successive model calls inside it."""
        out = self._n8n("execute", f"--id={WORKFLOW_ID}", "--rawOutput")
        execution = json.loads(out[out.index("{"):])
        runs = execution["data"]["resultData"]["runData"]
        starts = [run["startTime"] for run in runs["OpenAI Chat Model"]]
        if len(runs.get("Calculator", [])) != self.rounds or len(starts) != self.rounds + 1:
            raise RuntimeError(f"n8n ran {len(runs.get('Calculator', []))} tool rounds, not {self.rounds}")
        return (starts[-1] - starts[0]) / (len(starts) - 1)

    def close(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)


def version() -> str:
    package = n8n_dir() / "node_modules" / "n8n" / "package.json"
    try:
        return str(json.loads(package.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "?"
