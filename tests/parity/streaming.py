"""Streamed chat replies as real n8n sends them, and the same cases served by mini-n8n.

A Chat Trigger (v1.3, public, response mode "Streaming") starts an AI Agent with an OpenAI Chat
Model on the scripted peer below and a Calculator. The peer streams its replies a few characters
per server-sent event, `TOKEN_DELAY_S` apart, so a client sees the chunks come one by one.
The chat message picks the case:

- `TOOL`: a first reply with text and a Calculator call, then the answer "The sum is 4."
- `FAIL`: the model answers HTTP 500 (the agent fails; n8n sends an `error` chunk)
- anything else: "Echo: <message>"

Run as a module, with n8n installed in $N8N_DIR (default /work/n8n), it records what n8n answers
for each case (status, headers, the body's bytes and when each line came) into
tests/parity/recorded/streaming/<case>.json:

    flock /tmp/n8n-record.lock python3 -m tests.parity.streaming

The recording needs only the standard library and n8n.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.peers.http_peer import Request, Step
from tests.peers.openai_peer import OpenAIPeer

MODEL = "gpt-4o-mini"
TOKEN_DELAY_S = 0.05
HERE = Path(__file__).parent
RECORDED = HERE / "recorded" / "streaming"
CREDENTIAL_ID = "streamcred000001"
# case: (workflow id, agent version, agent options, chat message); its webhook id is "stream-<case>"
CASES: dict[str, tuple[str, float, dict[str, Any], str]] = {
    "v3-tool": ("streamWf00000001", 3, {}, "TOOL"),
    "v3-echo": ("streamWf00000002", 3, {}, "hello there"),
    "v3-fail": ("streamWf00000003", 3, {}, "FAIL"),
    "v22-tool": ("streamWf00000004", 2.2, {}, "TOOL"),
    "v3-off": ("streamWf00000005", 3, {"enableStreaming": False}, "hello there"),
    "v17-echo": ("streamWf00000006", 1.7, {}, "hello there"),
}


def webhook_id(case: str) -> str:
    return f"stream-{case}"


def peer_policy(request: Request) -> Step:
    messages = request.json.get("messages", [])
    last_user = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
    last_user = last_user if isinstance(last_user, str) else json.dumps(last_user)
    if "FAIL" in last_user:
        return Step("status", status=500, body={"error": {"message": "The scripted model failed", "type": "server_error",
                                                          "param": None, "code": None}})
    if "TOOL" in last_user:
        if not any(m.get("role") == "tool" for m in messages):
            name = request.json["tools"][0]["function"]["name"]
            return Step(text="Let me add.", tool_calls=[{"id": "call_1", "name": name, "arguments": {"input": "2+2"}}],
                        usage=(20, 5))
        return Step(text="The sum is 4.", usage=(30, 4))
    return Step(text=f"Echo: {last_user}", usage=(10, 3))


def workflow(case: str, model_url: str = "", for_n8n: bool = True) -> dict[str, Any]:
    """The case's workflow (for n8n: with its id, the credential reference; else the model's URL
    in the node's options, as mini-n8n reads it without a credential)."""
    workflow_id, version, agent_options, _message = CASES[case]
    model_parameters: dict[str, Any] = {"model": {"__rl": True, "value": MODEL, "mode": "list"}, "options": {}}
    model_node: dict[str, Any] = {"id": "id-model", "name": "OpenAI Chat Model", "type": "@n8n/n8n-nodes-langchain.lmChatOpenAi",
                                  "typeVersion": 1.2, "position": [200, 200], "parameters": model_parameters}
    if for_n8n:
        model_node["credentials"] = {"openAiApi": {"id": CREDENTIAL_ID, "name": "Peer"}}
    else:
        model_parameters["options"]["baseURL"] = model_url
    doc: dict[str, Any] = {
        "name": f"streamed chat {case}",
        "nodes": [
            {"id": "id-chat", "name": "When chat message received", "type": "@n8n/n8n-nodes-langchain.chatTrigger",
             "typeVersion": 1.3, "position": [0, 0], "webhookId": webhook_id(case),
             "parameters": {"public": True, "mode": "webhook", "options": {"responseMode": "streaming"}}},
            {"id": "id-agent", "name": "AI Agent", "type": "@n8n/n8n-nodes-langchain.agent", "typeVersion": version,
             "position": [200, 0], "parameters": {"options": agent_options}},
            model_node,
            {"id": "id-calc", "name": "Calculator", "type": "@n8n/n8n-nodes-langchain.toolCalculator", "typeVersion": 1,
             "position": [400, 200], "parameters": {}},
        ],
        "connections": {
            "When chat message received": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
            "OpenAI Chat Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
            "Calculator": {"ai_tool": [[{"node": "AI Agent", "type": "ai_tool", "index": 0}]]},
        },
        "settings": {"executionOrder": "v1"},
    }
    if for_n8n:
        doc.update(id=workflow_id, active=False)
    return doc


