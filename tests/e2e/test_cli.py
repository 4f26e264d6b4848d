"""`mini-n8n run` from a real subprocess: the run log, status, answer and exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.builders import agent_workflow, tool_call
from engine.workflow import save_workflow

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "scripted-calculator-agent.json"
LINE = re.compile(r"^\[\s*\d+ ms\] (?P<name>.{10,}?) (?P<rest>(in|out|error)=.*)$")


def mini_n8n(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_example_runs_offline_and_prints_the_run_log() -> None:
    result = mini_n8n("run", str(EXAMPLE), "--message", "A shirt costs 25 dollars. How much do 17 shirts cost?", "--session", "cli")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    log = [l for l in lines if l.startswith("[")]
    names = [LINE.match(l).group("name").strip() for l in log]
    assert names == [
        "When chat message received", "Simple Memory", "Model", "Calculator", "Simple Memory", "Model",
        "Simple Memory", "AI Agent",
    ]
    calc = log[3]
    assert calc.endswith('Calculator in={"expression":"17 * 25"} out={"response":"425"}')
    assert re.match(r'^\[\s*\d+ ms\] Model      out=\{"content":"","toolCalls":\[\{"id":"call_1_1","name":"Calculator"', log[2])
    assert lines[-2:] == ["status: success", "answer: 17 shirts at 25 dollars each cost 425 dollars."]
    model_out = json.loads(log[5].split(" out=", 1)[1])
    assert model_out["usage"]["promptTokens"] > 0


def test_failed_run_exits_1_and_prints_the_error(tmp_path: Path) -> None:
    wf = agent_workflow([{"toolCalls": [tool_call("Calculator", {"expression": "1+1"})]}] * 3, agent_options={"maxIterations": 1})
    path = tmp_path / "wf.json"
    save_workflow(wf, path)
    result = mini_n8n("run", str(path), "--message", "What is 2 + 2?")
    assert result.returncode == 1
    assert "status: error" in result.stdout
    assert "error: [AI Agent] Max iterations (1) reached." in result.stdout


def test_bad_file_and_bad_arguments_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"nodes": [{"name": "A"}]}')
    result = mini_n8n("run", str(broken))
    assert result.returncode == 2
    assert 'node "A", field type: Field required' in result.stderr
    assert mini_n8n("run").returncode == 2
    missing = mini_n8n("run", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "No such file" in missing.stderr


def test_message_without_chat_trigger_and_manual_run(tmp_path: Path) -> None:
    wf = agent_workflow([{"text": "done"}], trigger="manual", tools=[], agent_params={"promptType": "define", "text": "go"})
    path = tmp_path / "manual.json"
    save_workflow(wf, path)
    refused = mini_n8n("run", str(path), "--message", "hi")
    assert refused.returncode == 2 and "needs a Chat Trigger" in refused.stderr
    ok = mini_n8n("run", str(path))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[-1] == "answer: done"
