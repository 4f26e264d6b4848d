"""Serving at scale: `mini-n8n serve` with workers on PostgreSQL and RabbitMQ (real subprocesses).

The agent: the scripted OpenAI-compatible peer making 3 HTTP Request Tool rounds, then answering
(tests/serve_harness.py); the tool's peer counts every call.
1. Executions per second through `serve --mode queue` with 1, 2 and 4 workers, and 200 with 3
   workers: every answer right, every tool call run exactly once.
2. Latency of one chat message (p50/p99, sequential) through `serve --mode regular` (executions
   in the server process) and `--mode queue` (one worker): queue mode's overhead per execution.
3. Ten trials of a worker SIGKILLed at a random moment under load: every execution completes,
   none lost, no finished tool call repeated, every job the worker held is taken over by another
   (its log and theirs, by task id); the time from the kill until every answer is back.
4. RabbitMQ restarted under load (`rabbitmqctl stop_app`, `start_app`; only where rabbitmqctl
   runs, never in quick mode): every execution completes once, a chat sent while the broker is
   down gets a clear 503 and stores nothing, and chats after the restart are answered.
5. Real n8n in queue mode, when installed ($N8N_DIR): the same workflow, peers and PostgreSQL,
   Redis for its Bull queue, `n8n start` and two `n8n worker`s, up beside ours with two workers:
   executions per second and chat latency measured in turns, printed as ratios. Not in quick
   mode (n8n takes a minute or more to start on 2 cores).
`--quick` (or BENCH_QUICK=1): fewer executions and trials.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import httpx

from tests.benchmarks.n8n_live import n8n_binary, n8n_dir
from tests.benchmarks.n8n_live import version as n8n_version
from tests.serve_harness import Cluster, ToolPeer
from tests.store_backends import PgSchema, pg_unreachable

ROUNDS = 3


def quick() -> bool:
    return "--quick" in sys.argv or os.environ.get("BENCH_QUICK") == "1"


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def check(tool: ToolPeer, tags: list[str], replies: list[httpx.Response], killed_at: float | None = None) -> list[str]:
    """What went wrong: a wrong answer, a lost execution, a tool call run twice (a call in flight
    when a worker was killed may run again: its node had not finished)."""
    problems = [f"{tag}: {r.status_code} {r.text[:200]}" for tag, r in zip(tags, replies)
                if r.status_code != 200 or r.json() != {"output": f"answer to {tag}"}]
    expected = {f"{tag}-{i}" for tag in tags for i in range(1, ROUNDS + 1)}
    missing = expected - set(tool.calls)
    if missing:
        problems.append(f"tool calls never made: {sorted(missing)[:5]}")
    for call, n in tool.calls.items():
        if n == 1:
            continue
        received, answered = tool.times[call][0]
        if killed_at is None or n > 2 or not received <= killed_at <= answered + 0.5:
            problems.append(f"tool call {call} ran {n} times")
    return problems


def chat_all(cluster: Cluster, tags: list[str], threads: int) -> list[httpx.Response]:
    with httpx.Client(limits=httpx.Limits(max_connections=threads)) as client, ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda tag: cluster.chat(client, tag), tags))


def with_cluster(tmp: Path, **options: object) -> Cluster:
    schema = PgSchema()
    cluster = Cluster(tmp, schema.url, **options)  # type: ignore[arg-type]
    cluster.stack.callback(schema.drop)
    if options.get("mode", "queue") == "queue":
        cluster.wait_workers_ready()
    return cluster


def measure_rate(cluster: Cluster, name: str, executions: int, threads: int) -> tuple[float, list[str]]:
    tags = [f"{name}-{i}" for i in range(executions)]
    started = time.perf_counter()
    replies = chat_all(cluster, tags, threads)
    took = time.perf_counter() - started
    return executions / took, check(cluster.tool, tags, replies)


def throughputs(tmp: Path, counts: tuple[int, ...], executions: int) -> dict[int, tuple[float, list[str]]]:
    """Executions per second with each number of workers, adding workers to one cluster as it goes."""
    cluster = with_cluster(tmp, workers=counts[0], rounds=ROUNDS)
    out = {}
    try:
        for workers in counts:
            while len(cluster.workers) < workers:
                cluster.start_worker()
            cluster.wait_workers_ready()
            out[workers] = measure_rate(cluster, f"w{workers}", executions, threads=max(8, 2 * workers))
        return out
    finally:
        cluster.close()


def latencies(tmp: Path, mode: str, count: int) -> list[float]:
    cluster = with_cluster(tmp, workers=1, mode=mode, rounds=ROUNDS)
    try:
        out = []
        with httpx.Client() as client:
            for i in range(count):
                started = time.perf_counter()
                reply = cluster.chat(client, f"{mode}-{i}")
                out.append((time.perf_counter() - started) * 1000)
                assert reply.status_code == 200 and reply.json() == {"output": f"answer to {mode}-{i}"}, reply.text
        return out[2:]  # the first ones warm the processes up
    finally:
        cluster.close()


TASK_LINE = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): [^]]*\] Task [^\[\s]+\[([^\]]+)\] (received|succeeded)")


def task_events(log: str) -> list[tuple[float, str, str]]:
    """(time, task id, "received" or "succeeded") of each of a worker log's task lines."""
    events = []
    for line in log.splitlines():
        found = TASK_LINE.match(line)
        if found:
            stamp = datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
            events.append((stamp, found.group(2), found.group(3)))
    return events


