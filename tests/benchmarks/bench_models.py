"""Real model nodes: HTTP cost per call, agent iteration cost over loopback HTTP against n8n, the
embedded model's latency, Stop. `--quick` (or $BENCH_QUICK=1) runs fewer repeats, n8n once, the
agent at 21 tool rounds only, one first-token try and leaves the tool decision to bench_local_model (it
says so).

1. HTTP layer: one Chat Completions call through the OpenAI Chat Model node against the same
   call made bare on the connections the node is built on (nodes/models/_http1.py: the floor),
   CPU time in this process, interleaved; target: at most 1.5x the floor, as the median of the
   ratios of the two measured back to back in each repeat (and the ratio of the medians). Printed beside it: the
   same bare call with aiohttp (when installed: the bench extra), httpcore's pool on asyncio
   streams and httpx, the clients weighed against it.
2. An agent on the OpenAI Chat Model node against a loopback Chat Completions peer (its own
   process) that answers at once: 1 and 21 tool rounds. One iteration is a model request over
   HTTP, a Calculator run and the Agent's resume; the figure is wall time per model call. The
   peer is real n8n running the same workflow against the same server, measured in the same
   run when it is installed (n8n_live.py), its executions interleaved with our runs (a machine
   whose speed drifts moves both), else its last recorded figure, said as such.
   Target: a tenth of n8n's.
3. The Local Model (bundled Gemma 3 270M): load time, time to first token, time to a tool decision.
4. Stop: time from abort to the end of an in-flight HTTP stream and of a local generation
   (target 200 ms).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ToolSpec
from engine.executor import Engine
from engine.registry import builtin_registry
from nodes.models.openai_chat import OpenAIParams, chat_model
from nodes.triggers.chat_trigger import chat_item
from tests.benchmarks import n8n_live
from tests.nodes.models.model_workflows import OPENAI, with_model
from tests.peers.http_peer import Step
from tests.peers.openai_peer import OpenAIPeer

ROOT = Path(__file__).parents[2]
QUICK = "--quick" in sys.argv or os.environ.get("BENCH_QUICK") == "1"
REPEATS = 3 if QUICK else 7
HTTP_REPEATS = 6 if QUICK else 15  # the HTTP layer is cheap (a few seconds): enough rounds for a steady median
HTTP_CALLS = 100 if QUICK else 200  # a call is 0.1-1 ms: enough of them for a steady figure
RUNS_PER_SAMPLE = 5  # our runs each time n8n runs once
N8N_RUNS = 1 if QUICK else 3  # n8n executions (each starts n8n: seconds), interleaved with our runs
N8N_ROUNDS = 21
TARGET_FRACTION = 0.1
FLOOR_TARGET = 1.5
STOP_TARGET_MS = 200.0
CALCULATOR = ToolSpec(name="Calculator", description="Useful for getting the result of a math expression.",
                      parameters={"type": "object", "required": ["expression"],
                                  "properties": {"expression": {"type": "string"}}})


def spread(values: list[float]) -> str:
    return f"{min(values):.3f}/{statistics.median(values):.3f}/{max(values):.3f}"


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


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


class AgentSide:
    """Our agent on the OpenAI Chat Model node against `url`: set up and warmed once (connection,
    imports), then run as often as the interleaving asks."""

    def __init__(self, url: str, rounds: int, streaming: bool) -> None:
        params = {"model": "peer-model", "options": {"baseURL": url, "streaming": streaming}}
        self.rounds, self.streaming = rounds, streaming
        self.workflow = with_model(OPENAI, params, agent_options={"maxIterations": rounds + 5})
        self.engine = Engine(builtin_registry())
        self.loop = asyncio.new_event_loop()
        self.walls: list[float] = []  # ms per model call, one per run
        self.cpus: list[float] = []
        self._run()  # warm up

    @property
    def label(self) -> str:
        return f"{self.rounds:2d} tool round{'s' if self.rounds > 1 else ' '}, {'streamed' if self.streaming else 'whole   '}"

    def _run(self) -> None:
        state = self.loop.run_until_complete(self.engine.run(self.workflow, start="Chat", items=[chat_item("go", "bench")]))
        assert state.status == "success", state.error
        assert len(state.run_data["Calculator"]) == self.rounds

    def sample(self) -> None:
        """RUNS_PER_SAMPLE runs, each a figure: a run of 22 calls lasts tens of ms, one hiccup of
        the machine would be a sample's whole difference."""
        calls = self.rounds + 1
        for _ in range(RUNS_PER_SAMPLE):
            gc.collect()
            wall0, cpu0 = time.perf_counter(), time.process_time()
            self._run()
            self.walls.append((time.perf_counter() - wall0) * 1000.0 / calls)
            self.cpus.append((time.process_time() - cpu0) * 1000.0 / calls)

    def close(self) -> None:
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()


