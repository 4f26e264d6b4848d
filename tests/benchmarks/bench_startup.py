"""Start-up: `mini-n8n --help`, a scripted one-round `mini-n8n run`, the editor's first frame.

Each figure is the wall time of a fresh process (the editor: from process start to the main
window's first paint), repeated and interleaved with its peer (`python -c pass` for the CLI, a
bare PySide6 window for the editor), with PYTHONDONTWRITEBYTECODE unset and set to 1 (Python
then reads the bytecode already compiled, never writes new). Printed: min/median/max, the
median's ratio to the target and to the peer, and the load average. Beside each peer, the floor
of the stack mini-n8n is built on, which no start of it can go below: the peer importing asyncio
and pydantic and making one pydantic model (with pydantic's plugin search off, as mini-n8n has it).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from engine.workflow import save_workflow
from tests.builders import agent_workflow

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
QUICK = "--quick" in sys.argv or os.environ.get("BENCH_QUICK") == "1"
# quick: three rounds (the median is then one run, not the mean of two that one slow moment of a
# shared machine moves), and the warm-up runs only before the first of the two settings
REPEATS = 3 if QUICK else 7

STACK = """
import os
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
import asyncio
from pydantic import BaseModel
class One(BaseModel):
    x: int = 0
One(x=1)
"""

FIRST_FRAME = """
import os, sys, time
if sys.argv[1] == "editor":
    from gui.launch import import_editor  # before Qt, as `mini-n8n` imports the editor
    editor_main = import_editor()
elif sys.argv[1] == "stack":
    exec(sys.argv[2])
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication(["mini-n8n"])

class FirstPaint(QObject):
    seen = False

    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and not self.seen:
            self.seen = True
            print("FRAME", time.time(), flush=True)
            os._exit(0)  # at the frame: the process's CPU is what the frame cost, not the work after it
        return False

# Watched: each window as it is shown, not every object through an application-wide filter (that
# filter hands every event of every object to Python, and its first object of a class PySide does
# not wrap, Qt's gesture manager, makes PySide build every Qt class: a tenth of the editor's start).
watcher = FirstPaint()
show = QWidget.show
def watched_show(widget):
    if widget.isWindow():
        widget.installEventFilter(watcher)
    show(widget)
QWidget.show = watched_show
if sys.argv[1] != "editor":
    window = QWidget()
    window.resize(1200, 800)
    window.show()
    app.exec()
else:
    editor_main(sys.argv[2:])
