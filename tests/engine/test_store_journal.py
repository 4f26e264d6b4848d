"""The boundary journal: records read back in order; a torn record, and whatever an emptied
journal held before, are never read; nor does a record of the execution that used the file before;
a disk without room for a journal is an error naming it, not a killed process."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import engine.store.journal as journal_module
from engine.errors import MiniN8nError
from engine.store.journal import (END, MAPPED_BYTES, Journal, RowStatus, Start, encode_end, encode_record, encode_start, read_journal,
                                  read_start, salt)
from engine.workflow import save_workflow
from tests.builders import agent_workflow, tool_call


E1 = salt("e1")


def boundary(seq: int, size: int = 10) -> tuple:
    data = bytes([seq % 251]) * size
    return ("e1", seq, seq, "Node", seq - 1, data, zlib.crc32(data))


def test_records_read_back_in_order_and_the_file_grows_when_needed(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j" / "e1.journal")
    big = (MAPPED_BYTES // 3)  # three of them do not fit in the first mapping
    for seq in range(1, 6):
        journal.append(encode_record([], boundary(seq, big if seq % 2 else 10), E1))
    read = read_journal(journal.path, "e1")
    assert [b[1] for b in read.boundaries] == [1, 2, 3, 4, 5]
    assert read.boundaries[2][5] == bytes([3]) * big
    journal.close(remove=True)
    assert not journal.path.exists()


def test_an_emptied_journal_reads_nothing_of_what_it_held(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "e1.journal")
    for seq in range(1, 5):
        journal.append(encode_record([], boundary(seq), E1))
    journal.empty()
    assert not read_journal(journal.path, "e1")
    journal.append(encode_record([], boundary(5), E1))  # the same size as the old records: one follows it
    assert [b[1] for b in read_journal(journal.path, "e1").boundaries] == [5]
    journal.close(remove=False)


def test_a_torn_record_ends_the_reading(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "e1.journal")
    for seq in range(1, 4):
        journal.append(encode_record([], boundary(seq), E1))
    journal.close(remove=False)
    raw = bytearray(journal.path.read_bytes())
    one = len(encode_record([], boundary(1), E1))
    raw[2 * one + 20] ^= 0xFF  # a byte of the third record's body
    journal.path.write_bytes(bytes(raw))
    assert [b[1] for b in read_journal(journal.path, "e1").boundaries] == [1, 2]
    assert raw[3 * one: 3 * one + len(END)] == END


def test_a_damaged_blob_ends_the_reading(tmp_path: Path) -> None:
    """The record's own crc leaves out the blobs (their crcs cover them): a flipped blob byte is caught too."""
    journal = Journal(tmp_path / "e1.journal")
    for seq in range(1, 4):
        journal.append(encode_record([("e1", seq, "Tool", 0, None, b"run data", zlib.crc32(b"run data"))], boundary(seq, 100), E1))
    journal.close(remove=False)
    raw = bytearray(journal.path.read_bytes())
    one = len(encode_record([("e1", 1, "Tool", 0, None, b"run data", zlib.crc32(b"run data"))], boundary(1, 100), E1))
    raw[2 * one + one - 50] ^= 0xFF  # a byte of the third record's stack
    journal.path.write_bytes(bytes(raw))
    read = read_journal(journal.path, "e1")
    assert [b[1] for b in read.boundaries] == [1, 2] and [r[1] for r in read.runs] == [1, 2]


def test_records_of_any_run_count_read_back_exactly(tmp_path: Path) -> None:
    """A record of one run (an agent iteration's) is packed apart from records of other run
    counts: each reads back as the rows written, and a flipped byte of its run's head is caught."""
    journal = Journal(tmp_path / "e1.journal")
    runs_written: list[tuple] = []
    boundaries_written: list[tuple] = []
    seq = 0
    for count in (0, 1, 2, 3, 1):
        for with_boundary in (True, False):
            runs = []
            for _ in range(count):
                seq += 1
                data = f"run {seq}".encode()
                runs.append(("e1", seq, "Tööl" if seq % 2 else "Model", seq % 3, None if seq % 2 else seq - 1, data, zlib.crc32(data)))
            stack = boundary(seq + 100) if with_boundary else None
            journal.append(encode_record(runs, stack, E1))
            runs_written += runs
            boundaries_written += [stack] if stack else []
    journal.close(remove=False)
    read = read_journal(journal.path, "e1")
    assert read.runs == runs_written and read.boundaries == boundaries_written

    lone = encode_record([("e1", 1, "Tool", 0, None, b"run data", zlib.crc32(b"run data"))], boundary(1), E1)
    damaged = bytearray(lone + lone)
    damaged[len(lone) + lone.index(b"Tool")] ^= 0x01  # the second record's node name, in its run's head
    (tmp_path / "e1.journal").write_bytes(bytes(damaged) + END)
    read = read_journal(tmp_path / "e1.journal", "e1")
    assert [r[1] for r in read.runs] == [1] and [b[1] for b in read.boundaries] == [1]


