"""The boundary journal: an append-only file per running execution, one record per node boundary.

The file is mapped into memory (shared with the kernel's page cache): appending a record is a
copy into the mapping, and once it is made the boundary survives the process being killed (the
kernel holds the page, as it would hold a write()'s bytes) — a fraction of a microsecond where a
write() call costs a few and an SQLite commit a hundred. The store folds journaled records into
the database in groups (one transaction for many boundaries) and empties the journal; after a
crash, whoever marks the execution crashed folds what the dead process left. Each record
carries its length and a CRC-32, and is followed by an end mark (zero bytes, overwritten by the
next record): reading stops at the end mark, so a torn record or what an emptied journal held
before is never read. An ended execution's journal, emptied once its end is folded in, is taken
over by one of the process's next executions under the same name (engine.store.journal_folder):
writing into pages the file already has costs a third of allocating new ones, and a rename is a
transaction of the file system's own journal (tens of microseconds, twice a run when a journal
was named for its execution). The record's crc starts from a CRC-32 of the execution id, so a
record of the execution that used the file before never reads as one of the next. The file's
blocks are allocated before it is mapped (`reserve`): a full disk is then an error, where a write
to a mapped page the disk has no room for would kill the process.

Record: b"MS" u32 body-length u32 crc, then body: u16 run count, each run
(q seq, q run index, q base or -1, u16 node length, node, u32 data length, u32 data crc, data),
then u8 has-boundary and the boundary (q seq, q runs, q base or -1 for a whole stack,
u16 last-node length or 0xFFFF for none, last node, u32 stack length, u32 stack crc, stack).
The record's crc covers the body without the data and stack bytes, which their own crcs cover
(computed once, for the database row): the bytes are not checksummed twice. Records of the
older layouts are still read: b"MC" (the same crc, not started from the execution id) and b"MB"
(the crc over the whole body).

Every journal in use starts with a start record (b"MH"): the execution it holds, its row as it
began and its workflow. It names the journal's execution (a file's name does not) and stays at
the head while the execution is written (folds empty what follows it). For a new execution the
row and workflow reach the database with the first fold; until then the journal is all there
is of it (its owner's pid and start time say whether the process that writes it still lives).
Body: u32 meta length, meta (JSON: id, owner pid and start time, the row's fields, the
workflow's hash and crc), the workflow's JSON; the record's crc covers the meta, the workflow
crc its bytes.

An execution that ended has an end record (b"ME") after its last record: how it ended, its
row's fields as the store writes them. Ended executions are folded into the database together
(one transaction for several runs' ends); until then the end record is what says it ended, and
whoever recovers the journal of a process that died meanwhile stores the execution as it ended,
not as crashed. Body: d stopped-at (NaN for none), u16 status length, status, then the error,
result and pause blobs, each u32 length (0xFFFFFFFF for none) and its bytes; the crc (started
from the execution's, as a boundary record's) covers the body.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zlib_ng.zlib_ng import crc32

from ..errors import MiniN8nError

if TYPE_CHECKING:
    from .run_batch import RunBatch

MAGIC = b"MS"
START_MAGIC = b"MH"
END_MAGIC = b"ME"
UNSALTED_MAGIC = b"MC"  # the older layouts
WHOLE_BODY_MAGIC = b"MB"
_HEAD = struct.Struct("<2sII")
_RUN = struct.Struct("<qqqH")
_BLOB = struct.Struct("<II")
_BOUNDARY = struct.Struct("<qqqH")
_COUNT = struct.Struct("<H")
_META_LENGTH = struct.Struct("<I")
_END = struct.Struct("<dH")
_FIELD_LENGTH = struct.Struct("<I")
NO_FIELD = 0xFFFFFFFF
NO_NODE = 0xFFFF
END = bytes(_HEAD.size)  # after the last record: a header no record has
END_SIZE = len(END)
MAPPED_BYTES = 1 << 20  # the journal file's first size; it doubles when a record does not fit

RunRow = tuple[str, int, str, int, "int | None", bytes, int]  # execution, seq, node, run index, base, task, crc
BoundaryRow = tuple[str, int, int, "str | None", "int | None", bytes, int]  # execution, seq, runs, last node, base, stack, crc


@dataclass(frozen=True)
class Start:
    """A start record: the execution a journal holds, its owner, and its row and workflow (in the
    database from its first fold on, for a new execution)."""

    execution_id: str
    owner_pid: int
    owner_start: int | None
    row: dict[str, Any]  # the executions row's fields, by column
    workflow_hash: str
    workflow: bytes
    workflow_crc: int


def encode_start(start: Start) -> bytes:
    meta = json.dumps({"id": start.execution_id, "pid": start.owner_pid, "start": start.owner_start, "row": start.row,
                       "hash": start.workflow_hash, "crc": start.workflow_crc}, ensure_ascii=True).encode("ascii")
    head = _META_LENGTH.pack(len(meta))
    return b"".join((_HEAD.pack(START_MAGIC, len(head) + len(meta) + len(start.workflow), crc32(meta, crc32(head))),
                     head, meta, start.workflow))


def _decode_start(raw: bytes | memoryview, pos: int = 0) -> tuple[Start, int] | None:
    """The start record at `pos` and where the next record begins; None when there is none there
    or it is torn or damaged."""
    if len(raw) < pos + _HEAD.size + _META_LENGTH.size:
        return None
    magic, length, crc = _HEAD.unpack_from(raw, pos)
    body = bytes(raw[pos + _HEAD.size: pos + _HEAD.size + length])
    if magic != START_MAGIC or len(body) != length or length < _META_LENGTH.size:
        return None
    (meta_length,) = _META_LENGTH.unpack_from(body)
    meta_end = _META_LENGTH.size + meta_length
    if meta_end > length or crc32(body[_META_LENGTH.size:meta_end], crc32(body[:_META_LENGTH.size])) != crc:
        return None
    workflow = body[meta_end:]
    try:
        meta = json.loads(body[_META_LENGTH.size:meta_end])
        start = Start(str(meta["id"]), int(meta["pid"]), None if meta["start"] is None else int(meta["start"]), dict(meta["row"]),
                      str(meta["hash"]), workflow, int(meta["crc"]))
    except (ValueError, KeyError, TypeError):
        return None
    if crc32(workflow) != start.workflow_crc:
        return None
    return start, pos + _HEAD.size + length


def read_start(path: Path) -> Start | None:
    """The start record a journal begins with (None: it has none, or is gone)."""
    try:
        with open(path, "rb") as file:
            head = file.read(_HEAD.size)
            if len(head) < _HEAD.size or head[:2] != START_MAGIC:
                return None
            found = _decode_start(head + file.read(_HEAD.unpack(head)[1]))
    except OSError:
        return None
    return found[0] if found is not None else None


@dataclass(frozen=True)
class RowStatus:
    """An execution row's status, stop time and error, result and pause blobs (codec.row_fields):
    what an end record holds."""

    status: str
    stopped_at: float | None
    fields: tuple[bytes | None, bytes | None, bytes | None]


def encode_end(end: RowStatus, seed: int) -> bytes:
    """An end record; `seed` is salt(execution id)."""
    status = end.status.encode("ascii")
    parts = [_END.pack(math.nan if end.stopped_at is None else end.stopped_at, len(status)), status]
    for blob in end.fields:
        parts.append(_FIELD_LENGTH.pack(NO_FIELD if blob is None else len(blob)))
        if blob is not None:
            parts.append(blob)
    body = b"".join(parts)
    return b"".join((_HEAD.pack(END_MAGIC, len(body), crc32(body, seed)), body))


def _read_end(body: bytes, crc: int, seed: int) -> RowStatus | None:
    """The end record of `body`; None when it is damaged."""
    if crc32(body, seed) != crc:
        return None
    try:
        stopped, status_length = _END.unpack_from(body)
        at = _END.size + status_length
        status = body[_END.size:at].decode("ascii")
        fields: list[bytes | None] = []
        for _ in range(3):
            (length,) = _FIELD_LENGTH.unpack_from(body, at)
            at += _FIELD_LENGTH.size
            if length == NO_FIELD:
                fields.append(None)
                continue
            fields.append(body[at:at + length])
            at += length
    except (struct.error, UnicodeDecodeError):
        return None
    if at != len(body):
        return None
    return RowStatus(status, None if math.isnan(stopped) else stopped, (fields[0], fields[1], fields[2]))


@dataclass
class Pending:
    """Journaled rows not yet in the database, in order, and the execution's end when it has one."""

    runs: list[RunRow] = field(default_factory=list)
    boundaries: list[BoundaryRow] = field(default_factory=list)
    end: RowStatus | None = None

    def __bool__(self) -> bool:
        return bool(self.runs or self.boundaries or self.end)

    def clear(self) -> None:
        self.runs.clear()
        self.boundaries.clear()
        self.end = None


