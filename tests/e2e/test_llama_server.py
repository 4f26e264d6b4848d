"""The OpenAI Chat Model node against a peer no one here wrote: llama-cpp-python's own server.

`python -m llama_cpp.server` runs on 127.0.0.1 with the bundled Gemma 3 270M and the
chatml-function-calling format. It cannot stream a tool decision (the stream breaks off, so the
tool workflow turns streaming off). What the 270M model says depends on the CPU, so the tool run
asserts the protocol (calls made over HTTP, executed, each request grown by the round trip),
whether it ends with an answer or at the Agent's iteration limit; a final answer streamed over
SSE is asserted in a run without tools.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import httpx
import pytest

pytest.importorskip("llama_cpp.server.app")

from engine.executor import Engine  # noqa: E402
from engine.workflow import save_workflow  # noqa: E402
from nodes.models._llama_runtime import bundled_model_path  # noqa: E402
from tests.nodes.models.model_workflows import OPENAI, TokenLog, chat, model_runs, with_model  # noqa: E402

ROOT = Path(__file__).parents[2]
LINE = re.compile(r"^\[\s*\d+ ms\] (?P<name>.{10,}?) (?P<rest>(in|out|error)=.*)$")
ALIAS = "gemma-3-270m"
# The tool offered: n8n's Think tool, whose one argument is required. llama-cpp-python's
# chatml-function-calling never finishes a reply when a tool's arguments are all optional (n8n's
# Calculator: {input?: string}), which says nothing about our side of the protocol.
THINK = [("Think", "@n8n/n8n-nodes-langchain.toolThink", {})]

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(bundled_model_path()), "--host", "127.0.0.1",
         "--port", str(port), "--chat_format", "chatml-function-calling", "--n_ctx", "4096",
         "--model_alias", ALIAS],
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}: {log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=1, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not answer within 120 s")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def run_cli(tmp_path: Path, workflow: object, message: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "wf.json"
    save_workflow(workflow, path)
    env = dict(os.environ, OPENAI_API_KEY="", MINI_N8N_CREDENTIALS=str(tmp_path / "credentials.json"))
    return subprocess.run([sys.executable, "-m", "engine.cli", "run", str(path), "--message", message],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)


def log_lines(stdout: str) -> list[tuple[str, str]]:
    out = []
    for line in stdout.splitlines():
        m = LINE.match(line)
        if m:
            out.append((m.group("name").strip(), m.group("rest")))
    return out


def test_tool_calls_made_and_executed_over_http(llama_server: str, tmp_path: Path) -> None:
    """Whether the 270M model calls the tool depends on the CPU; the protocol does not: each
    call is executed with its arguments (or refused when they do not fit the tool's schema) and sent
    back (the next request is longer), and the run
    ends with an answer or at the Agent's iteration limit."""
    params = {"model": {"__rl": True, "value": ALIAS, "mode": "list"},
              "options": {"baseURL": llama_server, "temperature": 0, "maxTokens": 64, "streaming": False,
                          "toolChoiceAuto": True}}
    wf = with_model(OPENAI, params, tools=THINK, agent_options={"maxIterations": 2})
    result = run_cli(tmp_path, wf, "What is 17 * 25? Think it through with the thinking tool.")
    log = log_lines(result.stdout)
    assert log[0][0] == "Chat" and log[-1][0] == "AI Agent", result.stdout
    replies, i = [], 1
    while i < len(log) - 1:
        assert log[i][0] == "Model", result.stdout
        reply = json.loads(log[i][1].removeprefix("out="))
        replies.append(reply)
        for call in reply["toolCalls"]:
            assert call["name"] == "thinking_tool"
            if log[i + 1][0] != "Think":  # arguments that do not fit the tool's schema: refused, said to the model
                continue
            i += 1
            assert log[i][1].startswith("in=" + json.dumps(call["args"], separators=(",", ":")))
            assert " out=" in log[i][1] or " error=" in log[i][1]
        i += 1
    prompts = [r["usage"]["promptTokens"] for r in replies]
    assert prompts[0] > 0 and prompts == sorted(prompts) and len(set(prompts)) == len(prompts)  # each round trip grew it
    if replies[-1]["toolCalls"]:
        assert len(replies) == 2 and result.returncode == 1
        assert "error: [AI Agent] Max iterations (2) reached." in result.stdout
    else:
        assert result.returncode == 0
        assert f"answer: {replies[-1]['content']}" in result.stdout


def test_final_answer_from_the_cli(llama_server: str, tmp_path: Path) -> None:
    params = {"model": ALIAS, "options": {"baseURL": llama_server, "temperature": 0, "maxTokens": 48}}
    result = run_cli(tmp_path, with_model(OPENAI, params, tools=[]), "Write a long story about a cat.")
    assert result.returncode == 0, result.stdout + result.stderr
    log = log_lines(result.stdout)
    reply = json.loads(log[1][1].removeprefix("out="))
    assert reply["toolCalls"] == [] and reply["usage"]["promptTokens"] > 0
    assert reply["usage"]["completionTokens"] > 0 or not reply["content"]
    printed = reply["content"] or "(empty reply — the model returned no text)"  # the peer's words are its own
    assert f"answer: {printed}" in result.stdout


async def test_tokens_stream_over_sse(llama_server: str, engine: Engine) -> None:
    params = {"model": ALIAS, "options": {"baseURL": llama_server, "temperature": 0, "maxTokens": 48}}
    tokens = TokenLog()
    state = await chat(engine, with_model(OPENAI, params, tools=[]), "Write a long story about a cat.", tokens)
    assert state.status == "success", state.error
    pieces = [t for n, t in tokens.tokens if n == "Model"]
    assert len(pieces) > 1 and "".join(pieces) == state.result[0]["json"]["output"]
    assert model_runs(state)[0].metadata["tokenUsage"]["completionTokens"] > 0


async def test_streamed_tool_decision_is_reported_not_hung(llama_server: str, engine: Engine) -> None:
    """With streaming on, the server breaks off the stream when the model picks a function."""
    params = {"model": ALIAS, "options": {"baseURL": llama_server, "temperature": 0, "maxRetries": 0, "toolChoiceAuto": True}}
    state = await chat(engine, with_model(OPENAI, params, tools=THINK), "What is 17 * 25? Think it through with the thinking tool.")
    assert state.status == "error"
    assert state.error.node == "Model"
    assert state.error.message == f"the model server at {llama_server} ended the stream mid-reply"
