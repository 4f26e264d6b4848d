"""How the CLI meets its terminal: output that survives a closed pipe, and Ctrl-C.

`mini-n8n run … | head -1` closes stdout under a running CLI; Ctrl-C sends SIGINT. Either ends
the command quietly with the conventional shell exit code, never with a traceback.
"""

from __future__ import annotations

import io
import os
import sys
from typing import Callable

EXIT_INTERRUPTED = 130  # 128 + SIGINT: what a shell reports for a command ended by Ctrl-C
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader went away


def prepare_stdout() -> None:
    """Print any text: a string the terminal cannot encode (a lone surrogate) is shown escaped."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def silence_stdout() -> None:
    """Send whatever is still written to stdout (and Python's last flush at exit) to /dev/null."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


class Output:
    """Lines to stdout; when its reader goes away, `closed` is set, stdout is silenced and
    `on_closed` is called once (the CLI stops its run)."""

    def __init__(self) -> None:
        self.closed = False
        self.on_closed: Callable[[], None] | None = None

    def line(self, text: str = "") -> None:
        if self.closed:
            return
        try:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            self.closed = True
            silence_stdout()
            if self.on_closed is not None:
                self.on_closed()
