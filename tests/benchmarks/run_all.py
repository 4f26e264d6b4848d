"""Run every benchmark, each in a fresh process, and print its figures.

`--quick` asks each benchmark that has a quick mode for it (fewer repeats, shorter peer runs) so
that the whole set runs in under QUICK_BUDGET_S; names on the command line pick benchmarks. Each
benchmark's wall time is printed with the CPU time of every process it ran (peers, n8n, a core
kept busy on purpose): on a machine others load, the CPU time is what the set itself costs.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).parents[2]
QUICK_BUDGET_S = 180.0


BENCHES = sorted(p.stem for p in (ROOT / "tests" / "benchmarks").glob("bench_*.py"))


def children_cpu_s() -> float:
    """User + system CPU seconds of the finished child processes (and theirs) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(module: str, quick: bool) -> bool:
    """Run one benchmark in its own process (no heap, imports or Qt state carried over); quick mode
    reaches it as `--quick` and as BENCH_QUICK=1."""
    command = [sys.executable, "-m", f"tests.benchmarks.{module}"] + (["--quick"] if quick else [])
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **({"BENCH_QUICK": "1"} if quick else {})}
    return subprocess.run(command, cwd=ROOT, env=env).returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"quick modes: the whole set in under {QUICK_BUDGET_S:.0f} s")
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all), e.g. bench_engine")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHES]
    if unknown:
        parser.error(f"no benchmark {', '.join(unknown)} (known: {', '.join(BENCHES)})")
    chosen = args.names or BENCHES
    failed: list[str] = []
    started_all, cpu_all = time.perf_counter(), children_cpu_s()
    load_before = os.getloadavg()[0]
    for module in chosen:
        print(f"\n=== {module}{' (quick)' if args.quick else ''} ===", flush=True)
        started, cpu = time.perf_counter(), children_cpu_s()
        if not run(module, args.quick):
            failed.append(module)
        print(f"({module}: {time.perf_counter() - started:.1f} s, {children_cpu_s() - cpu:.1f} s CPU,"
              f" load average {os.getloadavg()[0]:.1f})", flush=True)
    total, cpu_total = time.perf_counter() - started_all, children_cpu_s() - cpu_all
    budget = f"; quick budget {QUICK_BUDGET_S:.0f} s: {'met' if total <= QUICK_BUDGET_S else 'NOT met'}" if args.quick else ""
    print(f"\nall benchmarks: {total:.1f} s, {cpu_total:.1f} s CPU on {os.cpu_count()} cores"
          f" (load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after){budget}")
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
