"""Run every benchmark (tests/benchmarks/bench_*.py, each with a `main()`) and print its figures."""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))


def main() -> int:
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or sorted(p.stem for p in HERE.glob("bench_*.py"))
    failed = 0
    for name in names:
        print(f"\n=== {name} ===", flush=True)
        started = time.perf_counter()
        try:
            importlib.import_module(f"tests.benchmarks.{name}").main()
        except Exception:
            failed += 1
            traceback.print_exc()
        print(f"({name}: {time.perf_counter() - started:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
