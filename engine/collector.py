"""Python's cyclic garbage collector while runs are active: it runs less often.

A long agent run keeps its run data (a few thousand objects per iteration) alive to its end; with
Python's default thresholds the collector walks that growing heap over and over, which made an
iteration at 5,000 iterations cost 1.4-1.6 times one at 100. While any run is active the
youngest generation is collected every 2,000 allocations (a young collection's pause grows with
the objects it walks: 10-16 ms at 10,000 in an editor's run, a stall of the window), generation 1
after every 10 of those, and the whole heap only after 500 collections of generation 1 (10
million allocations, as rare as before). A collection of generation 1 walks what survived the
young collections since the last one: after 10 of them it takes 4-10 ms in a run of 5,000
iterations on a 2-core machine, where after 50 it took 27-48 ms (and a quarter to a half more
in all).

The previous thresholds come back when the last run ends. The collections of generation 1 made
during the runs still count towards the next full collection, and when they already pass the
restored threshold, the next of them would be a full one and walk everything the run left while
its caller still holds it (150-250 ms after a long run). That collection is put off by as many
collections of generation 1 as the threshold asks for (by then the caller has usually let the
run go), and the threshold itself comes back once a full collection has happened.
Reference counting still frees at once everything that is not part of a cycle.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

RUN_THRESHOLDS = (2_000, 10, 500)

_lock = threading.Lock()
_active = 0
_saved: tuple[int, int, int] | None = None
_deferred: tuple[int, int] | None = None  # (the generation-2 threshold set at a run's end, the one it stands in for)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the collector's thresholds (never lower them) until the last active run ends."""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = _thresholds_outside_runs()
            gc.set_threshold(*(max(mine, theirs) for mine, theirs in zip(RUN_THRESHOLDS, _saved)))
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _saved is not None:
                _restore(_saved)
                _saved = None


def _thresholds_outside_runs() -> tuple[int, int, int]:
    """The thresholds in force outside runs, with a full collection put off by _restore read as
    the threshold it stands in for."""
    current = gc.get_threshold()
    deferred = _deferred
    if deferred is not None and current[2] == deferred[0]:
        return (current[0], current[1], deferred[1])
    return current


def _restore(saved: tuple[int, int, int]) -> None:
    """Set `saved` back, unless the collections of generation 1 made during the runs already pass
    its generation-2 threshold: then that threshold is set as many further collections away, and
    comes back after the next full collection (_after_full)."""
    global _deferred
    made = gc.get_count()[2]  # collections of generation 1 since the last full one
    if made <= saved[2]:  # Python collects a generation once its count passes its threshold
        gc.set_threshold(*saved)
        return
    later = made + saved[2]
    _deferred = (later, saved[2])
    gc.set_threshold(saved[0], saved[1], later)
    # added once and kept: taken out while a collection calls the list, another callback could be skipped
    if _after_full not in gc.callbacks:
        gc.callbacks.append(_after_full)


def _after_full(phase: str, info: dict[str, Any]) -> None:
    """After a full collection the generation-2 threshold put off by _restore comes back (when no
    run has raised it since: a run's thresholds are restored at its end)."""
    global _deferred
    deferred = _deferred
    if phase != "stop" or info["generation"] != 2 or deferred is None:
        return
    _deferred = None
    current = gc.get_threshold()
    if current[2] == deferred[0]:
        gc.set_threshold(current[0], current[1], deferred[1])


def pause_collections() -> Callable[[], None]:
    """Turn the collector off while a start-up builds what it keeps (imports, the window): it
    would walk those objects over and over, a tenth of the editor's time to its first frame.
    Returns the function that turns it back on (a no-op when it was off already)."""
    if not gc.isenabled():
        return lambda: None
    gc.disable()
    return gc.enable