def salt(execution_id: str) -> int:
    """Where an execution's record crcs start: a record of another execution fails its check."""
    return crc32(execution_id.encode("utf-8", "surrogatepass"))


def _named_head(cache: dict[str, tuple[struct.Struct, bytes]], node: str, layout: str) -> tuple[struct.Struct, bytes]:
    """The Struct of `layout` with the name of `node` packed in (its `{}`: the name's length), kept
    in `cache` per name: a run's head is one pack."""
    head = cache.get(node)
    if head is None:
        if len(cache) >= HEADS_CACHED:
            cache.clear()
        name = node.encode("utf-8", "surrogatepass")
        head = cache[node] = (struct.Struct(layout.format(len(name))), name)
    return head


def _boundary_head(last_node: str | None) -> tuple[struct.Struct, bytes, int]:
    """The Struct of a boundary's head (its has-boundary byte and last node's name packed in)."""
    head = _BOUNDARY_HEADS.get(last_node)
    if head is None:
        if len(_BOUNDARY_HEADS) >= HEADS_CACHED:
            _BOUNDARY_HEADS.clear()
        name = b"" if last_node is None else last_node.encode("utf-8", "surrogatepass")
        head = _BOUNDARY_HEADS[last_node] = (struct.Struct(f"<BqqqH{len(name)}sII"), name,
                                             NO_NODE if last_node is None else len(name))
    return head


