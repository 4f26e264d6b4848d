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
