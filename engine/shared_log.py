"""Append-only logs that many readers share, each reader holding a window: the log and a length.

An agent's messages and steps grow by a few entries per round, and every recorded model run and
every round's request must keep exactly what it saw. A window keeps that at a constant cost
instead of a copy of the whole list. A log may start with the first entries of another log
(`after`): a conversation taken up again from an earlier point shares what came before that
point instead of copying it. A window reads as a JSON array (length, index, slice, iterate,
compare with lists); `plain` turns windows back into lists where JSON is written out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, count, islice
from typing import Any, Callable


_LINEAGES = count()

MAX_DEPTH = 8
"""Logs a log may stand on (each starting with the first entries of the next); past this, `after`
copies the entries instead, so that reading an entry never walks a long chain."""


class SharedLog:
    """A list that is only ever appended to, so the first n entries never change. A log made by
    `after` starts with the first `start` entries of its `base` and holds only its own in `items`.
    `lineage` names the sequence of logs one conversation went through: a new log has its own,
    a log made by `after` keeps its base's."""

    __slots__ = ("items", "_parallel", "lineage", "base", "start", "depth", "__weakref__")

    def __init__(self, items: Iterable[Any] = ()) -> None:
        self.items: list[Any] = list(items)
        self._parallel: dict[str, tuple[Callable[[Any], Any], SharedLog]] = {}
        self.lineage = next(_LINEAGES)
        self.base: SharedLog | None = None
        self.start = 0
        self.depth = 0

    @property
    def size(self) -> int:
        """How many entries the log holds, those of its base included."""
        return self.start + len(self.items)

    def window(self) -> "LogWindow":
        """A window on everything appended so far."""
        return LogWindow(self, self.size)

    def after(self, length: int) -> "SharedLog":
        """A new log starting with this log's first `length` entries, and with what each parallel
        log has made of them (neither made nor copied again, unless the chain is too long)."""
        if self.depth >= MAX_DEPTH:
            return self._copy_of_first(length)
        log = SharedLog()
        log.lineage, log.base, log.start, log.depth = self.lineage, self, length, self.depth + 1
        return log

    def _copy_of_first(self, length: int) -> "SharedLog":
        log = SharedLog(LogWindow(self, length).to_list())
        log.lineage = self.lineage
        for name, (convert, parallel) in self._parallel.items():
            made = SharedLog(LogWindow(parallel, min(length, parallel.size)).to_list())
            made.lineage = parallel.lineage
            log._parallel[name] = (convert, made)
        return log

    def parallel(self, name: str, convert: Callable[[Any], Any]) -> "SharedLog":
        """A log whose entry i is `convert` of this log's entry i, made once per entry and kept
        (such as the JSON of each message, for every recorded run that saw it); a log made by
        `after` starts with its base's. Call `fill` before reading."""
        found = self._parallel.get(name)
        if found is None:
            if self.base is None:
                made = SharedLog()
            else:
                self.base.parallel(name, convert)
                made = self.base.fill(name, self.start).after(self.start)
            found = self._parallel[name] = (convert, made)
        return found[1]

    def fill(self, name: str, upto: int) -> "SharedLog":
        """The parallel log `name` with its entries up to `upto` made (it holds those before this
        log's own from the start)."""
        convert, log = self._parallel[name]
        have = log.size
        if have < upto:
            log.items.extend(map(convert, self.items[have - self.start:upto - self.start]))
        return log

    def entry(self, index: int) -> Any:
        """Entry `index` (0 <= index < size)."""
        log = self
        while index < log.start:
            log = log.base  # type: ignore[assignment]
        return log.items[index - log.start]