_RUN_HEADS: dict[str, tuple[struct.Struct, bytes]] = {}
RUN_LAYOUT = "<qqqH{}sII"
_LONE_RUN_HEADS: dict[str, tuple[struct.Struct, bytes]] = {}  # a record's run count (1) with its one run's head
LONE_RUN_LAYOUT = "<HqqqH{}sII"
_BOUNDARY_HEADS: dict[str | None, tuple[struct.Struct, bytes, int]] = {}
HEADS_CACHED = 1024  # node names whose heads are kept (emptied when full)
NO_BOUNDARY = b"\x00"


def encode_record(runs: list[RunRow], boundary: BoundaryRow | None, seed: int, batch: RunBatch | None = None) -> bytes:
    """One record; `seed` is salt(execution id). The crc runs over the heads (the same value as
    over the heads joined), each head one pack of a Struct kept per node name; a record of one
    run, the usual one, packs the run count with the run's head. Each run's head and data also
    go to `batch`, when given (the row the next fold writes for them: engine.store.run_batch)."""
    if boundary is None:
        tail, tail_data = NO_BOUNDARY, b""
    else:
        _eid, seq, runs_count, last_node, base, tail_data, data_crc = boundary
        shape, name, name_len = _BOUNDARY_HEADS.get(last_node) or _boundary_head(last_node)
        tail = shape.pack(1, seq, runs_count, -1 if base is None else base, name_len, name, len(tail_data), data_crc)
    if len(runs) == 1:
        _eid, seq, node, run_index, base, data, data_crc = runs[0]
        shape, name = _LONE_RUN_HEADS.get(node) or _named_head(_LONE_RUN_HEADS, node, LONE_RUN_LAYOUT)
        head = shape.pack(1, seq, run_index, -1 if base is None else base, len(name), name, len(data), data_crc)
        if batch is not None:
            batch.add(seq, head[_COUNT.size:], data)  # its head without the record's run count
        size = len(head) + len(data) + len(tail) + len(tail_data)
        return b"".join((_HEAD.pack(MAGIC, size, crc32(tail, crc32(head, seed))), head, data, tail, tail_data))
    head = _COUNT.pack(len(runs))
    crc = crc32(head, seed)
    parts = [b"", head]
    size = len(head)
    for _eid, seq, node, run_index, base, data, data_crc in runs:
        shape, name = _RUN_HEADS.get(node) or _named_head(_RUN_HEADS, node, RUN_LAYOUT)
        head = shape.pack(seq, run_index, -1 if base is None else base, len(name), name, len(data), data_crc)
        crc = crc32(head, crc)
        parts += (head, data)
        if batch is not None:
            batch.add(seq, head, data)
        size += len(head) + len(data)
    parts += (tail, tail_data)
    parts[0] = _HEAD.pack(MAGIC, size + len(tail) + len(tail_data), crc32(tail, crc))
    return b"".join(parts)


def decode_records(execution_id: str, raw: bytes) -> Pending:
    """The rows of every whole record in `raw`; a torn or damaged tail ends the reading."""
    out = Pending()
    pos = 0
    seed = salt(execution_id)
    started = _decode_start(raw)
    if started is not None:  # the execution's row, in the database once anything of it was folded
        if started[0].execution_id != execution_id:
            return out
        pos = started[1]
    while pos + _HEAD.size <= len(raw):
        magic, length, crc = _HEAD.unpack_from(raw, pos)
        body = raw[pos + _HEAD.size: pos + _HEAD.size + length]
        if len(body) != length:
            break
        if magic == WHOLE_BODY_MAGIC:
            if crc32(body) != crc:
                break
            record = _read_body(execution_id, body, None, 0)
        elif magic == MAGIC:
            record = _read_body(execution_id, body, crc, seed)
        elif magic == UNSALTED_MAGIC:
            record = _read_body(execution_id, body, crc, 0)
        elif magic == END_MAGIC:
            end = _read_end(body, crc, seed)
            if end is None:
                break
            out.end = end
            pos += _HEAD.size + length
            continue
        else:
            break
        if record is None:
            break
        pos += _HEAD.size + length
        out.runs += record.runs
        out.boundaries += record.boundaries
    return out