"""


CPU: list[float] = []  # CPU seconds of the last measured process, appended by each measurement


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_process(command: list[str], env: dict[str, str]) -> float:
    """Seconds from start to exit. Waited for without a timeout: a wait with one polls, at last every
    50 ms, which rounded each figure up to the next poll; a timer kills a process that hangs instead."""
    started, cpu = time.perf_counter(), children_cpu()
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    watchdog = threading.Timer(120.0, process.kill)
    watchdog.start()
    try:
        code = process.wait()
    finally:
        watchdog.cancel()
    elapsed = time.perf_counter() - started
    CPU.append(children_cpu() - cpu)
    if code != 0:
        raise subprocess.CalledProcessError(code, command)
    return elapsed


def first_frame(kind: str, *args: str, env: dict[str, str]) -> float:
    """Seconds to the first frame (the CPU recorded is the whole process's: it ends at that frame)."""
    started, cpu = time.time(), children_cpu()
    done = subprocess.run([sys.executable, "-c", FIRST_FRAME, kind, *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    CPU.append(children_cpu() - cpu)
    stamp = next((line.split()[1] for line in done.stdout.splitlines() if line.startswith("FRAME")), None)
    if stamp is None:
        raise RuntimeError(f"no first frame: {done.stderr[-2000:]}")
    return float(stamp) - started


def big_workflow(path: Path, count: int) -> Path:
    """`count` Set nodes in rows behind a Manual Trigger, chained by main connections."""
    nodes = [{"name": "Start", "type": "n8n-nodes-base.manualTrigger", "position": [0, 0], "parameters": {}}]
    connections: dict[str, dict] = {}
    for i in range(1, count):
        name = f"Set {i}"
        nodes.append({"name": name, "type": "n8n-nodes-base.set", "position": [(i % 40) * 220, (i // 40) * 160],
                      "parameters": {}})
        previous = nodes[-2]["name"]
        connections[previous] = {"main": [[{"node": name, "type": "main", "index": 0}]]}
    path.write_text(json.dumps({"name": "big", "nodes": nodes, "connections": connections}))
    return path


def spread(values: list[float]) -> str:
    return f"{min(values) * 1000:6.0f} / {statistics.median(values) * 1000:6.0f} / {max(values) * 1000:6.0f} ms"


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="mini-n8n-startup-") as folder:
        tmp = Path(folder)
        one_round = tmp / "one-round.json"
        save_workflow(agent_workflow([{"text": "done"}], tools=[]), one_round)
        big = big_workflow(tmp / "big.json", 1000)
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base.update(MINI_N8N_DB=str(tmp / "store.sqlite"), QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
                    MINI_N8N_RECOVERY_DIR=str(tmp / "recovery"), MINI_N8N_CONFIG_DIR=str(tmp / "config"))
        cli = str(BIN / "mini-n8n")
        # (name, target seconds, peer name, measure(env))
        cases: list[tuple[str, float | None, str | None, Callable[[dict[str, str]], float]]] = [
            ("python -c pass", None, None, lambda env: timed_process([sys.executable, "-c", "pass"], env)),
            ("floor: asyncio, pydantic, one model", None, "python -c pass",
             lambda env: timed_process([sys.executable, "-c", STACK], env)),
            ("mini-n8n --help", 0.1, "python -c pass", lambda env: timed_process([cli, "--help"], env)),
            ("mini-n8n run (scripted, 1 round)", 0.25, "python -c pass",
             lambda env: timed_process([cli, "run", "-q", str(one_round), "--message", "hi"], env)),
            ("bare PySide6 window, first frame", None, None, lambda env: first_frame("bare", env=env)),
            ("floor: the same, bare PySide6 window", None, "bare PySide6 window, first frame",
             lambda env: first_frame("stack", STACK, env=env)),
            ("editor first frame, empty", 0.5, "bare PySide6 window, first frame",
             lambda env: first_frame("editor", env=env)),
            ("editor first frame, 1,000 nodes", 0.8, "bare PySide6 window, first frame",
             lambda env: first_frame("editor", str(big), env=env)),
        ]
        load_before = os.getloadavg()[0]
        if QUICK:
            print(f"quick: {REPEATS} rounds, warm-up runs only before the first setting")
        for label, env_value in (("PYTHONDONTWRITEBYTECODE unset", None), ("PYTHONDONTWRITEBYTECODE=1", "1")):
            env = dict(base) if env_value is None else {**base, "PYTHONDONTWRITEBYTECODE": env_value}
            if env_value is None or not QUICK:  # warm the OS file cache (and bytecode when allowed); quick: once
                for _name, _target, _peer, measure in cases:
                    measure(env)
            times: dict[str, list[float]] = {name: [] for name, *_ in cases}
            cpus: dict[str, list[float]] = {name: [] for name, *_ in cases}
            for _ in range(REPEATS):  # interleaved: each case once per round
                for name, _target, _peer, measure in cases:
                    times[name].append(measure(env))
                    cpus[name].append(CPU[-1])
            print(f"\n{label}: min / median / max of {REPEATS} runs, load average now {os.getloadavg()[0]:.1f} "
                  f"on {os.cpu_count()} cores")
            for name, target, peer, _measure in cases:
                median = statistics.median(times[name])
                line = f"  {name:36s} {spread(times[name])}  CPU {statistics.median(cpus[name]) * 1000:4.0f} ms"
                if target is not None:
                    line += f"   target {target * 1000:4.0f} ms, ratio {median / target:4.2f}{'' if median <= target else ' NOT met'}"
                if peer is not None:
                    line += f"   {median / statistics.median(times[peer]):4.1f}x {peer}"
                print(line, flush=True)
        print(f"\nload average before: {load_before:.1f}, after: {os.getloadavg()[0]:.1f} "
              "(figures above ~1 per core are inflated by other work)")


if __name__ == "__main__":
    main()
