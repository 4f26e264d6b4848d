"""The editor stays live during long runs, and the steps table copes with 100,000 rows.

1. A 2,000-iteration scripted run driven through the main window (Run action, all panels and
   canvas statuses live): 20 items x 100 agent iterations, each a model call and a Calculator
   run. A 5 ms heartbeat timer measures the largest event-loop stall (target under 50 ms).
   Once with a streaming model (1 ms per token, as a real model yields on the network), once
   with replies that arrive instantly (the engine never awaits anything real; `--quick` or
   $BENCH_QUICK=1: this one only).
2. Stop during a slow stream: time from Stop until the run has ended (target under 200 ms).
3. The Intermediate steps table (model + filter proxy + view, shown) holding 100,000 rows:
   append time per 1,000 rows, and time per scroll step across the table (smooth: 95% of
   frames under 16 ms), plus sorting and filtering the whole table.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from tests.builders import agent_workflow, tool_call  # noqa: E402

QUICK = "--quick" in sys.argv or os.environ.get("BENCH_QUICK") == "1"
ITEMS = 20
ITERATIONS = 100  # per item: 2,000 agent iterations in all
STALL_TARGET_MS = 50.0
STOP_TARGET_MS = 200.0
TABLE_ROWS = 100_000
BATCH = 1_000
SCROLL_STEPS = 60
SMOOTH_FRAME_MS = 16.0
HEARTBEAT_MS = 5


def long_run_workflow(token_delay_ms: float) -> Any:
    """Manual Trigger with ITEMS pinned items -> Agent -> Scripted model, Calculator."""
    replies: list[dict[str, Any]] = [
        {"text": "Checking the sum.", "toolCalls": [tool_call("Calculator", {"input": f"{n} + 1"})]}
        for n in range(ITEMS * ITERATIONS)
    ]
    replies += [{"text": "All done."} for _ in range(ITEMS)]
    workflow = agent_workflow(
        replies, trigger="manual", agent_params={"promptType": "define", "text": "Add one, again and again"},
        agent_options={"maxIterations": 1000}, model_options={"tokenDelayMs": token_delay_ms},
    )
    workflow.pinData["Start"] = [{"json": {"n": i}} for i in range(ITEMS)]
    return workflow


class Heartbeat:
    """A repeating timer; the largest gap between its ticks is the longest the loop was blocked.

    `cpu_gaps` are the same gaps in the loop thread's CPU time: the work done without a turn of
    the loop, which a busy machine does not stretch (the wall-clock gaps also hold the time the
    process waited for a core)."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self.cpu_gaps: list[float] = []
        self._last = time.perf_counter()
        self._last_cpu = time.thread_time()
        self._timer = QTimer()
        self._timer.setInterval(HEARTBEAT_MS)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._last = time.perf_counter()
        self._last_cpu = time.thread_time()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.gaps.append((now - self._last) * 1000.0)
        self.cpu_gaps.append((cpu - self._last_cpu) * 1000.0)
        self._last, self._last_cpu = now, cpu


async def wait_until(condition: Any, timeout_s: float = 600.0) -> None:
    deadline = time.perf_counter() + timeout_s
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the run did not finish in time")
        await asyncio.sleep(0.005)


async def long_run(window: Any, token_delay_ms: float) -> None:
    controller = window.run_controller
    window.load_document(long_run_workflow(token_delay_ms))
    await asyncio.sleep(0.05)
    beat = Heartbeat()
    beat.start()
    started = time.perf_counter()
    controller.run_action.trigger()
    await wait_until(lambda: controller.bridge.task is not None and controller.settled)
    took = time.perf_counter() - started
    beat.stop()
    outcome = controller.last_outcome
    rows = controller.output.steps_model.rows
    calls = sum(1 for r in rows if r.kind == "tool")
    worst = max(beat.gaps)
    p99 = statistics.quantiles(beat.gaps, n=100)[98]
    label = f"{token_delay_ms:g} ms/token" if token_delay_ms else "instant replies"
    verdict = "met" if worst < STALL_TARGET_MS else "NOT met"
    print(f"2,000-iteration run ({label}): status {outcome.status}, {calls} tool rows, "
          f"{len(controller.output.run_log.lines)} run-log lines, {took:.1f} s")
    print(f"  largest event-loop stall {worst:.1f} ms (99th percentile {p99:.1f} ms, heartbeat {HEARTBEAT_MS} ms); "
          f"target < {STALL_TARGET_MS:.0f} ms: {verdict}")
    cpu_worst = max(beat.cpu_gaps)
    print(f"  in the loop thread's CPU time: largest {cpu_worst:.1f} ms (99th percentile "
          f"{statistics.quantiles(beat.cpu_gaps, n=100)[98]:.1f} ms; not stretched by other processes)")


