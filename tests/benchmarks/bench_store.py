"""What durability costs: the execution store per agent iteration, and the store at scale.

1. Per agent iteration (scripted model answering at once, one Calculator run, the Agent's
   resume) without the store and with it, interleaved in the same process; target: with the
   store at most 1.5x without, printed by minimums, by medians, and as the median of the ratios
   of samples made back to back (the VM's speed drifts between seconds; a pair shares it). A
   sample is a batch of RUNS_PER_SAMPLE runs, as many as the store folds ends into the database
   together: each batch holds one fold and carries its share. Single runs would leave it out of
   every statistic but the maximum (one run of each such group carries the fold, and a median
   never reads it). Beside it the durable peer: LangGraph's prebuilt ReAct agent
   with its SQLite checkpointer (langgraph-checkpoint-sqlite), in a process of its own
   (tests.benchmarks.peer_process: its heap would slow ours); target: ours with the store at
   most a tenth of it. Printed beside them, the Python bytecodes one run executes per
   iteration on each side: a count that does not drift with the machine's load, for judging
   a change to the store's code where the times move by less than their noise; and, where valgrind
   is installed, the machine instructions, C work included, counted in child processes under
   cachegrind (tests.benchmarks.instructions). Then, in samples
   of their own, the store's calls timed: the time it adds split into what is spent inside them and
   what the rest of the run takes longer beside them.
2. A store of 100,000 executions: opening it, and `executions list` of the newest 200
   (targets 20 ms and 10 ms).
`--quick` (or BENCH_QUICK=1) repeats less.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from types import FrameType
from typing import Any, Callable

from engine.executor import Engine
from engine.registry import builtin_registry
from engine.store import ExecutionStore, Retention, sqlite_store
from nodes.triggers.chat_trigger import chat_item
from tests.benchmarks import instructions
from tests.benchmarks.peer_process import PeerProcess
from tests.builders import agent_workflow, tool_call

ROUNDS = 50
PAIRS = 4  # pairs of our samples (without the store, with it) per peer run
RUNS_PER_SAMPLE = sqlite_store.ENDS_FOLDED_TOGETHER  # each sample of ours holds one fold of the ends
STORE_TARGET = 1.5  # with the store / without
PEER_TARGET = 0.1  # ours with the store / LangGraph with its SQLite checkpointer
STORED = 100_000
LIST_TARGET_MS = 10.0
OPEN_TARGET_MS = 20.0


def quick() -> bool:
    return "--quick" in sys.argv or os.environ.get("BENCH_QUICK") == "1"


def spread(values: list[float]) -> str:
    return f"min {min(values):.3f}  median {statistics.median(values):.3f}  max {max(values):.3f}"


def load_average() -> str:
    try:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "load average unknown"


def agent_runner(store: ExecutionStore | None) -> Callable[[], None]:
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} * 2"})], "usage": {"promptTokens": 10, "completionTokens": 5}}
               for i in range(ROUNDS)]
    replies.append({"text": "done", "usage": {"promptTokens": 10, "completionTokens": 1}})
    workflow = agent_workflow(replies, agent_options={"maxIterations": ROUNDS + 5})
    engine = Engine(builtin_registry(), store=store)
    loop = asyncio.new_event_loop()

    def run_once() -> None:
        state = loop.run_until_complete(engine.run(workflow, items=[chat_item("go", "bench")]))
        assert state.status == "success", state.error
        assert len(state.run_data["Calculator"]) == ROUNDS

    return run_once


def per_iteration(folder: Path) -> None:
    repeats = 4 if quick() else 11
    store = ExecutionStore(folder / "iterations.sqlite", retention=Retention())
    sides: dict[str, Callable[[], None]] = {"without store": agent_runner(None), "with store": agent_runner(store)}
    peer: PeerProcess | None = PeerProcess(ROUNDS, folder)  # in a process of its own, as its users run it
    if peer.unavailable is not None:
        print(peer.unavailable)
        peer = None
    names = [*sides, *(["LangGraph + SqliteSaver"] if peer is not None else [])]
    times: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    paired: dict[str, list[float]] = {"wall": [], "cpu": []}  # with / without, of two runs back to back

    def timed(name: str) -> tuple[float, float]:
        gc.collect()
        run = sides[name]
        started, started_cpu = time.perf_counter(), time.process_time()
        for _ in range(RUNS_PER_SAMPLE):
            run()
        calls = RUNS_PER_SAMPLE * (ROUNDS + 1)
        wall = (time.perf_counter() - started) * 1000.0 / calls
        used = (time.process_time() - started_cpu) * 1000.0 / calls
        times[name].append(wall)
        cpu[name].append(used)
        return wall, used

    def timed_peer() -> None:
        assert peer is not None
        measured = peer.sample()
        times["LangGraph + SqliteSaver"].append(measured.wall_ms)
        cpu["LangGraph + SqliteSaver"].append(measured.cpu_ms)

    for run in sides.values():
        for _ in range(RUNS_PER_SAMPLE):
            run()  # warm up (the peer warmed up in its process)
    for _ in range(repeats):  # interleaved: each repeat runs the peer once and ours in PAIRS pairs
        for pair in range(PAIRS):
            # each pair back to back, in turns which goes first: the VM's speed drifts over seconds
            order = ("without store", "with store") if pair % 2 == 0 else ("with store", "without store")
            measured = {name: timed(name) for name in order}
            for i, clock in enumerate(("wall", "cpu")):
                paired[clock].append(measured["with store"][i] / measured["without store"][i])
        if peer is not None:
            timed_peer()
    print(f"ms per agent iteration, {ROUNDS} tool rounds, {repeats} interleaved repeats of {PAIRS} pairs of ours"
          f" (each side a batch of {RUNS_PER_SAMPLE} runs) and one peer run ({load_average()}):")
    for name, values in times.items():
        print(f"  {name:<24} wall {spread(values)}   cpu {spread(cpu[name])}")
    for clock, table in (("wall", times), ("cpu", cpu)):
        plain, stored = table["without store"], table["with store"]
        ratios = paired[clock]
        for label, ratio in (("min", min(stored) / min(plain)), ("median", statistics.median(stored) / statistics.median(plain)),
                             (f"median of {len(ratios)} pairs", statistics.median(ratios))):
            print(f"  with/without store ({clock} {label}) = {ratio:.2f} (target <= {STORE_TARGET}:"
                  f" {'met' if ratio <= STORE_TARGET else 'NOT met'}; {ratio / STORE_TARGET:.2f} of target)")
    if peer is not None:
        lg = times["LangGraph + SqliteSaver"]
        ratio = min(times["with store"]) / min(lg)
        print(f"  ours with store / LangGraph with SqliteSaver (min) = {ratio:.3f} (target <= {PEER_TARGET}:"
              f" {'met' if ratio <= PEER_TARGET else 'NOT met'}; {ratio / PEER_TARGET:.2f} of target)")
    counted = {name: bytecodes(run) / (ROUNDS + 1) for name, run in sides.items()}
    print(f"  Python bytecodes per agent iteration, one run each: without store {counted['without store']:,.0f},"
          f" with store {counted['with store']:,.0f} ({counted['with store'] / counted['without store']:.2f} of it;"
          " counted, so it does not drift with the machine's load, but C work such as JSON encoding and SQLite"
          " is not in it: a guide to what the store's code does, not the target)")
    print_instructions()
    if peer is not None:
        peer.close()
    store.close()
    where_the_time_goes(folder, 4 if quick() else 8)


class TimedStore(ExecutionStore):
    """The store with the time spent inside its calls from the engine added up: attaching an
    execution, a checkpoint, a run or end told to it, a release. The rest of a run is the engine's."""

    spent = 0.0

    def _timed(self, call: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        started = time.perf_counter()
        try:
            call(*args, **kwargs)
        finally:
            self.spent += time.perf_counter() - started

    def attach(self, execution: Any, *, fresh: bool = False) -> None:
        self._timed(super().attach, execution, fresh=fresh)

    def checkpoint(self, state: Any, at_boundary: bool) -> None:
        self._timed(super().checkpoint, state, at_boundary)

    def _on_record(self, execution_id: str, writer: Any, event: Any) -> None:
        self._timed(super()._on_record, execution_id, writer, event)

    def release(self, state: Any) -> None:
        self._timed(super().release, state)


def where_the_time_goes(folder: Path, pairs: int) -> None:
    """Samples apart from the timed ones, the store's calls timed: how much of what the store adds is
    spent inside its calls, and how much the rest of the run (the engine's code between them) takes
    longer beside it than without it."""
    store = TimedStore(folder / "timed.sqlite", retention=Retention())
    plain, stored = agent_runner(None), agent_runner(store)
    calls = RUNS_PER_SAMPLE * (ROUNDS + 1)
    for _ in range(RUNS_PER_SAMPLE):  # warm up
        plain()
        stored()
    without, total, inside = [], [], []
    for pair in range(pairs):
        for run in ((plain, stored) if pair % 2 == 0 else (stored, plain)):
            gc.collect()
            store.spent = 0.0
            started = time.perf_counter()
            for _ in range(RUNS_PER_SAMPLE):
                run()
            micros = (time.perf_counter() - started) * 1e6 / calls
            if run is plain:
                without.append(micros)
            else:
                total.append(micros)
                inside.append(store.spent * 1e6 / calls)
    store.close()
    plain_us, inside_us = statistics.median(without), statistics.median(inside)
    engine_us = statistics.median(t - i for t, i in zip(total, inside))
    added = statistics.median(total) - plain_us
    print(f"  where the added time goes ({pairs} more pairs, the store's calls timed; us per iteration, medians):"
          f" {added:.1f} added, {inside_us:.1f} inside the store's calls ({inside_us / added:.0%});"
          f" the rest of the run (the engine, and the events it makes for the store) {engine_us:.1f} against"
          f" {plain_us:.1f} without the store ({engine_us / plain_us - 1:+.0%})")


def bytecodes(run: Callable[[], None]) -> int:
    """The Python bytecodes one call of `run` executes (in this thread)."""
    count = 0

    def each(frame: FrameType, event: str, _arg: Any) -> Any:
        nonlocal count
        if event == "opcode":
            count += 1
        return each

    def called(frame: FrameType, _event: str, _arg: Any) -> Any:
        frame.f_trace_opcodes = True
        return each

    sys.settrace(called)
    try:
        run()
    finally:
        sys.settrace(None)
    return count


COUNTED_RUNS = (2, 10)  # runs of the two child processes whose instruction counts are subtracted
COUNT_CHILD = "--count-child"


def print_instructions() -> None:
    """The instructions one agent iteration executes on each side (tests.benchmarks.instructions)."""
    why_not = instructions.unavailable()
    if why_not is not None:
        print(f"  {why_not}")
        return
    fewer, more = COUNTED_RUNS
    try:
        counted = {side: instructions.count_difference("tests.benchmarks.bench_store", [COUNT_CHILD, side], fewer, more)
                   / ((more - fewer) * (ROUNDS + 1)) for side in ("without", "with")}
    except RuntimeError as exc:  # a guide: its failure is said, and the benchmark goes on
        print(f"  {exc}")
        return
    print(f"  machine instructions per agent iteration (valgrind's cachegrind, runs of {more} less runs of {fewer}):"
          f" without store {counted['without']:,.0f}, with store {counted['with']:,.0f}"
          f" ({counted['with'] / counted['without']:.2f} of it; C work included and steady whatever the machine's load:"
          " a guide to what the store executes, not the target, as one instruction can cost more than another)")


def count_child(side: str, runs: int) -> None:
    """A child process counted under cachegrind: `runs` runs of one side."""
    # Under valgrind a run takes about fifty times as long: the store would fold by age at
    # boundaries a real run never folds at. By count alone (the ends of ENDS_FOLDED_TOGETHER runs)
    # it folds where a real run does.
    sqlite_store.FOLD_AFTER_S = 3600.0
    with tempfile.TemporaryDirectory(prefix="mini-n8n-bench-store-") as folder:
        store = ExecutionStore(Path(folder) / "counted.sqlite", retention=Retention()) if side == "with" else None
        run = agent_runner(store)
        for _ in range(runs):
            run()
        if store is not None:
            store.close()


def fill(path: Path, count: int) -> None:
    """`count` finished executions (one workflow, one run and one boundary each), written the way the
    store lays them out."""
    ExecutionStore(path, retention=Retention()).close()
    db = sqlite3.connect(path, isolation_level=None)
    workflow = b'{"name":"bench","nodes":[],"connections":{}}'
    blob = b'{"startTime":0,"executionTime":1,"executionStatus":"success","source":[],"input":{},"data":{}}'
    stack = b"[]"
    empty_crc = zlib.crc32(b"\x00", zlib.crc32(b"\x00", zlib.crc32(b"\x00")))
    db.execute("BEGIN")
    db.execute("INSERT INTO workflows VALUES ('bench', ?, ?)", (workflow, zlib.crc32(workflow)))
    now = time.time() * 1000.0
    db.executemany(
        "INSERT INTO executions (id, workflow_name, workflow_hash, mode, status, started_at, stopped_at, crc, updated_at)"
        " VALUES (?, 'bench', 'bench', 'cli', ?, ?, ?, ?, 0)",
        ((f"e{i:08d}", "success" if i % 10 else "error", now - i * 1000.0, now - i * 1000.0 + 50, empty_crc) for i in range(count)),
    )
    db.executemany("INSERT INTO runs VALUES (?, 1, 'Start', 0, NULL, ?, ?)",
                   ((f"e{i:08d}", blob, zlib.crc32(blob)) for i in range(count)))
    db.executemany("INSERT INTO boundaries VALUES (?, 1, 1, 'Start', NULL, ?, ?)",
                   ((f"e{i:08d}", stack, zlib.crc32(stack)) for i in range(count)))
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def at_scale(folder: Path) -> None:
    path = folder / "large.sqlite"
    started = time.perf_counter()
    fill(path, STORED)
    print(f"\nstore of {STORED:,} executions: {path.stat().st_size / 2**20:.1f} MB, made in {time.perf_counter() - started:.1f} s")
    repeats = 7 if quick() else 21
    opens, lists = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        store = ExecutionStore(path, retention=Retention())
        opens.append((time.perf_counter() - started) * 1000.0)
        started = time.perf_counter()
        rows = store.list(200)
        lists.append((time.perf_counter() - started) * 1000.0)
        assert len(rows) == 200 and rows[0].id == "e00000000"
        store.close()
    for label, values, target in (("open", opens, OPEN_TARGET_MS), ("list newest 200", lists, LIST_TARGET_MS)):
        best = min(values)
        print(f"  {label:<16} ms: {spread(values)}  (target < {target:g} ms: {'met' if best < target else 'NOT met'};"
              f" {best / target:.2f} of target) ({load_average()})")


def main() -> None:
    if COUNT_CHILD in sys.argv:
        at = sys.argv.index(COUNT_CHILD)
        count_child(sys.argv[at + 1], int(sys.argv[at + 2]))
        return
    with tempfile.TemporaryDirectory(prefix="mini-n8n-bench-store-") as folder:
        per_iteration(Path(folder))
        at_scale(Path(folder))


if __name__ == "__main__":
    main()
