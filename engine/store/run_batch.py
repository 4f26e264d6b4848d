"""The runs an execution journaled since its last fold, gathered as they are journaled into the
row a fold writes for them (run_batches: a journal record of the runs alone, see
engine.store.journal). Each run's head is packed once, for its journal record: the fold joins
what was gathered instead of packing every run again (that second packing was about 8 % of the
bytecodes the store ran per agent iteration), and takes the record's crc over the heads joined,
one call, rather than a call per run as it is journaled."""

from __future__ import annotations

import struct

from zlib_ng.zlib_ng import crc32

from .journal import _COUNT, _HEAD, MAGIC, NO_BOUNDARY


class RunBatch:
    """Runs gathered in journal order: each one's head (the batch layout, journal.RUN_LAYOUT) and data."""

    __slots__ = ("parts", "last_seq")

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.parts: list[bytes] = []  # head, data, head, data...
        self.last_seq = 0

    def add(self, seq: int, head: bytes, data: bytes) -> None:
        self.parts += (head, data)
        self.last_seq = seq

    def holds(self, first_seq: int, last_seq: int, count: int) -> bool:
        """Whether these are the runs from seq `first_seq` to `last_seq`, `count` of them."""
        parts = self.parts
        return (len(parts) == 2 * count > 0 and self.last_seq == last_seq
                and _FIRST_SEQ.unpack_from(parts[0])[0] == first_seq)

    def record(self, seed: int) -> bytes:
        """journal.encode_record(the runs, None, seed), byte for byte: its crc runs over the run
        count, the runs' heads and the has-boundary byte."""
        parts = self.parts
        count = _COUNT.pack(len(parts) // 2)
        crc = crc32(NO_BOUNDARY, crc32(b"".join(parts[0::2]), crc32(count, seed)))
        size = len(count) + sum(map(len, parts)) + len(NO_BOUNDARY)
        return b"".join((_HEAD.pack(MAGIC, size, crc), count, *parts, NO_BOUNDARY))


_FIRST_SEQ = struct.Struct("<q")  # a run's head begins with its seq (journal.RUN_LAYOUT)
