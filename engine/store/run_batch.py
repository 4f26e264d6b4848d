"""The runs an execution journaled since its last fold, gathered as they are journaled into the
row a fold writes for them (run_batches: a journal record of the runs alone, see
engine.store.journal). Each run's head is packed once, for its journal record, and its crc taken
then: the fold joins what was gathered instead of packing every run again (that second packing
was about 8 % of the bytecodes the store ran per agent iteration).

The record's crc runs over its run count and then the runs' heads; the count is known only at
the fold, so the heads' crc is kept from zero and joined to the count's (crc32_combine)."""

from __future__ import annotations

import struct

from zlib_ng.zlib_ng import crc32, crc32_combine

from .journal import _COUNT, _HEAD, MAGIC, NO_BOUNDARY


class RunBatch:
    """Runs gathered in journal order: each one's head (the batch layout, journal.RUN_LAYOUT) and data."""

    __slots__ = ("parts", "heads_crc", "heads_size", "last_seq")

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.parts: list[bytes] = []  # head, data, head, data...
        self.heads_crc = 0  # crc32 of the heads alone, from zero
        self.heads_size = 0
        self.last_seq = 0

    def add(self, seq: int, head: bytes, data: bytes) -> None:
        self.parts += (head, data)
        self.heads_crc = crc32(head, self.heads_crc)
        self.heads_size += len(head)
        self.last_seq = seq

    def holds(self, first_seq: int, last_seq: int, count: int) -> bool:
        """Whether these are the runs from seq `first_seq` to `last_seq`, `count` of them."""
        parts = self.parts
        return (len(parts) == 2 * count > 0 and self.last_seq == last_seq
                and _FIRST_SEQ.unpack_from(parts[0])[0] == first_seq)

    def record(self, seed: int) -> bytes:
        """journal.encode_record(the runs, None, seed), byte for byte."""
        count = _COUNT.pack(len(self.parts) // 2)
        crc = crc32(NO_BOUNDARY, crc32_combine(crc32(count, seed), self.heads_crc, self.heads_size))
        size = len(count) + sum(map(len, self.parts)) + len(NO_BOUNDARY)
        return b"".join((_HEAD.pack(MAGIC, size, crc), count, *self.parts, NO_BOUNDARY))


_FIRST_SEQ = struct.Struct("<q")  # a run's head begins with its seq (journal.RUN_LAYOUT)