def _read_body(execution_id: str, body: bytes, meta_crc: int | None, seed: int) -> Pending | None:
    """One record's rows; None when it is damaged. With `meta_crc` (the current layout) the crc of
    the body without its blobs is checked against it, and each blob against its own crc."""
    out = Pending()
    meta = 0
    try:
        at = 0
        (count,) = _COUNT.unpack_from(body, at)
        at += _COUNT.size
        meta = crc32(body[:at], seed)
        for _ in range(count):
            start = at
            seq, run_index, base, name_len = _RUN.unpack_from(body, at)
            at += _RUN.size
            node = body[at: at + name_len].decode("utf-8", "surrogatepass")
            at += name_len
            size, data_crc = _BLOB.unpack_from(body, at)
            at += _BLOB.size
            meta = crc32(body[start:at], meta)
            data = body[at: at + size]
            if meta_crc is not None and (len(data) != size or crc32(data) != data_crc):
                return None
            out.runs.append((execution_id, seq, node, run_index, None if base < 0 else base, data, data_crc))
            at += size
        start = at
        if body[at: at + 1] == b"\x01":
            at += 1
            seq, runs_count, base, name_len = _BOUNDARY.unpack_from(body, at)
            at += _BOUNDARY.size
            last_node = None if name_len == NO_NODE else body[at: at + name_len].decode("utf-8", "surrogatepass")
            at += 0 if name_len == NO_NODE else name_len
            size, data_crc = _BLOB.unpack_from(body, at)
            at += _BLOB.size
            meta = crc32(body[start:at], meta)
            data = body[at: at + size]
            if meta_crc is not None and (len(data) != size or crc32(data) != data_crc):
                return None
            out.boundaries.append((execution_id, seq, runs_count, last_node, None if base < 0 else base, data, data_crc))
        else:
            meta = crc32(body[start:at + 1], meta)
    except (struct.error, UnicodeDecodeError):
        return None
    if meta_crc is not None and meta != meta_crc:
        return None
    return out


_allocate = getattr(os, "posix_fallocate", None)  # not on macOS and Windows


def reserve(fd: int, size: int, path: Path) -> None:
    """Make the journal file `size` bytes long with its blocks allocated on disk (reading as
    zeros: an end mark), before it is mapped. Writing to a mapped page the disk has no room for
    kills the process (SIGBUS, no error to catch): on a full disk the store fails here instead,
    with an error naming the file."""
    try:
        if _allocate is not None:
            _allocate(fd, 0, size)
        else:  # the new part written as zeros, which allocates it
            at = os.fstat(fd).st_size
            while at < size:
                at += os.pwrite(fd, bytes(min(size - at, MAPPED_BYTES)), at)
    except OSError as exc:
        raise MiniN8nError(f"the execution store's journal {path} cannot have {size:,} bytes on disk:"
                           f" {exc.strerror or exc}") from None


class Journal:
    """One execution's journal file (at a time), created at its first record and mapped into memory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._map: mmap.mmap | None = None
        self._end = 0  # where the next record goes (the end mark is there)
        self._last_end = -1  # where a record may end at most, its end mark after it (-1: nothing mapped)

    @property
    def has_file(self) -> bool:
        return self._map is not None

    def _open(self, size: int) -> None:
        if self._fd is None:
            if not self.path.parent.is_dir():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
            self._fd = os.open(self.path, flags, 0o600)
        try:
            reserve(self._fd, size, self.path)  # before the old mapping goes: a failure leaves the journal as it was
        except MiniN8nError:
            if self._map is None:  # a file just made: not left behind
                os.close(self._fd)
                self._fd = None
                self.path.unlink(missing_ok=True)
            raise
        if self._map is not None:
            self._map.close()
        self._map = mmap.mmap(self._fd, size)
        self._last_end = size - END_SIZE

    def append(self, record: bytes) -> None:
        start = self._end
        end = start + len(record)
        if end > self._last_end:
            self._open(max(MAPPED_BYTES, 2 * (end + END_SIZE)))
        mapped = self._map
        assert mapped is not None
        # the end mark after the record first, then the record over the current end mark: a
        # process killed in between leaves that end mark or a record that fails its checksum
        mapped[end:end + END_SIZE] = END
        mapped[start:end] = record
        self._end = end

    def empty(self, keep: int = 0) -> None:
        """Everything after its first `keep` bytes (the start record, or nothing) is in the database now."""
        if self._map is not None:
            self._map[keep:keep + len(END)] = END
            self._end = keep

    def close(self, *, remove: bool) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
            self._last_end = -1
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            if remove:
                self.path.unlink(missing_ok=True)


def read_journal(path: Path, execution_id: str) -> Pending:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Pending()
    return decode_records(execution_id, raw)