def test_records_of_the_older_layout_still_read(tmp_path: Path) -> None:
    """b"MB" records (one crc over the whole body), as a journal left by an older version holds them."""
    data = b'[{"node":"A"}]'
    body = struct.pack("<H", 0) + b"\x01" + struct.pack("<qqqH", 7, 3, -1, 4) + b"Node" + struct.pack("<II", len(data), zlib.crc32(data)) + data
    (tmp_path / "e1.journal").write_bytes(struct.pack("<2sII", b"MB", len(body), zlib.crc32(body)) + body + END)
    read = read_journal(tmp_path / "e1.journal", "e1")
    assert read.boundaries == [("e1", 7, 3, "Node", None, data, zlib.crc32(data))]


def test_records_of_the_older_unsalted_layout_still_read(tmp_path: Path) -> None:
    """b"MC" records (the crc not started from the execution id)."""
    record = encode_record([], boundary(3), 0)
    (tmp_path / "e1.journal").write_bytes(b"MC" + record[2:] + END)
    assert [b[1] for b in read_journal(tmp_path / "e1.journal", "e1").boundaries] == [3]


def test_a_journal_taken_over_by_the_next_execution_reads_nothing_of_the_one_before(tmp_path: Path) -> None:
    """An ended execution's journal, emptied, serves the next execution under the same name."""
    journal = Journal(tmp_path / "1.2.0.0.journal")
    journal.append(encode_start(started("e1")) + encode_record([], boundary(1), E1))
    for seq in range(2, 4):
        journal.append(encode_record([], boundary(seq), E1))
    journal.empty()
    assert read_start(journal.path) is None and not read_journal(journal.path, "e1")
    journal.append(encode_start(started("e2")) + encode_record([], ("e2", 9, 9, "Node", None, b"[]", zlib.crc32(b"[]")), salt("e2")))
    assert read_start(journal.path) == started("e2")
    assert not read_journal(journal.path, "e1")
    assert [b[1] for b in read_journal(journal.path, "e2").boundaries] == [9]
    assert [p.name for p in tmp_path.iterdir()] == ["1.2.0.0.journal"]
    journal.close(remove=True)
    assert list(tmp_path.iterdir()) == []


def test_a_record_of_another_execution_does_not_read(tmp_path: Path) -> None:
    """Should a file ever hold another execution's records where this one's belong (a crash of the
    machine between emptying a journal and writing the next start record), their crcs do not match
    this execution's."""
    journal = Journal(tmp_path / "e2.journal")
    journal.append(encode_record([], boundary(1), E1))
    journal.close(remove=False)
    assert not read_journal(journal.path, "e2")
    assert [b[1] for b in read_journal(journal.path, "e1").boundaries] == [1]


def test_an_end_record_reads_back_after_the_records_before_it(tmp_path: Path) -> None:
    ended = RowStatus("success", 1700000000123.5, (None, b'[{"json":{"output":"\xc3\xa9"}}]', None))
    journal = Journal(tmp_path / "e1.journal")
    journal.append(encode_record([], boundary(1), E1))
    journal.append(encode_record([], boundary(2), E1) + encode_end(ended, E1))
    journal.close(remove=False)
    read = read_journal(journal.path, "e1")
    assert [b[1] for b in read.boundaries] == [1, 2] and read.end == ended
    unstopped = RowStatus("error", None, (b'{"message":"m"}', None, b"{}"))
    journal = Journal(tmp_path / "e1-b.journal")
    journal.append(encode_end(unstopped, E1))
    journal.close(remove=False)
    assert read_journal(journal.path, "e1").end == unstopped


def test_a_damaged_or_torn_end_record_is_not_read_and_nor_is_another_executions(tmp_path: Path) -> None:
    """Without its end record the execution reads as it stood at its last boundary (it is then
    taken in as crashed): never as an end it did not have."""
    ended = RowStatus("success", 5.0, (None, b"[1]", None))
    record = encode_end(ended, E1)

    def flipped(raw: bytearray) -> None:
        raw[-2] ^= 0xFF  # a byte of its result

    def torn(raw: bytearray) -> None:
        del raw[-3:]

    for damage in (flipped, torn):
        raw = bytearray(encode_record([], boundary(1), E1) + record)
        damage(raw)
        path = tmp_path / "e1.journal"
        path.write_bytes(bytes(raw) + END)
        read = read_journal(path, "e1")
        assert [b[1] for b in read.boundaries] == [1] and read.end is None
    path.write_bytes(record + END)
    assert read_journal(path, "e2").end is None  # its crc starts from another execution's


def test_checksums_are_zlibs_crc32_values() -> None:
    """Blobs, salts and records are checksummed by zlib-ng: the values must be zlib's CRC-32, which
    stores and journals written before hold."""
    from engine.store.codec import pack

    value = {"text": "é" * 300, "items": list(range(200))}
    data, crc = pack(value)
    assert crc == zlib.crc32(data)
    assert E1 == zlib.crc32(b"e1")
    record = encode_record([], boundary(5, size=3000), E1)
    _magic, length, record_crc = struct.unpack_from("<2sII", record)
    body = record[10:10 + length]
    meta = body[:-3000]  # the crc covers the body but the blob, which carries its own
    assert record_crc == zlib.crc32(meta, zlib.crc32(b"e1"))


