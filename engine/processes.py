"""Whether a process is still there: how a store or a recovery file tells a crash from a live run."""

from __future__ import annotations

import os


def pid_alive(pid: int | None) -> bool:
    """True while process `pid` exists (even one we may not signal); False for none or a gone one."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot, Linux), to tell it from a later process
    given the same pid; None where the system does not say."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # after the command name, which may hold spaces
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def same_process_alive(pid: int | None, started: int | None) -> bool:
    """True while the process that was `pid`, started at `started` (if known), still runs."""
    if not pid_alive(pid):
        return False
    if started is None or pid is None:
        return True
    now = start_time(pid)
    return now is None or now == started