def taken_over(cluster: Cluster, victim: int, killed_at: float) -> tuple[int, list[float]]:
    """The jobs the killed worker held (received, not finished) and, for each that another worker
    received after the kill, how long after it. That worker resumes the execution from its last
    boundary, starts it when no boundary was stored yet, or finds it ended: the kill trial's
    check says whether every answer came back and every tool call ran once."""
    events = task_events(cluster.logs[victim].read_text(errors="replace"))
    held = {task for _, task, what in events if what == "received"} - {task for _, task, what in events if what == "succeeded"}
    received_again: dict[str, float] = {}
    for worker, log in enumerate(cluster.logs):
        if worker == victim:
            continue
        for stamp, task, what in task_events(log.read_text(errors="replace")):
            if what == "received" and task in held and stamp >= killed_at - 1:
                received_again.setdefault(task, stamp - killed_at)
    return len(held), sorted(received_again.values())


def kill_trial(tmp: Path, trial: int, executions: int, rng: random.Random) -> tuple[float, int, list[float], list[str]]:
    cluster = with_cluster(tmp, workers=3, rounds=ROUNDS, token_delay=0.01)
    try:
        tags = [f"t{trial}-{i}" for i in range(executions)]
        victim = rng.choice(cluster.workers)
        with ThreadPoolExecutor(1) as pool:
            answers = pool.submit(chat_all, cluster, tags, 12)
            time.sleep(rng.uniform(0.3, 2.0))
            killed_at = time.time()
            cluster.kill(victim)
            replies = answers.result(timeout=600)
        recovered = time.time() - killed_at
        inside, resumed = taken_over(cluster, cluster.workers.index(victim), killed_at)
        return recovered, inside, resumed, check(cluster.tool, tags, replies, killed_at)
    finally:
        cluster.close()


def rabbitmqctl(action: str) -> None:
    subprocess.run(["rabbitmqctl", action], check=True, capture_output=True, timeout=120)


