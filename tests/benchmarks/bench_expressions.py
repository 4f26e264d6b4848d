"""Cost of n8n expressions: 10,000 simple and 10,000 complex evaluations, and an agent iteration
whose parameters hold a few expressions next to the same agent without any.

Target: the `$json` reads workflows had before JavaScript expressions (`{{ $json.chatInput }}`)
cost at most 20 % more per agent iteration than no expressions; the figure for JavaScript
expressions (string methods, `$now.toFormat`) is printed beside it. Variants are interleaved
and repeated (`--quick` or BENCH_QUICK=1: three times instead of five); min/median/max and the
load average are printed.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import sys
import time
from typing import Any, Callable

from engine.executor import Engine
from engine.expressions import Scope, resolve_parameters
from engine.registry import builtin_registry
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call

EVALUATIONS = 10_000
REPEATS = 3 if "--quick" in sys.argv or os.environ.get("BENCH_QUICK") == "1" else 5
ROUNDS = 30
TARGET_OVERHEAD = 1.20

SIMPLE = {"value": "={{ $json.x }}"}
SIMPLE_VIA_ENGINE = {"value": "={{ ($json.x) }}"}  # the same read, kept from the Python fast path
COMPLEX = {"value": "={{ $json.list.filter(v => v % 2).map(v => v * 2).sum() + $json.name.toTitleCase().length }}"}
AGENT_JSON_READS = {
    "promptType": "define",
    "text": "={{ $json.chatInput }}",
    "options": {"systemMessage": "=You help {{ $json.sessionId }} on {{ $json.chatInput }}.", "maxIterations": ROUNDS + 5},
}
AGENT_EXPRESSIONS = {
    "promptType": "define",
    "text": "={{ $json.chatInput.trim() }}",
    "options": {"systemMessage": "=You help {{ $json.sessionId.toUpperCase() }} on {{ $now.toFormat('cccc') }}.",
                "maxIterations": ROUNDS + 5},
}
AGENT_PLAIN = {"promptType": "define", "text": "go",
               "options": {"systemMessage": "You help BENCH on Monday.", "maxIterations": ROUNDS + 5}}


def per_evaluation_us(params: dict[str, Any]) -> Callable[[], float]:
    items = [{"json": {"x": i, "name": "ada lovelace", "list": list(range(10))}} for i in range(EVALUATIONS)]

    def run() -> float:
        scope = Scope(items=items)
        started = time.perf_counter()
        for index in range(EVALUATIONS):
            resolve_parameters(params, scope=scope, item_index=index)
        return (time.perf_counter() - started) * 1e6 / EVALUATIONS

    return run


def per_iteration_ms(agent_params: dict[str, Any]) -> Callable[[], float]:
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} * 2"})]} for i in range(ROUNDS)]
    replies.append({"text": "done"})
    workflow = agent_workflow(replies, agent_params=agent_params)
    engine = Engine(builtin_registry())
    loop = asyncio.new_event_loop()

    def run() -> float:
        started = time.perf_counter()
        state = loop.run_until_complete(engine.run(workflow, items=[chat_item("go", "bench")]))
        elapsed = (time.perf_counter() - started) * 1000.0 / (ROUNDS + 1)
        assert state.status == "success", state.error
        return elapsed

    run()  # warm up (and start the engine's JavaScript context)
    return run


def interleaved(variants: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(REPEATS):
        for name, run in variants.items():
            gc.collect()
            times[name].append(run())
    return times


def show(name: str, values: list[float], unit: str) -> None:
    print(f"{name:<44} min {min(values):8.3f}  median {statistics.median(values):8.3f}  max {max(values):8.3f} {unit}")


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f}; {EVALUATIONS} evaluations per figure, {REPEATS} repeats, interleaved")
    evaluations = interleaved({
        "simple {{ $json.x }} (fast path)": per_evaluation_us(SIMPLE),
        "simple {{ ($json.x) }} (in the engine)": per_evaluation_us(SIMPLE_VIA_ENGINE),
        "complex (filter/map/sum/toTitleCase)": per_evaluation_us(COMPLEX),
    })
    for name, values in evaluations.items():
        show(name, values, "us per evaluation")
    for name, values in evaluations.items():
        print(f"{name:<44} {min(values) * EVALUATIONS / 1e6:.3f} s for {EVALUATIONS} evaluations (best)")
    iterations = interleaved({
        "agent iteration, no expressions": per_iteration_ms(AGENT_PLAIN),
        "agent iteration, 3 $json reads": per_iteration_ms(AGENT_JSON_READS),
        "agent iteration, 3 JavaScript segments": per_iteration_ms(AGENT_EXPRESSIONS),
    })
    for name, values in iterations.items():
        show(name, values, "ms per iteration")
    plain, reads, javascript = (min(v) for v in iterations.values())
    verdict = "met" if reads / plain <= TARGET_OVERHEAD else "NOT met"
    print(f"ratio $json reads / none = {reads / plain:.3f} (target <= {TARGET_OVERHEAD}: {verdict})")
    print(f"ratio JavaScript segments / none = {javascript / plain:.3f} (for information)")


if __name__ == "__main__":
    main()
