"""Find the processes a sandboxed test tool started, by the name it gave them (/proc/PID/comm)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

NAME_A_PROCESS = "import ctypes; ctypes.CDLL(None).prctl(15, {name!r}.encode(), 0, 0, 0)"  # PR_SET_NAME


def processes_named(name: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == name:
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def kill_all(pids: list[int]) -> None:
    """Clean up after a failed test: the processes the sandbox should have ended."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
