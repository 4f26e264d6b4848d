"""Run every benchmark, each in a fresh process, and print its figures.

`--quick` asks each benchmark that has a quick mode for it (fewer repeats, shorter peer runs) so
that the whole set runs in under QUICK_BUDGET_S; names on the command line pick benchmarks.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parents[2]
QUICK_BUDGET_S = 180.0


@dataclass(frozen=True)
class Bench:
    module: str  # a module in tests/benchmarks run as `python -m tests.benchmarks.<module>`
    has_quick: bool  # whether it takes --quick


# One line per benchmark.
BENCHES = [
    Bench("bench_engine", has_quick=True),
    Bench("bench_models", has_quick=False),
    Bench("bench_canvas", has_quick=False),
    Bench("bench_gui_run", has_quick=False),
    Bench("bench_store", has_quick=True),
]


def run(bench: Bench, quick: bool) -> bool:
    """Run one benchmark in its own process (no heap, imports or Qt state carried over)."""
    command = [sys.executable, "-m", f"tests.benchmarks.{bench.module}"]
    if quick and bench.has_quick:
        command.append("--quick")
    return subprocess.run(command, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}).returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"quick modes: the whole set in under {QUICK_BUDGET_S:.0f} s")
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all), e.g. bench_engine")
    args = parser.parse_args(argv)
    known = {b.module: b for b in BENCHES}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        parser.error(f"no benchmark {', '.join(unknown)} (known: {', '.join(known)})")
    chosen = [known[n] for n in args.names] if args.names else BENCHES
    failed: list[str] = []
    started_all = time.perf_counter()
    for bench in chosen:
        print(f"\n=== {bench.module}{' (quick)' if args.quick and bench.has_quick else ''} ===", flush=True)
        started = time.perf_counter()
        if not run(bench, args.quick):
            failed.append(bench.module)
        print(f"({bench.module}: {time.perf_counter() - started:.1f} s)", flush=True)
    total = time.perf_counter() - started_all
    budget = f"; quick budget {QUICK_BUDGET_S:.0f} s: {'met' if total <= QUICK_BUDGET_S else 'NOT met'}" if args.quick else ""
    print(f"\nall benchmarks: {total:.1f} s (load average {os.getloadavg()[0]:.2f}){budget}")
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