def broker_restart(tmp: Path) -> list[str]:
    cluster = with_cluster(tmp, workers=2, rounds=ROUNDS, token_delay=0.02)
    try:
        tags = [f"b{i}" for i in range(16)]
        with httpx.Client() as client, ThreadPoolExecutor(16) as pool:
            answers = [pool.submit(cluster.chat, client, tag) for tag in tags]
            while sum(cluster.tool.calls.values()) < 4:
                time.sleep(0.01)
            stopped = time.perf_counter()
            rabbitmqctl("stop_app")
            try:
                refused = cluster.chat(client, "while-down")
            finally:
                rabbitmqctl("start_app")
            print(f"   broker down for {time.perf_counter() - stopped:.1f} s; a chat sent meanwhile: "
                  f"{refused.status_code} {refused.json().get('message', '')[:80]}")
            replies = [answer.result(timeout=600) for answer in answers]
        problems = check(cluster.tool, tags, replies)
        if refused.status_code != 503 or "while-down-1" in cluster.tool.calls:
            problems.append(f"a chat while the broker was down: {refused.status_code} {refused.text[:200]}")
        with httpx.Client() as client:
            after = cluster.chat(client, "after")
        if after.status_code != 200 or after.json() != {"output": "answer to after"}:
            problems.append(f"after the restart: {after.status_code} {after.text[:200]}")
        return problems
    finally:
        cluster.close()


def against_n8n(tmp: Path, executions: int, count: int, repeats: int = 3) -> list[str]:
    """n8n and ours side by side (both up, two workers each, the same workflow on the same peers),
    interleaved: batches of `executions` in turns, then sequential chat messages in turns."""
    from tests.benchmarks.n8n_queue import N8nQueue
    from tests.serve_harness import chat_workflow

    ours = with_cluster(tmp, workers=2, rounds=ROUNDS)
    try:
        n8n = N8nQueue(chat_workflow(ours.model.base_url, ours.tool.url, ROUNDS), ours.model.base_url, workers=2)
    except BaseException:
        ours.close()
        raise
    sides = {"ours": ours, "n8n": n8n}
    rates: dict[str, list[float]] = {"ours": [], "n8n": []}
    latency: dict[str, list[float]] = {"ours": [], "n8n": []}
    problems: list[str] = []
    name = "ours"
    try:
        with httpx.Client(limits=httpx.Limits(max_connections=8)) as client:
            for name, side in sides.items():  # warm-up
                for i in range(2):
                    side.chat(client, f"{name}-warm-{i}")
            for rep in range(repeats):
                for name, side in sides.items():
                    tags = [f"{name}-{rep}-{i}" for i in range(executions)]
                    started = time.perf_counter()
                    with ThreadPoolExecutor(8) as pool:
                        replies = list(pool.map(lambda tag: side.chat(client, tag), tags))
                    rates[name].append(executions / (time.perf_counter() - started))
                    problems += check(ours.tool, tags, replies)
            for i in range(count):
                for name, side in sides.items():
                    started = time.perf_counter()
                    reply = side.chat(client, f"{name}-seq-{i}")
                    latency[name].append((time.perf_counter() - started) * 1000)
                    if reply.status_code != 200:
                        problems.append(f"{name}: {reply.status_code} {reply.text[:200]}")
    except httpx.HTTPError as exc:
        if name == "ours":
            raise
        # the peer failed (seen: a chat n8n never answered in 120 s): said, and no comparison this time
        print(f"   n8n failed to answer a chat ({type(exc).__name__}: {exc}); no comparison in this run"
              f" (ours before it: {len(rates['ours'])} batch(es) measured)")
        return problems
    finally:
        n8n.close()
        ours.close()
    for name in sides:
        r, v = rates[name], latency[name]
        print(f"   {name:<4}: executions/s min {min(r):.2f}  median {statistics.median(r):.2f}  max {max(r):.2f};  "
              f"chat latency p50 {percentile(v, 50):.1f} ms  p99 {percentile(v, 99):.1f} ms")
    rate_ratio = statistics.median(rates["ours"]) / statistics.median(rates["n8n"])
    latency_ratio = statistics.median(latency["ours"]) / statistics.median(latency["n8n"])
    print(f"   ours/n8n: executions per second {rate_ratio:.2f}x (higher is better for ours), "
          f"chat latency {latency_ratio:.2f}x (lower is better for ours), n8n {n8n_version()}")
    return problems


