"""Append-only logs that many readers share, each reader holding a window: the log and a length.

An agent's messages and steps grow by a few entries per round, and every recorded model run and
every round's request must keep exactly what it saw. A window keeps that at a constant cost
instead of a copy of the whole list. It reads as a JSON array (length, index, slice, iterate,
compare with lists); `plain` turns windows back into lists where JSON is written out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import count, islice
from typing import Any, Callable


_LINEAGES = count()


class SharedLog:
    """A list that is only ever appended to, so the first n entries never change. `lineage`
    names the sequence of logs one conversation went through: a new log has its own, a `prefix`
    of a log (a conversation taken up again from an earlier point) keeps its log's."""

    __slots__ = ("items", "_parallel", "lineage", "__weakref__")

    def __init__(self, items: Iterable[Any] = ()) -> None:
        self.items: list[Any] = list(items)
        self._parallel: dict[str, tuple[Callable[[Any], Any], SharedLog]] = {}
        self.lineage = next(_LINEAGES)

    def window(self) -> "LogWindow":
        """A window on everything appended so far."""
        return LogWindow(self, len(self.items))

    def parallel(self, name: str, convert: Callable[[Any], Any]) -> "SharedLog":
        """A log whose entry i is `convert(self.items[i])`, made once per entry and kept (such as
        the JSON of each message, for every recorded run that saw it). Call `fill` before reading."""
        found = self._parallel.get(name)
        if found is None:
            found = self._parallel[name] = (convert, SharedLog())
        return found[1]

    def prefix(self, length: int) -> "SharedLog":
        """A new log holding this log's first `length` entries, and what each parallel log has
        made of them (not made again)."""
        log = SharedLog(self.items[:length])
        log.lineage = self.lineage
        for name, (convert, parallel) in self._parallel.items():
            made = SharedLog(parallel.items[:length])
            made.lineage = parallel.lineage
            log._parallel[name] = (convert, made)
        return log

    def fill(self, name: str, upto: int) -> "SharedLog":
        """The parallel log `name` with its entries up to `upto` made."""
        convert, log = self._parallel[name]
        have = len(log.items)
        if have < upto:
            log.items.extend(map(convert, self.items[have:upto]))
        return log


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
            return [self.log.items[i] for i in range(self.length)[index]]
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError("log window index out of range")
        return self.log.items[index]

    def __iter__(self) -> Iterator[Any]:
        return islice(self.log.items, self.length)

    def __reversed__(self) -> Iterator[Any]:
        items = self.log.items
        return (items[i] for i in range(self.length - 1, -1, -1))

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
        return self.log.items[: self.length]

    def extended(self, values: Iterable[Any]) -> "LogWindow":
        """This window followed by `values`. Appended to the same log when nothing came after this
        window yet (the cost is that of `values`); otherwise a new log starts from a copy."""
        log = self.log
        if self.length != len(log.items):
            log = SharedLog(log.items[: self.length])
        log.items.extend(values)
        return LogWindow(log, len(log.items))

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
