"""LangGraph's prebuilt agent measured in a process of its own, one sample at a time on request.

Each side runs as its users run it: ours in a process holding mini-n8n only, the peer in one
holding LangGraph. With the peer's heap in our process, the collection before each sample walked
it and our runs began with cold caches: 10-15 % more per iteration, which also made the store's
share of a run look smaller than it is. The caller still interleaves: it asks for a peer sample
between its own, and the peer runs only then (never beside ours).

Run as a module, this is the peer's side: `python -m tests.benchmarks.peer_process ROUNDS
[FOLDER]` (FOLDER: with its SQLite checkpointer writing there) answers each line on its input
with one sample, `cpu_ms wall_ms` per iteration.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).parents[2]
MISSING = "missing"


class PeerSample(NamedTuple):
    cpu_ms: float  # CPU time of the peer's process per iteration
    wall_ms: float


class PeerProcess:
    """The peer's process; `sample()` runs it once there. `unavailable` says why it could not start."""

    def __init__(self, rounds: int, folder: Path | None = None) -> None:
        command = [sys.executable, "-m", "tests.benchmarks.peer_process", str(rounds)] + ([str(folder)] if folder is not None else [])
        self._process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self._process.stdout is not None
        first = self._process.stdout.readline().strip()
        self.unavailable = first[len(MISSING) + 1:] if first.startswith(MISSING) else None
        if self.unavailable is not None or first != "ready":
            self.unavailable = self.unavailable or f"its process ended before it was ready ({first or 'no output'})"
            self.close()

    def sample(self) -> PeerSample:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write("run\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline().split()
        if len(line) != 2:
            raise RuntimeError(f"the peer's process failed (exit code {self._process.poll()})")
        return PeerSample(float(line[0]), float(line[1]))

    def close(self) -> None:
        if self._process.stdin is not None and not self._process.stdin.closed:
            self._process.stdin.close()
        self._process.wait(timeout=60)


def serve(rounds: int, folder: Path | None) -> None:
    """The peer's side: a sample for each line read, after one run to warm up."""
    import io
    from contextlib import redirect_stdout

    from tests.benchmarks.bench_engine import langgraph

    with redirect_stdout(io.StringIO()) as said:  # langgraph() says why when the peer is not installed
        made = langgraph(rounds, folder)
    if made is None:
        print(f"{MISSING} {said.getvalue().strip()}", flush=True)
        return
    sample, _run_once = made
    sample()
    print("ready", flush=True)
    for _line in sys.stdin:
        measured = sample()
        print(f"{measured.cpu_ms} {measured.wall_ms}", flush=True)


if __name__ == "__main__":
    serve(int(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
