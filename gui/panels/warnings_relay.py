"""Warnings the engine and nodes log (a credential file others can read, a Code Tool that ran
without some protection, a setting that was ignored), brought into the editor.

The engine says them through Python logging, which in a terminal reaches stderr and in the
editor reached no one. One relay per process listens on the engine's and the nodes' loggers and
re-emits each warning as a Qt signal on the GUI thread (a warning may be logged on the model's
or the loop's thread); it keeps what was said, so a panel made later still shows it.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal

WATCHED_LOGGERS = ("engine", "nodes")


class _Forward(logging.Handler):
    def __init__(self, relay: WarningRelay) -> None:
        super().__init__(logging.WARNING)
        self.relay = relay

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a malformed log call must not break the run that made it
            self.handleError(record)
            return
        self.relay.said.append(text)
        self.relay.warned.emit(text)


class WarningRelay(QObject):
    """`warned(text)` for each warning (or worse) logged under `engine` or `nodes`; `said` keeps them."""

    warned = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.said: list[str] = []
        self._handler = _Forward(self)
        for name in WATCHED_LOGGERS:
            logging.getLogger(name).addHandler(self._handler)

    def close(self) -> None:
        for name in WATCHED_LOGGERS:
            logging.getLogger(name).removeHandler(self._handler)


_relay: WarningRelay | None = None


def warning_relay() -> WarningRelay:
    """The process's relay, listening from its first use on."""
    global _relay
    if _relay is None:
        _relay = WarningRelay()
    return _relay
