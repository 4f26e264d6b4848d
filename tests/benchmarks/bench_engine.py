"""Engine cost and memory per agent iteration, next to LangGraph's prebuilt ReAct agent.

One iteration: a model call answered at once (scripted), one Calculator run, the Agent resumed
with the result, run data recorded. Both sides run N tool rounds then a final answer; figures are
CPU time per model call of the process that ran it (the machine is shared: wall time is printed
beside it), min/median/max over interleaved repeats. Ours runs in this process; for the cost
figures LangGraph runs in a process of its own (tests.benchmarks.peer_process), each side as its
users run it, their samples taking turns.

1. Cost per iteration in a 100-iteration run: ours, ours with the execution store (opened once,
   as the editor and a server keep theirs), LangGraph, LangGraph with its SQLite checkpointer
   (langgraph-checkpoint-sqlite, the peer of a durable run; a new database per run, as before).
   Ours gives five samples per round, the two settings taking turns, each peer once; with the
   store / without is printed by medians and as the median of the turns' back-to-back pairs. A
   sample of ours is a batch of as many runs as the store folds ends together, so that each
   holds one fold (single runs would leave the fold out of every median).
2. No growth: ours at 100 and 5,000 iterations in one run (quick: 2,500; target: at most 1.3
   times); the same with the execution store for an Agent with 20 items (5 and 250 rounds each,
   quick: 125: its model is called for each item in turn, so each model run is written as a delta
   from its own item's run before); and how LangGraph grows from 100 to 1,000 (it rewrites its
   whole message state every step).
3. Retained memory per iteration (tracemalloc, the finished run still held): ours at 1,000 and
   5,000 iterations (quick: 500 and 1,000; target: at most 20 KB, the same at both), alone and
   as an Agent with 20 items, LangGraph with and without its checkpointer (quick: without only).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sqlite3
import statistics
import tempfile
import time
import tracemalloc
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from engine.executor import Engine
from engine.registry import Registry, builtin_registry
from engine.store import ExecutionStore, Retention
from engine.store.sqlite_store import ENDS_FOLDED_TOGETHER
from engine.workflow import Workflow
from nodes.triggers.chat_trigger import chat_item
from tests.benchmarks.peer_process import PeerProcess
from tests.builders import agent_workflow, items_agent_workflow, tool_call

SHORT = 100
LONG = 5_000
GROWTH_TARGET = 1.3  # cost per iteration at LONG (quick: Settings.long) over that at SHORT
MEMORY_TARGET_KB = 20.0  # retained per iteration
SPEED_TARGET = 0.1  # ours at most a tenth of LangGraph's cost per iteration
STORE_TARGET = 1.5  # ours with the execution store at most 1.5 times ours without
OURS_PER_ROUND = 5  # samples of each of ours per interleaved round of the cost figures
RUNS_PER_SAMPLE = ENDS_FOLDED_TOGETHER  # runs in a sample of the cost figures: one fold of the ends in each


@dataclass(frozen=True)
class Settings:
    repeats: int  # interleaved rounds of the short runs
    long: int  # iterations of the long runs of the growth figures (the target's: LONG)
    long_repeats: int  # of the long runs
    peer_long: int  # LangGraph's long run, 0: none (it grows: LONG iterations would take minutes)
    peer_sqlite_long: int  # LangGraph with its SQLite checkpointer (grows faster still)
    memory_sizes: tuple[int, ...]  # ours
    peer_memory: int  # LangGraph's run measured for memory, without and with its checkpointer


FULL = Settings(repeats=5, long=LONG, long_repeats=3, peer_long=1_000, peer_sqlite_long=300, memory_sizes=(1_000, LONG), peer_memory=1_000)
QUICK = Settings(repeats=2, long=2_500, long_repeats=2, peer_long=0, peer_sqlite_long=0, memory_sizes=(500, 1_000), peer_memory=SHORT)


@dataclass(frozen=True)
class Sample:
    cpu_ms: float  # per model call
    wall_ms: float


Runner = Callable[[], Sample]


def measure(run: Callable[[], None], calls: int) -> Sample:
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return Sample((time.process_time() - cpu) * 1000.0 / calls, (time.perf_counter() - wall) * 1000.0 / calls)


# ----- ours ---------------------------------------------------------------------------------------
def scripted_workflow(rounds: int) -> Workflow:
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} * 2"})], "usage": {"promptTokens": 10, "completionTokens": 5}}
               for i in range(rounds)]
    replies.append({"text": "done", "usage": {"promptTokens": 10, "completionTokens": 1}})
    return agent_workflow(replies, agent_options={"maxIterations": rounds + 5})


def run_ours(registry: Registry, workflow: Workflow, rounds: int, store: ExecutionStore | None = None,
             chat: bool = True) -> Any:
    """One agent run of `rounds` tool rounds in all; the finished execution (its state and caches).
    `chat`: started by a chat message, else from its trigger's pinned items."""
    engine = Engine(registry, store=store)
    execution = engine.create(workflow, items=[chat_item("go", "bench")] if chat else None)
    loop = asyncio.new_event_loop()
    try:
        state = loop.run_until_complete(execution.run())
    finally:
        loop.close()
    assert state.status == "success", state.error
    assert len(state.run_data["Calculator"]) == rounds
    return execution


