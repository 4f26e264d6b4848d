"""`mini-n8n run` from a real subprocess: the run log, status, answer and exit codes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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
    assert calc.endswith('Calculator in={"input":"17 * 25"} out={"response":"425"}')
    assert re.match(r'^\[\s*\d+ ms\] Model      out=\{"content":"","toolCalls":\[\{"id":"call_1_1","name":"Calculator"', log[2])
    assert lines[-2:] == ["status: success", "answer: 17 shirts at 25 dollars each cost 425 dollars."]
    model_out = json.loads(log[5].split(" out=", 1)[1])
    assert model_out["usage"]["promptTokens"] > 0


def test_failed_run_exits_1_and_prints_the_error(tmp_path: Path) -> None:
    wf = agent_workflow([{"toolCalls": [tool_call("Calculator", {"input": "1+1"})]}] * 3, agent_options={"maxIterations": 1})
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


ANSWER = " ".join(["word"] * 100)


def slow_agent(path: Path) -> Path:
    """A chat agent whose answer streams for about 4 s (40 ms a token): time to interrupt it."""
    replies = [{"toolCalls": [tool_call("Calculator", {"input": "17 * 25"}, "c1")]}, {"text": ANSWER}]
    save_workflow(agent_workflow(replies, model_options={"tokenDelayMs": 40}), path)
    return path


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "engine.cli", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def field(output: str, name: str) -> str:
    return next(line.split(": ", 1)[1] for line in output.splitlines() if line.startswith(f"{name}: "))


def stored_status(execution_id: str | None = None) -> tuple[str, str]:
    """(id, status) of the newest stored execution, or of `execution_id`."""
    listed = mini_n8n("executions", "list")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split()[:2] for line in listed.stdout.splitlines()]
    return next((i, s) for i, s in rows if execution_id in (None, i))


def test_run_into_a_closed_pipe_stops_quietly_and_can_be_resumed(tmp_path: Path) -> None:
    child = start("run", str(slow_agent(tmp_path / "slow.json")), "--message", "go")
    assert child.stdout is not None
    child.stdout.close()  # the reader is gone before the first line (`| head -0`), as `| head -1` is after one
    _, err = child.communicate(timeout=60)
    assert err == "", err  # no "hook listener failed", no BrokenPipeError
    assert child.returncode == 141
    execution_id, status = stored_status()
    assert status == "paused"
    resumed = mini_n8n("resume", execution_id)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert field(resumed.stdout, "answer") == ANSWER


def test_run_piped_into_head_prints_its_first_line_and_nothing_else(tmp_path: Path) -> None:
    path = slow_agent(tmp_path / "slow.json")
    command = f"{sys.executable} -m engine.cli run {path} --message go | head -1"
    result = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert LINE.match(result.stdout.strip()), result.stdout
    assert result.stderr == "", result.stderr
    assert result.returncode == 141


def test_executions_list_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    wf = agent_workflow([{"text": "done"}], tools=[])
    path = tmp_path / "quick.json"
    save_workflow(wf, path)
    for _ in range(3):
        assert mini_n8n("run", str(path), "--message", "hi").returncode == 0
    child = start("executions", "list")
    assert child.stdout is not None
    child.stdout.close()
    _, err = child.communicate(timeout=60)
    assert err == "", err
    assert child.returncode == 141


def test_ctrl_c_stops_the_run_as_interrupted_and_resume_finishes_it(tmp_path: Path) -> None:
    child = start("run", str(slow_agent(tmp_path / "slow.json")), "--message", "go")
    assert child.stdout is not None
    deadline = time.monotonic() + 60
    lines = []
    while time.monotonic() < deadline:  # wait for the tool's line: the model is streaming the answer now
        lines.append(child.stdout.readline())
        if "] Calculator" in lines[-1]:
            break
    else:
        pytest.fail("the run never got to its tool")
    time.sleep(0.3)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    out = "".join(lines) + out
    assert child.returncode == 130, out + err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert field(out, "status") == "paused"
    assert field(out, "paused") == 'interrupted at "Model"'
    execution_id = field(out, "execution")
    assert stored_status(execution_id)[1] == "paused"  # not "crashed"
    resumed = mini_n8n("resume", execution_id)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert field(resumed.stdout, "answer") == ANSWER
    assert "] Calculator" not in resumed.stdout  # the finished tool run is not repeated


def test_a_lone_surrogate_in_a_workflow_runs_stores_and_prints(tmp_path: Path) -> None:
    path = tmp_path / "surrogate.json"
    wf = agent_workflow([{"text": "done"}], tools=[])
    data = json.loads(wf.to_json())
    data["name"] = "odd \ud800 name"
    data["nodes"][1]["parameters"]["options"] = {"systemMessage": "x \udfff y"}
    path.write_text(json.dumps(data))  # ASCII with escapes, as JSON allows
    result = mini_n8n("run", str(path), "--message", "hi")
    assert result.returncode == 0, result.stdout + result.stderr
    assert field(result.stdout, "answer") == "done"
    listed = mini_n8n("executions", "list")
    assert "odd \\ud800 name" in listed.stdout, listed.stdout


def test_break_kinds_are_the_debuggers_pause_kinds() -> None:
    from engine.cli import BREAK_KINDS
    from engine.debugger import PAUSE_KINDS

    assert BREAK_KINDS == PAUSE_KINDS[1:]


def test_help_into_a_closed_pipe_exits_quietly() -> None:
    child = start("--help")
    assert child.stdout is not None
    child.stdout.close()
    _, err = child.communicate(timeout=60)
    assert err == "", err  # argparse drops what it cannot write; nothing is left for the exit's flush
    assert child.returncode == 0


def test_a_wait_on_a_webhook_call_exits_3_and_resume_input_continues_it(tmp_path: Path) -> None:
    """The run stops waiting at the Wait node (exit 3, the URL it waits at); `resume ID --input`
    continues it with that item as the Wait node's output."""
    from tests.engine.test_wait_resume import waiting_workflow

    path = tmp_path / "wait.json"
    save_workflow(waiting_workflow({"httpMethod": "PUT"}), path)
    run = mini_n8n("run", str(path))
    assert run.returncode == 3, run.stderr
    execution_id = field(run.stdout, "execution")
    assert field(run.stdout, "paused") == 'wait at "Wait"'
    assert field(run.stdout, "waiting for") == f"PUT http://localhost:5678/webhook-waiting/{execution_id} (mini-n8n serve)"
    assert stored_status(execution_id) == (execution_id, "paused")
    refused = mini_n8n("resume", execution_id)
    assert refused.returncode == 2 and 'waits for a webhook call at "Wait"' in refused.stderr
    resumed = mini_n8n("resume", execution_id, "--input", '{"body": {"ok": "by hand"}}')
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(field(resumed.stdout, "answer")) == {"got": "by hand"}