class LogWindow(Sequence[Any]):
    """The first `length` entries of a SharedLog: what one run or one round saw (read-only)."""

    __slots__ = ("log", "length")

    def __init__(self, log: SharedLog, length: int) -> None:
        self.log = log
        self.length = length

    @classmethod
    def of(cls, values: Iterable[Any]) -> "LogWindow":
        """A window on a new log holding `values`."""
        return SharedLog(values).window()

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            log = self.log
            if log.base is None and index.step is None:  # the common case: one list's slice
                start, stop, _ = index.indices(self.length)
                return log.items[start:stop]
            entry = log.entry
            return [entry(i) for i in range(self.length)[index]]
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError("log window index out of range")
        return self.log.entry(index)

    def tail(self, start: int) -> list[Any]:
        """The entries from `start` on, as a list (`window[start:]` without a slice object)."""
        log = self.log
        if log.base is None:
            return log.items[start:self.length]
        return list(self._from(start))

    def segments(self) -> list[tuple[SharedLog, int, int]]:
        """The entries as runs of logs' own entries, first to last: (log, first, end) for each,
        in positions of the window."""
        out = []
        log: SharedLog | None = self.log
        end = self.length
        while log is not None and end > 0:
            if end > log.start:
                out.append((log, log.start, end))
                end = log.start
            log = log.base
        out.reverse()
        return out

    def _from(self, position: int) -> Iterator[Any]:
        """The entries from `position` on."""
        log = self.log
        if log.base is None:
            return islice(log.items, position, self.length)
        return chain.from_iterable(
            islice(part.items, max(position, first) - part.start, end - part.start)
            for part, first, end in self.segments() if end > position)

    def __iter__(self) -> Iterator[Any]:
        return self._from(0)

    def __reversed__(self) -> Iterator[Any]:
        entry = self.log.entry
        return (entry(i) for i in range(self.length - 1, -1, -1))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LogWindow):
            if other.log is self.log:
                return other.length == self.length
            return other.length == self.length and all(a is b or a == b for a, b in zip(self, other))
        if isinstance(other, (list, tuple)):
            return len(other) == self.length and all(a is b or a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which do not hash either

    def __repr__(self) -> str:
        return repr(self.to_list())

    def to_list(self) -> list[Any]:
        log = self.log
        if log.base is None:
            return log.items[: self.length]
        return list(self._from(0))

    def shared_with(self, other: "LogWindow") -> int:
        """How many first entries this window and `other` share (the very objects): found from
        the logs they stand on, then entry by entry."""
        if other.log is self.log:
            return min(self.length, other.length)
        shared = 0
        for (mine, first, end), (theirs, their_first, their_end) in zip(self.segments(), other.segments()):
            if mine is not theirs or first != their_first:
                break
            shared = min(end, their_end)
            if end != their_end:
                break
        for a, b in zip(self._from(shared), other._from(shared)):
            if a is not b:
                break
            shared += 1
        return shared

    def extended(self, values: Iterable[Any]) -> "LogWindow":
        """This window followed by `values`. Appended to the same log when nothing came after this
        window yet (the cost is that of `values`); otherwise on a new log that starts with this
        window's entries (see SharedLog.after)."""
        log = self.log
        if self.length != log.size:
            log = log.after(self.length)
        log.items.extend(values)
        return log.window()

    def mapped(self, name: str, convert: Callable[[Any], Any]) -> "LogWindow":
        """The same window on the log's parallel log `name` (see SharedLog.parallel)."""
        self.log.parallel(name, convert)
        return LogWindow(self.log.fill(name, self.length), self.length)


def plain(value: Any) -> Any:
    """`value` with every window in it a list, for json.dumps and pydantic. Windows are kept as
    values of dicts and of short lists (run data's items), so long lists are not walked."""
    if isinstance(value, LogWindow):
        return value.to_list()
    if isinstance(value, dict):
        out: dict[str, Any] | None = None
        for key, item in value.items():
            converted = plain(item)
            if converted is not item:
                if out is None:
                    out = dict(value)
                out[key] = converted
        return value if out is None else out
    if isinstance(value, list) and len(value) <= 4:
        converted_list = [plain(item) for item in value]
        return value if all(map(_is, converted_list, value)) else converted_list
    return value


def _is(a: Any, b: Any) -> bool:
    return a is b


def copied(value: Any) -> Any:
    """A copy of JSON `value` whose dicts and lists are new (windows, immutable, are kept): what a
    caller may change without changing `value`."""
    kind = type(value)
    if kind is dict:
        return {k: copied(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if kind is list:
        return [copied(v) if type(v) in _CONTAINERS else v for v in value]
    return value


_CONTAINERS = (dict, list)