OPEN_STORES: list[ExecutionStore] = []  # closed by main() before their folder goes


def ours(rounds: int, folder: Path | None = None, runs: int = 1) -> Runner:
    """A runner of our agent; with `folder`, every run is written to an execution store there,
    opened once and kept open, as the editor and a server keep theirs (opening one is measured
    by bench_store and, for `mini-n8n run`, by bench_startup). A sample times `runs` runs."""
    registry, workflow = builtin_registry(), scripted_workflow(rounds)
    store = ExecutionStore(folder / "executions.sqlite", retention=Retention()) if folder is not None else None
    if store is not None:
        OPEN_STORES.append(store)

    def sample() -> Sample:
        def batch() -> None:
            for _ in range(runs):
                run_ours(registry, workflow, rounds, store)
        return measure(batch, runs * (rounds + 1))

    return sample


ITEMS = 20  # items of the Agent in the stored growth figure


def ours_items(items: int, rounds: int, folder: Path) -> Runner:
    """A runner of our Agent over `items` items, each run written to an execution store in `folder`."""
    registry, workflow = builtin_registry(), items_agent_workflow(items, rounds)
    store = ExecutionStore(folder / f"items-{items}x{rounds}.sqlite", retention=Retention())
    OPEN_STORES.append(store)
    return lambda: measure(lambda: run_ours(registry, workflow, items * rounds, store, chat=False), items * (rounds + 1))