def agent_figures() -> tuple[list[float], str, list[AgentSide]]:
    """n8n's ms per iteration and ours, interleaved: each repeat runs n8n once (when installed and
    while N8N_RUNS last) and then each of our agents once, all against one peer."""
    binary = n8n_live.n8n_binary()
    peers = {rounds: start_peer(rounds) for rounds in ((N8N_ROUNDS,) if QUICK else (1, N8N_ROUNDS))}  # a policy per length
    runner = None
    sides: list[AgentSide] = []
    try:
        runner = n8n_live.N8nRunner(binary, peers[N8N_ROUNDS][1], N8N_ROUNDS) if binary is not None else None
        sides = [AgentSide(url, rounds, streaming) for streaming in (True, False) for rounds, (_proc, url) in peers.items()]
        n8n_ms: list[float] = []
        for repeat in range(max(REPEATS, N8N_RUNS)):
            if runner is not None and repeat < N8N_RUNS:
                n8n_ms.append(runner.ms_per_iteration())
            if repeat < REPEATS:
                for side in sides:
                    side.sample()
    finally:
        for side in sides:
            side.close()
        if runner is not None:
            runner.close()
        for proc, _url in peers.values():
            stop_peer(proc)
    if runner is None:
        rec = n8n_live.recorded()
        low, high = rec["ms_per_iteration"]["min"], rec["ms_per_iteration"]["max"]
        return [low, high], f"n8n {rec['n8n']}, RECORDED {rec['recorded']} (n8n is not installed at {n8n_live.n8n_dir()})", sides
    return n8n_ms, f"n8n {n8n_live.version()}, measured now, interleaved with ours", sides