def started(execution_id: str = "e1") -> Start:
    workflow = b'{"name":"w","nodes":[],"connections":{}}'
    return Start(execution_id, 4242, 17, {"workflow_name": "w", "mode": "cli", "status": "new", "started_at": 1.5, "start_node": "Go"},
                 "hash1", workflow, zlib.crc32(workflow))


def test_a_start_record_reads_back_and_the_records_after_it_read_as_the_executions(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "e1.journal")
    journal.append(encode_start(started()) + encode_record([], boundary(1), E1))
    journal.append(encode_record([], boundary(2), E1))
    assert read_start(journal.path) == started()
    assert [b[1] for b in read_journal(journal.path, "e1").boundaries] == [1, 2]
    assert not read_journal(journal.path, "e2")  # the start record names another execution: nothing is its
    head = len(encode_start(started()))
    journal.empty(head)  # folded: the start record stays, naming the journal's execution
    assert read_start(journal.path) == started() and not read_journal(journal.path, "e1")
    journal.append(encode_record([], boundary(3), E1))
    assert [b[1] for b in read_journal(journal.path, "e1").boundaries] == [3]
    journal.empty()  # the execution ended: nothing of it is left
    assert read_start(journal.path) is None and not read_journal(journal.path, "e1")
    journal.close(remove=False)


def test_a_damaged_start_record_does_not_read(tmp_path: Path) -> None:
    record = encode_start(started())
    for at in (12, len(record) - 3):  # a byte of the meta (the record's crc), of the workflow (its own crc)
        damaged = bytearray(record)
        damaged[at] ^= 0xFF
        (tmp_path / "e1.journal").write_bytes(bytes(damaged) + END)
        assert read_start(tmp_path / "e1.journal") is None
    (tmp_path / "e1.journal").write_bytes(record[:-5])  # torn
    assert read_start(tmp_path / "e1.journal") is None
    assert read_start(tmp_path / "gone.journal") is None


SMALL_DISK_RUN = """
import subprocess, sys
folder = sys.argv[1]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", folder], check=True)
from engine.cli import main
sys.argv = ["mini-n8n", "run", "-q", *sys.argv[2:]]
sys.exit(main())
"""


def test_a_journal_the_disk_has_no_room_for_is_an_error_naming_it_not_a_killed_process(tmp_path: Path) -> None:
    """The journal is mapped into memory: writing to a page the disk has no room for would kill
    the process (SIGBUS, nothing said, the editor gone with it). Its room is taken on disk before
    it is mapped, so a full disk is an error naming the file. Made real on a 256 KB tmpfs in a
    mount namespace of its own (where that cannot be made, the test is skipped)."""
    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    probe = tmp_path / "probe"
    probe.mkdir()
    if unshare is None or mount is None or subprocess.run(
            [unshare, "--mount", mount, "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True).returncode != 0:
        pytest.skip("no tmpfs can be mounted in a mount namespace here to make a small disk")
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} * 2"})]} for i in range(300)] + [{"text": "done"}]
    workflow = tmp_path / "long.json"
    save_workflow(agent_workflow(replies, agent_options={"maxIterations": 400}), workflow)
    disk = tmp_path / "disk"
    disk.mkdir()
    env = {**os.environ, "MINI_N8N_DB": str(disk / "executions.sqlite"), "MINI_N8N_CONFIG_DIR": str(tmp_path / "config"),
           "MINI_N8N_RECOVERY_DIR": str(tmp_path / "recovery")}
    done = subprocess.run([unshare, "--mount", sys.executable, "-c", SMALL_DISK_RUN, str(disk), str(workflow), "--message", "go"],
                          cwd=Path(__file__).parents[2], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode != -signal.SIGBUS, "killed by SIGBUS writing the journal"
    assert done.returncode == 2, done.stderr
    journal = disk / "executions.sqlite-boundaries"
    assert f"mini-n8n: error: the execution store's journal {journal}/" in done.stderr
    assert "bytes on disk: No space left on device" in done.stderr


def test_a_journal_file_that_gets_no_room_on_disk_is_not_left_behind(tmp_path: Path, monkeypatch) -> None:
    """Where the journal's room cannot be had the append fails and no empty file stays in the
    folder; a later append (room found again) makes it."""

    def full(fd: int, offset: int, size: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    journal = Journal(tmp_path / "e1.journal")
    monkeypatch.setattr(journal_module, "_allocate", full)
    with pytest.raises(MiniN8nError, match="e1.journal cannot have 1,048,576 bytes on disk: No space left on device"):
        journal.append(encode_record([], boundary(1), E1))
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    journal.append(encode_record([], boundary(1), E1))
    assert read_journal(tmp_path / "e1.journal", "e1").boundaries == [boundary(1)]
    journal.close(remove=True)
