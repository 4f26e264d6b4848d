"""The Local Model (bundled Gemma 3 270M, llama.cpp in process) on 20 one-step tool tasks.

Measured with one core kept busy by a spinning process (the machine is 2 cores; llama.cpp uses
half of them): the time to a tool decision (target 2 s), the time to the first token of the
answer after the tool's result (target 0.5 s), min/median/max, and how many tasks got the right
tool with the right arguments (an expression that evaluates to the expected number; target 18
of 20), with the example workflow's settings (Tool Choice "required"). Peer in the same run:
llama-cpp-python's own `chatml-function-calling` tool format on the same loaded model, on the
first PEER_TASKS tasks. Quick mode (`--quick`): every other task (10 of the 20, the right calls
judged against the same share of the target), each answer stopped at its first token, and the
peer runs one task.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ModelReply, ToolSpec
from nodes.tools.calculator import DESCRIPTION as CALCULATOR_DESCRIPTION
from nodes.tools.safe_math import MathError, evaluate, format_number
from nodes.tools.think import DESCRIPTION as THINK_DESCRIPTION

DECISION_TARGET_MS = 2000.0
FIRST_TOKEN_TARGET_MS = 500.0
RIGHT_TARGET = 18
PEER_TASKS = 3
SYSTEM = "You are a helpful assistant. Use the calculator for arithmetic, then answer in one short sentence."
TOOLS = [
    ToolSpec(name="Calculator", description=CALCULATOR_DESCRIPTION,
             parameters={"type": "object", "required": ["expression"],
                         "properties": {"expression": {"type": "string", "description": "The expression, e.g. 17 * 25"}}}),
    ToolSpec(name="thinking_tool", description=THINK_DESCRIPTION,
             parameters={"type": "object", "required": ["input"],
                         "properties": {"input": {"type": "string", "description": "The thought to write down"}}}),
]
TASKS: list[tuple[str, float]] = [
    ("What is 17 * 25?", 425), ("What is 123 + 456?", 579), ("What is 1000 - 357?", 643), ("What is 84 / 4?", 21),
    ("What is 12 * 12?", 144), ("What is 250 + 75?", 325), ("What is 99 * 3?", 297), ("What is 45 * 11?", 495),
    ("What is 7 * 8 * 9?", 504), ("What is 3.5 * 4?", 14), ("What is 1024 / 16?", 64), ("What is 365 * 24?", 8760),
    ("What is 81 - 19?", 62), ("What is (12 + 8) * 5?", 100), ("What is 600 / 25?", 24), ("What is 13 * 17?", 221),
    ("What is 4096 - 1024?", 3072), ("What is 19 + 23 + 58?", 100), ("How much is 6 times 7?", 42),
    ("What is 150 divided by 6?", 25),
]


def right_call(reply: ModelReply, expected: float) -> bool:
    if len(reply.tool_calls) != 1 or reply.tool_calls[0].name != "Calculator":
        return False
    args = reply.tool_calls[0].args
    expression = args.get("expression") if isinstance(args, dict) else None
    try:
        return isinstance(expression, str) and abs(float(evaluate(expression)) - expected) < 1e-9
    except (MathError, ValueError, TypeError):
        return False


def spread(values: list[float]) -> str:
    if not values:
        return "no samples"
    return f"min {min(values):.0f} / median {statistics.median(values):.0f} / max {max(values):.0f} ms (n={len(values)})"


def tasks(quick: bool) -> list[tuple[str, float]]:
    """The tasks measured: all, or every other one in quick mode."""
    return TASKS[::2] if quick else TASKS


async def ours(quick: bool) -> dict[str, Any]:
    from nodes.models.local_model import LocalChat, LocalParams

    # the example workflow's settings: the bundled model is a base model that, left to choose, echoes
    # its prompt instead of calling a tool, so its first reply to a message must be a call
    options = {"temperature": 0, "maxTokens": 64, "toolChoice": "required"}
    chat = LocalChat(LocalParams.model_validate({"options": options}), "Local Model")
    cpu = await worker_cpu_clock()
    decisions, first_tokens, right = [], [], 0
    decisions_cpu: list[float] = []
    first_tokens_cpu: list[float] = []
    for question, expected in tasks(quick):
        messages = [ChatMessage(role="system", content=SYSTEM), ChatMessage(role="user", content=question)]
        t0, c0 = time.perf_counter(), cpu()
        reply = await chat.invoke(messages, TOOLS, AbortSignal(), lambda _t: None)
        decisions.append((time.perf_counter() - t0) * 1000.0)
        decisions_cpu.append(cpu() - c0)
        if not right_call(reply, expected):
            print(f"    wrong: {question!r} -> {reply.tool_calls[0].model_dump() if reply.tool_calls else reply.content!r}")
            continue
        right += 1
        call = reply.tool_calls[0]
        result = format_number(evaluate(call.args["expression"]))  # type: ignore[index]
        messages += [ChatMessage(role="assistant", content="", toolCalls=[call]),
                     ChatMessage(role="tool", content=result, toolCallId=call.id)]
        first: list[float] = []
        first_cpu: list[float] = []
        signal = AbortSignal()

        def on_token(_text: str) -> None:
            if not first:
                first.append(time.perf_counter())
                first_cpu.append(cpu())
                if quick:
                    signal.abort()

        t0, c0 = time.perf_counter(), cpu()
        try:
            answer = await chat.invoke(messages, TOOLS, signal, on_token)
            assert answer.content.strip() and not answer.tool_calls
        except asyncio.CancelledError:
            assert quick and first, "the answer stopped before its first token"
        first_tokens.append(((first[0] if first else time.perf_counter()) - t0) * 1000.0)
        first_tokens_cpu.append((first_cpu[0] if first_cpu else cpu()) - c0)
    return {"decisions": decisions, "first_tokens": first_tokens, "right": right,
            "decisions_cpu": decisions_cpu, "first_tokens_cpu": first_tokens_cpu}


async def worker_cpu_clock() -> Any:
    """Milliseconds of CPU the model's worker thread has used, readable from any thread: what a
    step costs whatever else the machine runs (llama.cpp computes on that thread when it has one)."""
    import threading

    from nodes.models._llama_runtime import default_threads, loaded_model

    model = await asyncio.wrap_future(loaded_model("", 4096, default_threads()))
    ident = await asyncio.get_running_loop().run_in_executor(model.executor, threading.get_ident)
    clock = time.pthread_getcpuclockid(ident)
    return lambda: time.clock_gettime(clock) * 1000.0


async def peer(count: int) -> dict[str, Any]:
    """llama-cpp-python's chatml-function-calling handler on the same model and worker thread."""
    from llama_cpp.llama_chat_format import get_chat_completion_handler

    from nodes.models._llama_runtime import default_threads, loaded_model
    from nodes.models._openai_wire import reply_from_completion, to_wire_tools

    model = await asyncio.wrap_future(loaded_model("", 4096, default_threads()))
    handler = get_chat_completion_handler("chatml-function-calling")
    decisions, right = [], 0
    for question, expected in TASKS[:count]:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]

        def decide() -> dict[str, Any]:
            from llama_cpp import LogitsProcessorList

            sampled = [0]

            def cap(_ids: Any, scores: Any) -> Any:  # the handler writes tool arguments without a limit
                sampled[0] += 1
                if sampled[0] > 64:
                    scores[:] = -float("inf")
                    scores[model.llama.token_eos()] = 0.0
                return scores

            return handler(llama=model.llama, messages=messages, tools=to_wire_tools(TOOLS), tool_choice="auto",
                           temperature=0, max_tokens=64, logits_processor=LogitsProcessorList([cap]))

        t0 = time.perf_counter()
        doc = await asyncio.get_running_loop().run_in_executor(model.executor, decide)
        decisions.append((time.perf_counter() - t0) * 1000.0)
        reply = reply_from_completion(doc) or ModelReply()
        right += right_call(reply, expected)
    return {"decisions": decisions, "right": right}