async def http_layer(url: str) -> dict[str, list[float]]:
    """CPU ms per call, per repeat: the floor (the node's connections, bare), bare aiohttp, bare
    httpcore, bare httpx and the node, whole and streamed, interleaved."""
    import httpcore
    import httpx

    from nodes.asyncio_network import AsyncioBackend
    from nodes.http_transport import tls_context
    from nodes.models._http1 import Http1Pool

    try:
        import aiohttp
    except ImportError:
        aiohttp = None
    messages = [ChatMessage(role="system", content="You are a helpful assistant"), ChatMessage(role="user", content="go")]
    figures: dict[str, list[float]] = {}
    nodes = {streaming: chat_model(OpenAIParams.model_validate({"model": "peer-model", "options": {"baseURL": url, "streaming": streaming}}),
                                   {}, None, "Model") for streaming in (False, True)}
    body = {"model": "peer-model", "messages": [{"role": m.role, "content": m.content} for m in messages],
            "tools": [{"type": "function", "function": {"name": "Calculator", "description": CALCULATOR.description,
                                                        "parameters": CALCULATOR.parameters}}], "tool_choice": "auto"}

    json_headers = {"Content-Type": "application/json"}
    parsed = httpx.URL(url + "/chat/completions")
    server = (parsed.host, parsed.port or 80, False)

    head = f"POST {parsed.raw_path.decode()} HTTP/1.1\r\nHost: {parsed.netloc.decode()}\r\nContent-Type: application/json\r\n"
    whole_body, streamed_body = {**body, "stream": False}, {**body, "stream": True, "stream_options": {"include_usage": True}}

    def request_bytes(value: dict[str, object]) -> bytes:
        """The request as a bare call makes it: the body encoded (orjson: the fastest), the head around it."""
        content = orjson.dumps(value)
        return f"{head}Content-Length: {len(content)}\r\n\r\n".encode() + content

    def parse_lines(rest: bytes, chunk: bytes) -> bytes:
        *complete, rest = (rest + chunk).split(b"\n")
        for raw in complete:
            line = raw.rstrip(b"\r")
            if line.startswith(b"data: ") and line != b"data: [DONE]":
                orjson.loads(line[6:])
        return rest

    floor_pool = Http1Pool(keepalive_s=5.0, max_connections=100)
    async with httpx.AsyncClient(trust_env=False) as client, \
            httpcore.AsyncConnectionPool(network_backend=AsyncioBackend()) as pool:
        session = aiohttp.ClientSession(auto_decompress=False) if aiohttp is not None else None

        async def floor_whole() -> None:
            conn = await floor_pool.request(server, request_bytes(whole_body), tls_context)
            orjson.loads(b"".join([chunk async for chunk in conn.body()]))
            floor_pool.release(conn)

        async def floor_streamed() -> None:
            conn = await floor_pool.request(server, request_bytes(streamed_body), tls_context)
            rest = b""
            async for chunk in conn.body():
                rest = parse_lines(rest, chunk)
            floor_pool.release(conn)

        async def aiohttp_whole() -> None:
            assert session is not None
            async with session.post(url + "/chat/completions", data=orjson.dumps(whole_body), headers=json_headers) as response:
                orjson.loads(await response.read())

        async def aiohttp_streamed() -> None:
            assert session is not None
            async with session.post(url + "/chat/completions", data=orjson.dumps(streamed_body), headers=json_headers) as response:
                rest = b""
                async for chunk in response.content.iter_any():
                    rest = parse_lines(rest, chunk)

        async def httpcore_whole() -> None:
            response = await pool.request("POST", url + "/chat/completions", content=orjson.dumps(whole_body), headers=json_headers)
            orjson.loads(response.content)

        async def httpcore_streamed() -> None:
            async with pool.stream("POST", url + "/chat/completions", content=orjson.dumps(streamed_body), headers=json_headers) as response:
                rest = b""
                async for chunk in response.aiter_stream():
                    rest = parse_lines(rest, chunk)

        async def httpx_whole() -> None:
            (await client.post(url + "/chat/completions", json={**body, "stream": False})).json()

        async def httpx_streamed() -> None:
            streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
            async with client.stream("POST", url + "/chat/completions", json=streamed) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]":
                        json.loads(line[6:])

        async def node_whole() -> None:
            await nodes[False].invoke(messages, [CALCULATOR], AbortSignal())

        async def node_streamed() -> None:
            await nodes[True].invoke(messages, [CALCULATOR], AbortSignal(), lambda _t: None)

        calls = {"floor whole": floor_whole, "node whole": node_whole, "aiohttp whole": aiohttp_whole,
                 "httpcore whole": httpcore_whole, "httpx whole": httpx_whole, "floor streamed": floor_streamed,
                 "node streamed": node_streamed, "aiohttp streamed": aiohttp_streamed,
                 "httpcore streamed": httpcore_streamed, "httpx streamed": httpx_streamed}
        if session is None:
            calls = {key: call for key, call in calls.items() if not key.startswith("aiohttp")}
        try:
            for call in calls.values():  # warm up: connections, imports
                for _ in range(10):
                    await call()
            for _ in range(HTTP_REPEATS):
                for key, call in calls.items():
                    gc.collect()
                    cpu0, wall0 = time.process_time(), time.perf_counter()
                    for _ in range(HTTP_CALLS):
                        await call()
                    figures.setdefault(key, []).append((time.process_time() - cpu0) * 1000.0 / HTTP_CALLS)
                    figures.setdefault(f"{key} wall", []).append((time.perf_counter() - wall0) * 1000.0 / HTTP_CALLS)
        finally:
            floor_pool.close()
            if session is not None:
                await session.close()
    return figures


