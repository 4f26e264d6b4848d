"""Real model nodes: agent iteration cost over loopback HTTP, the embedded model's latency, Stop.

1. An agent on the OpenAI Chat Model node against a loopback Chat Completions peer (its own
   process) that answers at once: 1 and 21 tool rounds. One iteration is a streamed model request
   over HTTP, a Calculator run and the Agent's resume; the figure is wall time per model call.
   n8n 1.123 spends 4-11 ms per iteration on such a workflow on this class of machine; the
   target is a tenth of that.
2. The Local Model (bundled Gemma 3 270M): load time, time to first token, time to a tool decision.
3. Stop: time from abort to the end of an in-flight HTTP stream and of a local generation
   (target 200 ms).
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ToolSpec
from engine.executor import Engine
from engine.registry import builtin_registry
from nodes.triggers.chat_trigger import chat_item
from tests.nodes.models.model_workflows import OPENAI, with_model
from tests.peers.http_peer import Step
from tests.peers.openai_peer import OpenAIPeer

ROOT = Path(__file__).parents[2]
REPEATS = 7
N8N_MS = (4.0, 11.0)
TARGET_FRACTION = 0.1
STOP_TARGET_MS = 200.0


def start_peer(rounds: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "tests.peers.openai_peer", "--rounds", str(rounds)],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def stop_peer(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def agent_iterations(rounds: int, streaming: bool) -> tuple[float, float, float]:
    """(best wall ms, median wall ms, best CPU ms of this process) per model call."""
    proc, url = start_peer(rounds)
    params = {"model": "peer-model", "options": {"baseURL": url, "streaming": streaming}}
    workflow = with_model(OPENAI, params, agent_options={"maxIterations": rounds + 5})
    engine = Engine(builtin_registry())
    loop = asyncio.new_event_loop()
    calls = rounds + 1

    def run_once() -> None:
        state = loop.run_until_complete(engine.run(workflow, start="Chat", items=[chat_item("go", "bench")]))
        assert state.status == "success", state.error
        assert len(state.run_data["Calculator"]) == rounds

    try:
        run_once()  # warm up: connection, imports
        walls, cpus = [], []
        for _ in range(REPEATS):
            gc.collect()
            wall0, cpu0 = time.perf_counter(), time.process_time()
            run_once()
            walls.append((time.perf_counter() - wall0) * 1000.0 / calls)
            cpus.append((time.process_time() - cpu0) * 1000.0 / calls)
        return min(walls), statistics.median(walls), min(cpus)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        stop_peer(proc)


def httpx_floor() -> float:
    """CPU ms of one bare httpx POST to the same peer: the floor under any node built on httpx."""
    import httpx

    proc, url = start_peer(10**6)
    body = {"model": "peer-model", "messages": [{"role": "user", "content": "go"}], "stream": False}

    async def measure() -> float:
        async with httpx.AsyncClient(trust_env=False) as client:
            for _ in range(30):
                (await client.post(url + "/chat/completions", json=body)).json()
            best = float("inf")
            for _ in range(REPEATS):
                cpu0 = time.process_time()
                for _ in range(100):
                    (await client.post(url + "/chat/completions", json=body)).json()
                best = min(best, (time.process_time() - cpu0) * 10.0)
            return best

    try:
        return asyncio.run(measure())
    finally:
        stop_peer(proc)


async def http_stop_latency() -> float:
    """ms from abort to the end of a run whose model reply is still streaming."""
    with OpenAIPeer([Step("trickle")]) as peer:
        params = {"model": peer.model, "options": {"baseURL": peer.base_url}}
        workflow = with_model(OPENAI, params, tools=[])
        signal = AbortSignal()
        engine = Engine(builtin_registry())
        task = asyncio.create_task(engine.create(workflow, start="Chat", items=[chat_item("go", "s")], signal=signal).run())
        await asyncio.get_running_loop().run_in_executor(None, peer.answering.wait, 10)
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        signal.abort()
        state = await task
        elapsed = (time.perf_counter() - started) * 1000.0
        assert state.status == "cancelled"
        assert await asyncio.get_running_loop().run_in_executor(None, peer.closed.wait, 5)
        return elapsed


async def local_model_figures() -> dict[str, float] | None:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return None
    from nodes.models._llama_runtime import default_threads, loaded_model
    from nodes.models.local_model import LocalChat, LocalParams

    threads = default_threads()
    started = time.perf_counter()
    model = await asyncio.wrap_future(loaded_model("", 4096, threads))
    figures = {"load_ms": (time.perf_counter() - started) * 1000.0, "threads": float(threads)}
    chat = LocalChat(LocalParams.model_validate({"options": {"temperature": 0, "maxTokens": 32}}), "Local Model")
    messages = [ChatMessage(role="system", content="You are a helpful assistant"),
                ChatMessage(role="user", content="Write a long story about a cat.")]

    ttfts = []
    for _ in range(3):
        first: list[float] = []
        t0 = time.perf_counter()
        await chat.invoke(messages, [], AbortSignal(), lambda _t: first or first.append(time.perf_counter()))
        ttfts.append(((first[0] if first else time.perf_counter()) - t0) * 1000.0)
    figures["ttft_ms"] = min(ttfts)

    calc = ToolSpec(name="Calculator", description="Useful for getting the result of a math expression.",
                    parameters={"type": "object", "required": ["expression"],
                                "properties": {"expression": {"type": "string", "description": "The expression, e.g. 17 * 25"}}})
    question = [ChatMessage(role="system", content="You are a helpful assistant. Use the calculator for arithmetic."),
                ChatMessage(role="user", content="What is 17 * 25? Use the calculator.")]
    t0 = time.perf_counter()
    reply = await chat.invoke(question, [calc], AbortSignal(), lambda _t: None)
    figures["tool_decision_ms"] = (time.perf_counter() - t0) * 1000.0
    figures["tool_called"] = float(bool(reply.tool_calls))

    # Stop during a long prompt evaluation, then during token generation
    long_chat = LocalChat(LocalParams.model_validate({"options": {"temperature": 0, "maxTokens": 400}}), "Local Model")
    long_prompt = [ChatMessage(role="user", content="Summarize: " + "the cat sat on the mat. " * 300)]
    for key, wait_for_token in (("stop_prompt_ms", False), ("stop_tokens_ms", True)):
        signal = AbortSignal()
        token = asyncio.Event()
        prompt = long_prompt if not wait_for_token else messages
        task = asyncio.create_task(long_chat.invoke(prompt, [], signal, lambda _t: token.set()))
        while model.current is None:
            await asyncio.sleep(0.001)
        if wait_for_token:
            await token.wait()
        started = time.perf_counter()
        signal.abort()
        try:
            await task
            stopped = task.done() and not task.cancelled()
        except asyncio.CancelledError:
            stopped = True
        figures[key] = (time.perf_counter() - started) * 1000.0 if stopped else float("nan")
    return figures


def main() -> None:
    low, high = N8N_MS
    print("agent on the OpenAI Chat Model node, loopback Chat Completions peer in its own process")
    print(f"n8n 1.123: {low:g}-{high:g} ms per iteration; target: a tenth ({low * TARGET_FRACTION:g}-{high * TARGET_FRACTION:g} ms)")
    for streaming in (True, False):
        for rounds in (1, 21):
            best, median, cpu = agent_iterations(rounds, streaming)
            label = f"{rounds:2d} tool round{'s' if rounds > 1 else ' '}, {'streamed' if streaming else 'whole   '}"
            print(f"  {label}: {best:6.2f} ms/iteration best, {median:6.2f} median, {cpu:6.2f} ms CPU in-process"
                  f" | vs n8n {best / low:.2f}x-{best / high:.2f}x"
                  f" | vs target {best / (low * TARGET_FRACTION):.1f}x-{best / (high * TARGET_FRACTION):.1f}x")
    print(f"  reference: one bare httpx POST to the same peer costs {httpx_floor():.2f} ms CPU in-process")
    http_stop = asyncio.run(http_stop_latency())
    print(f"Stop during a streamed HTTP reply: {http_stop:.1f} ms (target {STOP_TARGET_MS:g} ms, ratio {http_stop / STOP_TARGET_MS:.2f})")
    local = asyncio.run(local_model_figures())
    if local is None:
        print("Local Model: llama-cpp-python is not installed (pip install 'mini-n8n[local]')")
        return
    print("Local Model (bundled Gemma 3 270M Q4_K_M, llama.cpp in process, "
          f"{local['threads']:.0f} of {os.cpu_count()} cores)")
    print(f"  load: {local['load_ms']:.0f} ms")
    print(f"  time to first token (short prompt, no tools): {local['ttft_ms']:.0f} ms")
    print(f"  time to a tool decision (grammar-bound, see bench_local_model): {local['tool_decision_ms']:.0f} ms"
          f" ({'a tool call' if local['tool_called'] else 'no tool call'})")
    for key, what in (("stop_prompt_ms", "during prompt evaluation"), ("stop_tokens_ms", "during token generation")):
        print(f"  Stop {what}: {local[key]:.1f} ms (target {STOP_TARGET_MS:g} ms, ratio {local[key] / STOP_TARGET_MS:.2f})")


if __name__ == "__main__":
    main()