def main() -> None:
    quick = "--quick" in sys.argv[1:] or os.environ.get("BENCH_QUICK") == "1"
    peer_tasks = 1 if quick else PEER_TASKS
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        print("Local Model: llama-cpp-python is not installed (pip install 'mini-n8n[local]')")
        return
    from nodes.models._llama_runtime import default_threads, loaded_model

    threads = default_threads()
    t0 = time.perf_counter()
    loaded_model("", 4096, threads).result()
    print(f"Local Model: bundled Gemma 3 270M Q4_K_M, {threads} thread(s) of {os.cpu_count()} cores, "
          f"loaded in {(time.perf_counter() - t0) * 1000.0:.0f} ms")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        print(f"  one core kept busy by a spinning process; load average {os.getloadavg()[0]:.1f}")
        figures = asyncio.run(ours(quick))
        theirs = asyncio.run(peer(peer_tasks))
        load = os.getloadavg()[0]
    finally:
        busy.kill()
        busy.wait()
    decisions, first_tokens = figures["decisions"], figures["first_tokens"]
    print(f"  tool decision: {spread(decisions)}; target {DECISION_TARGET_MS:.0f} ms, "
          f"median/target {statistics.median(decisions) / DECISION_TARGET_MS:.2f}")
    print(f"    CPU of the model's thread: {spread(figures['decisions_cpu'])}")
    if first_tokens:
        print(f"  first answer token after the tool result: {spread(first_tokens)}; target {FIRST_TOKEN_TARGET_MS:.0f} ms, "
              f"median/target {statistics.median(first_tokens) / FIRST_TOKEN_TARGET_MS:.2f}")
        print(f"    CPU of the model's thread: {spread(figures['first_tokens_cpu'])}")
    measured = len(tasks(quick))
    target = RIGHT_TARGET * measured / len(TASKS)
    print(f"  right tool with right arguments: {figures['right']} of {measured} (target {target:g})"
          + ("" if figures["right"] >= target else " NOT met"))
    peer_decisions = theirs["decisions"]
    print(f"  peer, chatml-function-calling (first {peer_tasks} tasks): decision {spread(peer_decisions)}; "
          f"right {theirs['right']} of {peer_tasks}")
    ours_first = statistics.median(decisions[:peer_tasks])
    print(f"  decision median, same {peer_tasks} tasks: ours {ours_first:.0f} ms vs peer "
          f"{statistics.median(peer_decisions):.0f} ms, ratio {ours_first / statistics.median(peer_decisions):.2f}")
    print(f"  load average at the end: {load:.1f}")


if __name__ == "__main__":
    main()