async def stop_latency(window: Any) -> None:
    controller = window.run_controller
    window.load_document(agent_workflow([{"text": " ".join(["word"] * 400)}], tools=[],
                                        model_options={"tokenDelayMs": 50}))
    times = []
    for _ in range(5):
        controller.chat.input.setPlainText("talk")
        controller.chat.submit()
        await wait_until(lambda: len(controller.chat.reply_text()) > 10)
        started = time.perf_counter()
        controller.stop_action.trigger()
        await wait_until(lambda: not controller.bridge.running)
        times.append((time.perf_counter() - started) * 1000.0)
        assert controller.last_outcome.status == "cancelled"
    verdict = "met" if max(times) < STOP_TARGET_MS else "NOT met"
    print(f"Stop during a slow stream: run ended {max(times):.1f} ms after Stop at worst "
          f"(median {statistics.median(times):.1f} ms, 5 tries); target < {STOP_TARGET_MS:.0f} ms: {verdict}")


def big_table() -> None:
    """Rows reach the table while a run is going, so they are added as the bridge runs: without
    full garbage collections (gui.bridge.full_collections_held)."""
    from gui.bridge import full_collections_held

    with full_collections_held:
        fill_big_table()


def fill_big_table() -> None:
    from engine.steps_table import StepRow
    from gui.panels.steps_view import StepsView

    view = StepsView()
    view.resize(1200, 400)
    view.show()
    app = QApplication.instance()
    assert app is not None
    app.processEvents()
    per_batch = []
    for start in range(0, TABLE_ROWS, BATCH):
        rows = [StepRow(iterations=(i // 4 + 1,), item=i % 3, agent="AI Agent", tool=("calculator", "search")[i % 2],
                        kind="tool", tool_call_id=f"call_{i}", tool_input={"input": f"{i} + 1"},
                        observation=f"{i + 1}", status="error" if i % 11 == 0 else "ok", tool_ms=0.2,
                        tokens_in=100 + i % 50, tokens_out=12, model_ms=3.5) for i in range(start, start + BATCH)]
        t0 = time.perf_counter()
        view.model.append_rows(rows)
        app.processEvents()  # the view lays out and paints the new rows
        per_batch.append((time.perf_counter() - t0) * 1000.0)
    print(f"steps table, {TABLE_ROWS:,} rows appended {BATCH:,} at a time: {statistics.mean(per_batch):.2f} ms per "
          f"1,000 rows (first {per_batch[0]:.2f}, last {per_batch[-1]:.2f}, worst {max(per_batch):.2f})")
    bar = view.table.verticalScrollBar()
    frames = []
    for step in range(SCROLL_STEPS + 1):
        t0 = time.perf_counter()
        bar.setValue(bar.maximum() * step // SCROLL_STEPS)
        view.table.viewport().repaint()
        frames.append((time.perf_counter() - t0) * 1000.0)
    p95 = statistics.quantiles(frames, n=20)[18]
    verdict = "smooth" if p95 < SMOOTH_FRAME_MS else "NOT smooth"
    print(f"  scrolling top to bottom in {SCROLL_STEPS} jumps: {statistics.mean(frames):.2f} ms per frame "
          f"(95th percentile {p95:.2f}, worst {max(frames):.2f}); 95% of frames under {SMOOTH_FRAME_MS:.0f} ms: {verdict}")
    for label, action in (
        ("sort by tokens in", lambda: view.proxy.sort(7)),
        ("filter status=error", lambda: view.status_filter.setCurrentText("error")),
        ("clear the filter", lambda: view.status_filter.setCurrentText("All")),
    ):
        t0 = time.perf_counter()
        action()
        app.processEvents()
        print(f"  {label} over {TABLE_ROWS:,} rows: {(time.perf_counter() - t0) * 1000.0:.0f} ms")


def main() -> None:
    print(f"load average before the runs: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          "(timings stretch on a busy machine)")
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    from gui.main_window import MainWindow

    with tempfile.TemporaryDirectory() as folder:  # the runs are stored, as in the editor, but not in the user's store
        os.environ["MINI_N8N_DB"] = str(Path(folder) / "executions.sqlite")
        window = MainWindow()
        window.resize(1400, 900)
        window.show()

        async def scenario() -> None:
            if QUICK:
                print("quick: the run with instant replies only (the target's case)")
            else:
                await long_run(window, 1.0)
            await long_run(window, 0.0)
            await stop_latency(window)

        with loop:
            loop.run_until_complete(scenario())
        window.close()
    big_table()


if __name__ == "__main__":
    main()
