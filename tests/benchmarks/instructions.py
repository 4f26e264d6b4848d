"""Machine instructions a piece of work executes, counted by valgrind's cachegrind: C work included
(JSON encoding, CRCs, SQLite), and the same count however busy the machine is. The work runs in
child processes that differ only in how often they repeat it; the difference of their counts
leaves start-up and imports out. A guide for judging a change where times move by less than their
noise, not a target: on a real CPU one instruction can cost more than another."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_TOTAL = re.compile(r"I\s+refs:\s+([\d,]+)")


def unavailable() -> str | None:
    """Why instructions cannot be counted here (None: they can)."""
    return None if shutil.which("valgrind") else "valgrind is not installed: no instruction count"


def count_difference(module: str, args: list[str], fewer: int, more: int) -> int:
    """Instructions of `more` repeats minus those of `fewer`, each in a child process
    `python -m module *args <repeats>` under cachegrind (the two run side by side), with one hash
    seed: the same dict and set orders in every count."""
    valgrind = shutil.which("valgrind")
    assert valgrind is not None, unavailable()
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    children = [subprocess.Popen([valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                                  sys.executable, "-m", module, *args, str(repeats)],
                                 cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                for repeats in (fewer, more)]
    errors = [child.communicate()[1] for child in children]  # both waited for, even when one failed
    totals = []
    for child, err in zip(children, errors):
        found = _TOTAL.search(err)
        if child.returncode != 0 or found is None:
            raise RuntimeError(f"counting instructions of {module} {' '.join(args)} failed (exit {child.returncode}):"
                               f" {err.strip()[-500:]}")
        totals.append(int(found.group(1).replace(",", "")))
    return totals[1] - totals[0]