# ----- LangGraph ----------------------------------------------------------------------------------
def langgraph(rounds: int, folder: Path | None = None) -> tuple[Runner, Callable[[], Any]] | None:
    """A runner of LangGraph's prebuilt ReAct agent doing our work (with `folder`: its SQLite
    checkpointer writing there), and a function running it once that returns what it retains."""
    try:
        from langchain_core.language_models.chat_models import BaseChatModel
        from langchain_core.messages import AIMessage
        from langchain_core.outputs import ChatGeneration, ChatResult
        from langchain_core.tools import tool
        from langgraph.prebuilt import create_react_agent
    except ImportError as exc:
        print(f"LangGraph is not installed ({exc}); `make bench` installs the bench extra")
        return None
    saver_type: Any = None
    if folder is not None:
        try:
            from langgraph.checkpoint.sqlite import SqliteSaver
        except ImportError as exc:
            print(f"langgraph-checkpoint-sqlite is not installed ({exc}); `make bench` installs the bench extra")
            return None
        saver_type = SqliteSaver

    from nodes.tools.safe_math import evaluate, format_number

    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression."""
        return format_number(evaluate(expression))

    class Scripted(BaseChatModel):
        """Answers at once: `rounds` tool calls, then a final answer."""

        rounds: int
        calls: int = 0

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> "Scripted":
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            n = self.calls
            self.calls += 1
            if n < self.rounds:
                message = AIMessage(content="", tool_calls=[{"name": "calculator", "args": {"expression": f"{n} * 2"}, "id": f"call_{n}"}],
                                    usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15})
            else:
                message = AIMessage(content="done", usage_metadata={"input_tokens": 10, "output_tokens": 1, "total_tokens": 11})
            return ChatResult(generations=[ChatGeneration(message=message)])

    runs = [0]

    def run_once() -> Any:
        runs[0] += 1
        config: dict[str, Any] = {"recursion_limit": 2 * rounds + 10}
        connection = saver = None
        if saver_type is not None:
            assert folder is not None
            connection = sqlite3.connect(folder / f"langgraph-{rounds}-{runs[0]}.sqlite", check_same_thread=False)
            saver = saver_type(connection)
            config["configurable"] = {"thread_id": "bench"}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_react_agent's deprecation notice
            agent = create_react_agent(Scripted(rounds=rounds), [calculator], checkpointer=saver)
        result = agent.invoke({"messages": [("user", "go")]}, config)
        assert result["messages"][-1].content == "done"
        return result, agent, saver, connection

    def sample() -> Sample:
        held: list[Any] = []
        try:
            return measure(lambda: held.append(run_once()), rounds + 1)
        finally:
            for *_rest, connection in held:
                if connection is not None:
                    connection.close()

    return sample, run_once


# ----- reporting ----------------------------------------------------------------------------------
def spread(samples: list[Sample]) -> tuple[float, float, float]:
    cpu = [s.cpu_ms for s in samples]
    return min(cpu), statistics.median(cpu), max(cpu)


def describe(label: str, samples: list[Sample]) -> str:
    low, mid, high = spread(samples)
    wall = statistics.median(s.wall_ms for s in samples)
    return f"  {label:<34} {low:7.3f} / {mid:7.3f} / {high:7.3f} ms CPU per iteration (min/median/max), wall median {wall:.3f}"


def verdict(ratio: float, target: float) -> str:
    return f"ratio to target {ratio / target:.2f}: {'met' if ratio <= target else 'NOT met'}"


def interleave(runners: dict[str, Runner], repeats: int, warm: bool = True, times: dict[str, int] | None = None) -> dict[str, list[Sample]]:
    """`repeats` rounds after one warm-up run each; a round runs `times[name]` samples of each
    runner (default 1), taking turns: a runner with more samples runs again once each of the
    others has had its turn."""
    if warm:
        for run in runners.values():
            run()
    counts = {name: (times or {}).get(name, 1) for name in runners}
    results: dict[str, list[Sample]] = {name: [] for name in runners}
    for _ in range(repeats):
        for turn in range(max(counts.values())):
            for name, run in runners.items():
                if turn < counts[name]:
                    results[name].append(run())
    return results


def load() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def retained_kb(run: Callable[[], Any]) -> float:
    """KB still allocated after `run` while what it returns is held (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = run()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del held
    return (after - before) / 1024.0


# ----- the three parts ----------------------------------------------------------------------------
def cost(settings: Settings, folder: Path) -> None:
    print(f"1. Cost per iteration, {SHORT}-iteration runs, {settings.repeats} interleaved rounds ({load()})")
    runners: dict[str, Runner] = {"mini-n8n": ours(SHORT, runs=RUNS_PER_SAMPLE),
                                  "mini-n8n, execution store": ours(SHORT, folder / "ours", runs=RUNS_PER_SAMPLE)}
    peers = {"LangGraph ReAct": PeerProcess(SHORT), "LangGraph ReAct, SqliteSaver": PeerProcess(SHORT, folder)}
    try:
        for name, peer in peers.items():
            if peer.unavailable is not None:
                print(peer.unavailable)
            else:
                runners[name] = lambda peer=peer: Sample(*peer.sample())
        # ours is over in a moment: five runs of each of ours per round (taking turns) against each peer run
        results = interleave(runners, settings.repeats, times={"mini-n8n": OURS_PER_ROUND, "mini-n8n, execution store": OURS_PER_ROUND})
    finally:
        for peer in peers.values():
            peer.close()
    for name, samples in results.items():
        print(describe(name, samples))
    mid = {name: spread(samples)[1] for name, samples in results.items()}
    ratio = mid["mini-n8n, execution store"] / mid["mini-n8n"]
    print(f"  mini-n8n with store / without = {ratio:.2f} by medians (target <= {STORE_TARGET}; {verdict(ratio, STORE_TARGET)})")
    # the two run in turns, one right after the other: a pair shares the machine's speed of the moment
    pairs = [stored.cpu_ms / plain.cpu_ms for plain, stored in zip(results["mini-n8n"], results["mini-n8n, execution store"])]
    ratio = statistics.median(pairs)
    print(f"  mini-n8n with store / without = {ratio:.2f} as the median of {len(pairs)} back-to-back pairs"
          f" (target <= {STORE_TARGET}; {verdict(ratio, STORE_TARGET)})")
    if "LangGraph ReAct" in mid:
        ratio = mid["mini-n8n"] / mid["LangGraph ReAct"]
        print(f"  mini-n8n / LangGraph = {ratio:.3f} (target <= {SPEED_TARGET}; {verdict(ratio, SPEED_TARGET)})")
    if "LangGraph ReAct, SqliteSaver" in mid:
        ratio = mid["mini-n8n, execution store"] / mid["LangGraph ReAct, SqliteSaver"]
        print(f"  mini-n8n with store / LangGraph with SqliteSaver = {ratio:.3f} (target <= {SPEED_TARGET}; {verdict(ratio, SPEED_TARGET)})")


def growth(settings: Settings, folder: Path) -> None:
    iterations = settings.long
    print(f"2. No growth: {SHORT} and {iterations:,} iterations in one run, {settings.long_repeats} interleaved rounds ({load()})")
    # the short run is over in a moment: five of them per round against each long one
    ours_results = interleave({"short": ours(SHORT), "long": ours(iterations)}, settings.long_repeats, warm=False, times={"short": 5})
    print(describe(f"mini-n8n, {SHORT} iterations", ours_results["short"]))
    print(describe(f"mini-n8n, {iterations:,} iterations", ours_results["long"]))
    ratio = spread(ours_results["long"])[1] / spread(ours_results["short"])[1]
    print(f"  mini-n8n {iterations:,} / {SHORT}: {ratio:.2f} by medians"
          f" (target <= {GROWTH_TARGET}; {verdict(ratio, GROWTH_TARGET)})")
    short_rounds, long_rounds = SHORT // ITEMS, iterations // ITEMS
    stored = interleave({"short": ours_items(ITEMS, short_rounds, folder),
                         "long": ours_items(ITEMS, long_rounds, folder)},
                        settings.long_repeats, times={"short": 5})
    print(describe(f"{ITEMS} items x {short_rounds} rounds, store", stored["short"]))
    print(describe(f"{ITEMS} items x {long_rounds} rounds, store", stored["long"]))
    ratio = spread(stored["long"])[1] / spread(stored["short"])[1]
    print(f"  mini-n8n with store, an Agent with {ITEMS} items, {iterations:,} / {SHORT} iterations: {ratio:.2f} by medians"
          f" (target <= {GROWTH_TARGET}; {verdict(ratio, GROWTH_TARGET)})")
    peers: list[tuple[str, int, Path | None]] = []
    if settings.peer_long:
        peers.append(("LangGraph ReAct", settings.peer_long, None))
    if settings.peer_sqlite_long:
        peers.append(("LangGraph ReAct, SqliteSaver", settings.peer_sqlite_long, folder))
    for name, long, where in peers:
        short_peer, long_peer = langgraph(SHORT, where), langgraph(long, where)
        if short_peer is None or long_peer is None:
            return
        results = interleave({"short": short_peer[0], "long": long_peer[0]}, 1)
        short_ms, long_ms = results["short"][0].cpu_ms, results["long"][0].cpu_ms
        print(f"  {name}: {short_ms:.3f} ms per iteration at {SHORT}, {long_ms:.3f} at {long:,} (ratio {long_ms / short_ms:.2f}; one run each)")


def memory_lines(label: str, sizes: tuple[int, ...], retained_per_iteration: Callable[[int], float]) -> None:
    """Retained KB per iteration of runs of each of `sizes` iterations, against the target, and
    the last per the first (constant: 1.00)."""
    per_iteration: list[float] = []
    for iterations in sizes:
        kb = retained_per_iteration(iterations)
        per_iteration.append(kb)
        print(f"  {label}, {iterations:>5,} iterations: {kb:6.2f} KB per iteration"
              f" (target <= {MEMORY_TARGET_KB:g} KB; {verdict(kb, MEMORY_TARGET_KB)})")
    if len(per_iteration) > 1:
        print(f"  {label}, per iteration at {sizes[-1]:,} / at {sizes[0]:,}:"
              f" {per_iteration[-1] / per_iteration[0]:.2f} (constant: 1.00)")


def memory(settings: Settings, folder: Path) -> None:
    print(f"3. Retained memory per iteration (tracemalloc; the finished run held) ({load()})")
    registry = builtin_registry()

    def alone(rounds: int) -> float:
        workflow = scripted_workflow(rounds)
        return retained_kb(lambda: run_ours(registry, workflow, rounds)) / rounds

    def with_items(iterations: int) -> float:  # n8n's v3 Agent gives each item the first one's steps every round
        rounds = iterations // ITEMS - 1
        workflow = items_agent_workflow(ITEMS, rounds)
        return retained_kb(lambda: run_ours(registry, workflow, ITEMS * rounds, chat=False)) / iterations

    memory_lines("mini-n8n", settings.memory_sizes, alone)
    memory_lines(f"mini-n8n, an Agent with {ITEMS} items", settings.memory_sizes, with_items)
    rounds = settings.peer_memory
    peers: tuple[tuple[str, Path | None], ...] = (("LangGraph ReAct", None), ("LangGraph ReAct, SqliteSaver", folder))
    if settings is QUICK:  # for information only, and slow under tracemalloc
        print("  (quick: LangGraph with SqliteSaver not measured for memory)")
        peers = peers[:1]
    for name, where in peers:
        peer = langgraph(rounds, where)
        if peer is None:
            return
        kb = retained_kb(peer[1]) / rounds
        where_note = " (its Python heap; the checkpoints are on disk)" if where is not None else ""
        print(f"  {name}, {rounds:>5,} iterations: {kb:6.2f} KB per iteration{where_note}")


def main(quick: bool = False) -> None:
    settings = QUICK if quick else FULL
    print(f"{'quick' if quick else 'full'} run; CPU time per model call of the process that ran it ({load()})")
    with tempfile.TemporaryDirectory() as name:  # stores and checkpoints of the runs, not the user's
        folder = Path(name)
        (folder / "ours").mkdir()
        try:
            cost(settings, folder)
            growth(settings, folder)
            memory(settings, folder)
        finally:
            for store in OPEN_STORES:
                store.close()
    print(f"done ({load()})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and shorter peer runs")
    main(parser.parse_args().quick)