def main() -> int:
    reason = pg_unreachable()
    if reason is not None:
        print(f"bench_serve: skipped: {reason}")
        return 0
    fast = quick()
    tmp = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    failures: list[str] = []
    print(f"load average at start: {load_average()}")

    executions = 16 if fast else 60
    print(f"\n1. executions per second through serve --mode queue ({executions} executions, {ROUNDS} tool rounds each)")
    for workers, (rate, problems) in throughputs(tmp, (1, 2, 4), executions).items():
        failures += problems
        print(f"   {workers} worker(s): {rate:6.2f} executions/s  ({'ok' if not problems else f'{len(problems)} problems'})")
    if not fast:
        rate, problems = throughputs(tmp, (3,), 200)[3]
        failures += problems
        print(f"   200 executions, 3 workers: {rate:6.2f} executions/s  ({'all right, each tool call once' if not problems else problems[:3]})")

    count = 10 if fast else 42
    print(f"\n2. latency of one chat message, sequential ({count - 2} measured after 2 warm-up)")
    figures = {}
    for mode in ("regular", "queue"):
        values = latencies(tmp, mode, count)
        figures[mode] = values
        print(f"   --mode {mode:<7}: p50 {percentile(values, 50):7.1f} ms  p99 {percentile(values, 99):7.1f} ms  "
              f"min {min(values):.1f}  median {statistics.median(values):.1f}  max {max(values):.1f}")
    regular, queue = statistics.median(figures["regular"]), statistics.median(figures["queue"])
    print(f"   queue mode overhead per execution: {queue - regular:.1f} ms (median; queue/regular = {queue / regular:.2f}x)")

    trials, per_trial = (1, 12) if fast else (10, 30)
    print(f"\n3. a worker SIGKILLed at a random moment: {trials} trials of {per_trial} executions on 3 workers")
    rng = random.Random(14)
    recoveries: list[float] = []
    redelivered: list[float] = []
    for trial in range(trials):
        recovered, inside, resumed, problems = kill_trial(tmp, trial, per_trial, rng)
        recoveries.append(recovered)
        redelivered += resumed
        failures += problems
        if len(resumed) < inside:
            failures.append(f"trial {trial + 1}: the killed worker held {inside} jobs, another worker took over {len(resumed)}")
        took = ", ".join(f"{t:.2f}" for t in resumed) or "-"
        print(f"   trial {trial + 1}: killed holding {inside} job(s), taken over by another worker after {took} s; "
              f"every answer back {recovered:.1f} s after the kill  ({'ok' if not problems else problems[:3]})")
    print(f"   kill to last answer: min {min(recoveries):.1f} s  median {statistics.median(recoveries):.1f} s  max {max(recoveries):.1f} s")
    if redelivered:
        print(f"   kill to takeover (redelivery): min {min(redelivered):.2f} s  median {statistics.median(redelivered):.2f} s"
              f"  max {max(redelivered):.2f} s")

    print("\n4. RabbitMQ restarted under load (16 executions on 2 workers)")
    if fast:
        print("   skipped in quick mode")
    elif shutil.which("rabbitmqctl") is None or os.geteuid() != 0:
        print("   skipped: rabbitmqctl is not available to this user")
    else:
        problems = broker_restart(tmp)
        failures += problems
        print(f"   {'every execution completed once, the restarted broker takes new chats' if not problems else problems[:3]}")

    print("\n5. real n8n in queue mode beside ours, 2 workers each, the same workload in turns")
    if fast:
        print("   skipped in quick mode")
    elif n8n_binary() is None:
        print(f"   skipped: n8n is not installed in {n8n_dir()}")
    else:
        failures += against_n8n(tmp, 30, 20)
    print(f"load average at end: {load_average()}")
    if failures:
        print(f"\nFAILED: {len(failures)} problems, e.g. {failures[:5]}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
