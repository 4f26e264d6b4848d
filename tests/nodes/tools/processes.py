"""Find the processes a sandboxed test tool started, by the name it gave them (/proc/PID/comm)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

NAME_A_PROCESS = "import ctypes; ctypes.CDLL(None).prctl(15, {name!r}.encode(), 0, 0, 0)"  # PR_SET_NAME


def processes_named(name: str) -> list[int]:
    """The living processes of that name: a killed one waiting to be reaped (a zombie, state Z)
    keeps its name until its parent, often PID 1 for an orphan, gets round to it."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == name and _state(entry) != "Z":
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def _state(entry: Path) -> str:
    """The process state letter of /proc/PID/stat, after the name in parentheses."""
    stat = (entry / "stat").read_text()
    return stat[stat.rindex(")") + 2]


async def wait_gone(name: str, timeout_s: float = 5.0) -> list[int]:
    """The processes of that name still alive after a bounded wait: SIGKILL is sent at once, but a
    process ends a moment later."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while (alive := processes_named(name)) and loop.time() < deadline:
        await asyncio.sleep(0.01)
    return alive


def kill_all(pids: list[int]) -> None:
    """Clean up after a failed test: the processes the sandbox should have ended."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