def print_http_layer() -> None:
    proc, url = start_peer(10**6)  # answers every call with a Calculator call
    try:
        figures = asyncio.run(http_layer(url))
    finally:
        stop_peer(proc)
    print(f"HTTP layer: one Chat Completions call, CPU ms in this process, min/median/max of {HTTP_REPEATS} interleaved runs"
          f" of {HTTP_CALLS} calls (load average {load_average()})")
    others = [(name, what) for name, what in (("aiohttp", "aiohttp"), ("httpcore", "httpcore's pool on asyncio streams"),
                                              ("httpx", "httpx")) if f"{name} whole" in figures]
    for mode in ("whole", "streamed"):
        floor, node = figures[f"floor {mode}"], figures[f"node {mode}"]
        ratio = statistics.median(node) / statistics.median(floor)
        # each repeat measures the floor and then the node back to back: a pair shares the VM's speed of the moment
        paired = statistics.median(n / f for n, f in zip(node, floor))
        print(f"  {mode:8s}: bare request on the node's connections (the floor) {spread(floor)} | OpenAI Chat Model node {spread(node)}"
              f" | ratio of medians {ratio:.2f}, median of {len(node)} back-to-back pairs {paired:.2f}"
              f" (target <= {FLOOR_TARGET:g}, {paired / FLOOR_TARGET:.2f} of target)")
        for name, what in others:
            other = figures[f"{name} {mode}"]
            print(f"  {'':8s}  bare {what} {spread(other)}: {statistics.median(other) / statistics.median(floor):.2f}x the floor"
                  f" (the node is {statistics.median(node) / statistics.median(other):.2f}x it)")
        if len(others) < 3:
            print(f"  {'':8s}  (aiohttp is not installed: pip install 'mini-n8n[bench]')")
        walls = [f"{name} {spread(figures[f'{name} {mode} wall'])}" for name in ("floor", "node", *(n for n, _w in others))]
        print(f"  {'':8s}  wall ms per call (the round trip, whatever the client's CPU): {', '.join(walls)}")


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
    for _ in range(1 if QUICK else 3):
        first: list[float] = []
        t0 = time.perf_counter()
        await chat.invoke(messages, [], AbortSignal(), lambda _t: first or first.append(time.perf_counter()))
        ttfts.append(((first[0] if first else time.perf_counter()) - t0) * 1000.0)
    figures["ttft_ms"] = min(ttfts)

    if not QUICK:  # bench_local_model measures tool decisions on its 20 tasks, in quick mode too
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
    print_http_layer()
    n8n_ms, source, sides = agent_figures()
    n8n_median = statistics.median(n8n_ms)
    print(f"agent on the OpenAI Chat Model node, loopback Chat Completions peer in its own process (load average {load_average()})")
    print(f"  n8n, same workflow and peer, {N8N_ROUNDS} tool rounds: {spread(n8n_ms)} ms per iteration [{source}]")
    print(f"  target: a tenth of n8n's median, {n8n_median * TARGET_FRACTION:.2f} ms")
    if QUICK:
        print(f"  (quick: {N8N_ROUNDS} tool rounds only)")
    for side in sides:
        median = statistics.median(side.walls)
        line = (f"  {side.label}: {spread(side.walls)} ms/iteration ({len(side.walls)} runs),"
                f" {statistics.median(side.cpus):6.2f} ms CPU in-process (median)")
        if side.rounds == N8N_ROUNDS:
            line += f" | vs n8n {median / n8n_median:.2f} | vs target {median / (n8n_median * TARGET_FRACTION):.2f}"
        else:  # n8n's figure is the time between model calls; a run this short is mostly its start and end
            line += f" (the whole run over its {side.rounds + 1} model calls: its start and end included; not the target's case)"
        print(line)
    http_stop = asyncio.run(http_stop_latency())
    print(f"Stop during a streamed HTTP reply: {http_stop:.1f} ms (target {STOP_TARGET_MS:g} ms, ratio {http_stop / STOP_TARGET_MS:.2f})")
    local = asyncio.run(local_model_figures())
    if local is None:
        print("Local Model: llama-cpp-python is not installed (pip install 'mini-n8n[local]')")
        return
    print("Local Model (bundled Gemma 3 270M Q4_K_M, llama.cpp in process, "
          f"{local['threads']:.0f} of {os.cpu_count()} cores)")
    print(f"  load: {local['load_ms']:.0f} ms")
    print(f"  time to first token (short prompt, no tools): {local['ttft_ms']:.0f} ms"
          f" ({'one try, quick' if QUICK else 'best of 3'})")
    if "tool_decision_ms" in local:
        print(f"  time to a tool decision (grammar-bound, see bench_local_model): {local['tool_decision_ms']:.0f} ms"
              f" ({'a tool call' if local['tool_called'] else 'no tool call'})")
    else:
        print("  time to a tool decision: left to bench_local_model (quick)")
    for key, what in (("stop_prompt_ms", "during prompt evaluation"), ("stop_tokens_ms", "during token generation")):
        print(f"  Stop {what}: {local[key]:.1f} ms (target {STOP_TARGET_MS:g} ms, ratio {local[key] / STOP_TARGET_MS:.2f})")


if __name__ == "__main__":
    main()