def post_chat(host: str, port: int, hook: str, message: str, timeout: float = 120) -> dict[str, Any]:
    """POST a chat message; the response's status, headers, body and when each line of it came
    (seconds after the request was sent)."""
    body = json.dumps({"action": "sendMessage", "sessionId": "recorded-session", "chatInput": message})
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    sent = time.monotonic()
    conn.request("POST", f"/webhook/{hook}/chat", body=body, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    lines, arrivals = [], []
    while True:
        line = response.readline()
        if not line:
            break
        lines.append(line.decode("utf-8"))
        arrivals.append(round(time.monotonic() - sent, 3))
    conn.close()
    return {"status": response.status, "headers": {k.lower(): v for k, v in response.getheaders()},
            "body": "".join(lines), "arrivals": arrivals}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def record() -> None:
    n8n_dir = Path(os.environ.get("N8N_DIR", "/work/n8n"))
    binary = n8n_dir / "node_modules" / ".bin" / "n8n"
    if not binary.exists():
        sys.exit(f"n8n is not installed in {n8n_dir}")
    home = Path(tempfile.mkdtemp(prefix="n8n-stream-"))
    port = _free_port()
    env = dict(os.environ, N8N_USER_FOLDER=str(home), N8N_DIAGNOSTICS_ENABLED="false",
               N8N_VERSION_NOTIFICATIONS_ENABLED="false", N8N_TEMPLATES_ENABLED="false", N8N_RUNNERS_ENABLED="false",
               N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS="false", N8N_EXPRESSION_ENGINE="legacy", N8N_PORT=str(port),
               N8N_LISTEN_ADDRESS="127.0.0.1", GENERIC_TIMEZONE="UTC", TZ="UTC")

    def n8n(*args: str) -> None:
        done = subprocess.run([str(binary), *args], env=env, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"n8n {args[0]} failed: {(done.stderr or done.stdout)[-800:]}")

    with OpenAIPeer(policy=peer_policy, model=MODEL, token_delay=TOKEN_DELAY_S) as peer:
        (home / "credentials.json").write_text(json.dumps([{"id": CREDENTIAL_ID, "name": "Peer", "type": "openAiApi",
                                                            "data": {"apiKey": "sk-stream", "url": peer.base_url}}]))
        n8n("import:credentials", f"--input={home / 'credentials.json'}")
        for case, (workflow_id, *_rest) in CASES.items():
            (home / f"{case}.json").write_text(json.dumps(workflow(case)))
            n8n("import:workflow", f"--input={home / f'{case}.json'}")
            n8n("update:workflow", f"--id={workflow_id}", "--active=true")
        with open(home / "main.log", "ab") as out:
            server = subprocess.Popen([str(binary), "start"], env=env, stdout=out, stderr=subprocess.STDOUT,
                                      start_new_session=True)
        try:
            for case, (_id, version, options, message) in CASES.items():
                _wait_ready(port, webhook_id(case), server, home)
                result = post_chat("127.0.0.1", port, webhook_id(case), message)
                result["case"] = {"agentVersion": version, "agentOptions": options, "message": message,
                                  "tokenDelayS": TOKEN_DELAY_S}
                out_path = RECORDED / f"{case}.json"
                out_path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
                print(f"{case}: {result['status']}, {len(result['arrivals'])} lines -> {out_path.name}", flush=True)
        finally:
            _stop(server)
            shutil.rmtree(home, ignore_errors=True)


def _wait_ready(port: int, hook: str, server: subprocess.Popen[bytes], home: Path) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("POST", f"/webhook/{hook}/chat",
                         body=json.dumps({"action": "loadPreviousSession", "sessionId": "ready"}),
                         headers={"Content-Type": "application/json"})
            status = conn.getresponse().status
            conn.close()
            if status == 200:
                return
        except OSError:
            pass
        if server.poll() is not None:
            break
        time.sleep(0.5)
    raise RuntimeError(f"n8n did not start: {(home / 'main.log').read_text(errors='replace')[-1500:]}")


def _stop(server: subprocess.Popen[bytes]) -> None:
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)


if __name__ == "__main__":
    record()
