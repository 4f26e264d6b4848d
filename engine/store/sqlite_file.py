"""Opening the SQLite store file: check it read-only first, then set it up, then migrate old layouts.

A damaged file is reported with its path and never written to: its header is read raw, then
it is opened read-only and checked (`PRAGMA quick_check` while the file is at most
QUICK_CHECK_MAX_BYTES — about 3 ms per MB, which keeps opening under 20 ms; larger files get
the header and schema check here, checksums on every stored blob as it is read, and the full
check from `mini-n8n executions check` and after `prune`).
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from zlib_ng.zlib_ng import crc32

from ..errors import MiniN8nError
from .codec import StoreDamaged

SCHEMA_VERSION = 3  # PRAGMA user_version of a store this code writes
QUICK_CHECK_MAX_BYTES = 4 * 1024 * 1024
BUSY_TIMEOUT_S = 30.0  # writers wait this long for another process's transaction
WAL_AUTOCHECKPOINT_PAGES = 4000  # the writer folds the WAL into the file itself only past ~16 MB
# (a thread of the store's folds it in when commits pause: engine.store.wal_checkpointer)
WAL_SIZE_LIMIT = 16 * 1024 * 1024  # and cut the WAL file back to this size when it is reset
SQLITE_MAGIC = b"SQLite format 3\x00"

SCHEMA = """
CREATE TABLE workflows (
    hash TEXT PRIMARY KEY,
    data BLOB NOT NULL,
    crc INTEGER NOT NULL
);
CREATE TABLE executions (
    id TEXT PRIMARY KEY,
    workflow_name TEXT NOT NULL,
    workflow_hash TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at REAL NOT NULL,
    stopped_at REAL,
    start_node TEXT,
    error BLOB,
    result BLOB,
    pause BLOB,
    crc INTEGER,
    owner_pid INTEGER,
    owner_start INTEGER,
    updated_at REAL NOT NULL
);
CREATE INDEX executions_by_start ON executions (started_at);
CREATE INDEX executions_by_status ON executions (status, started_at);
CREATE INDEX executions_by_workflow ON executions (workflow_hash);
CREATE TABLE runs (
    execution_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    node TEXT NOT NULL,
    run_index INTEGER NOT NULL,
    base INTEGER,
    task BLOB NOT NULL,
    crc INTEGER NOT NULL,
    PRIMARY KEY (execution_id, seq)
);
CREATE TABLE run_batches (
    execution_id TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    runs BLOB NOT NULL,
    PRIMARY KEY (execution_id, first_seq)
);
CREATE TABLE boundaries (
    execution_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    runs INTEGER NOT NULL,
    last_node TEXT,
    base INTEGER,
    stack BLOB NOT NULL,
    crc INTEGER NOT NULL,
    PRIMARY KEY (execution_id, seq)
);
CREATE TABLE IF NOT EXISTS memory (
    workflow TEXT NOT NULL,
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (workflow, session, seq)
);
"""


def workflow_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def _damaged(path: Path, detail: object) -> StoreDamaged:
    detail = "; ".join(line.strip() for line in str(detail).splitlines() if line.strip() and not line.startswith("***"))
    return StoreDamaged(
        f"the execution store {path} is damaged ({detail}); it was not changed. Move it away (or set "
        f"MINI_N8N_DB to another file) to start a new one; `sqlite3 {path} .recover` may save what is left"
    )


def is_damage(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or (
        type(exc) is sqlite3.DatabaseError
    )


def check_readonly(path: Path, *, full: bool = False) -> int:
    """Check an existing store without writing a byte; returns its layout version. The file is
    read through SQLite only: a descriptor of it opened and closed here would drop the POSIX
    locks of every connection this process has to it (they belong to the process and the file),
    and with them what tells other processes that the WAL is still in use."""
    if path.stat().st_size == 0:
        return 0  # an empty file: a new store
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        raise _damaged(path, exc) from None
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        if full or path.stat().st_size <= QUICK_CHECK_MAX_BYTES:
            problems = [r[0] for r in db.execute("PRAGMA quick_check(5)")]
            if problems != ["ok"]:
                raise _damaged(path, "; ".join(problems))
        return int(version)
    except sqlite3.OperationalError as exc:
        if is_damage(exc):
            raise _damaged(path, _not_sqlite(path, exc)) from None
        return -1  # cannot be read read-only here (e.g. a WAL left by a killed process): checked read-write
    except sqlite3.DatabaseError as exc:
        raise _damaged(path, _not_sqlite(path, exc)) from None
    finally:
        db.close()


def _not_sqlite(path: Path, exc: sqlite3.Error) -> object:
    """What is wrong with a file SQLite refused as not a database: that it is not SQLite's at all
    when its header says so, else SQLite's own words. Its header is read only then: no
    connection of this process holds a lock on a file that is not a database."""
    if getattr(exc, "sqlite_errorname", "") != "SQLITE_NOTADB":
        return exc
    try:
        with open(path, "rb") as file:
            header = file.read(100)
    except OSError:
        return exc
    return "it does not start with an SQLite header" if not header.startswith(SQLITE_MAGIC) or len(header) < 100 else exc


def open_store_file(path: Path) -> sqlite3.Connection:
    """A read-write connection to a checked store file in the current layout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    version = check_readonly(path) if path.exists() else 0
    try:
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        raise MiniN8nError(f"cannot open the execution store {path}: {exc}") from None
    try:
        if version < 0 and path.stat().st_size <= QUICK_CHECK_MAX_BYTES:  # the read-only check could not run
            problems = [r[0] for r in db.execute("PRAGMA quick_check(5)")]
            if problems != ["ok"]:
                raise _damaged(path, "; ".join(problems))
        db.execute("BEGIN")  # layout version and tables as of one moment (another process may be creating them)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        db.execute("COMMIT")
        if tables and version not in (1, 2, SCHEMA_VERSION):
            hint = "a newer mini-n8n wrote it" if version > SCHEMA_VERSION else "it is not a layout mini-n8n wrote"
            raise MiniN8nError(
                f"the execution store {path} has layout version {version}, and this mini-n8n reads version "
                f"{SCHEMA_VERSION} (and migrates versions 1 and 2) — {hint}; move the file away (it is left as it is) "
                f"or set MINI_N8N_DB to another file"
            )
        _use_wal(db)
        db.execute("PRAGMA synchronous=NORMAL")  # WAL: a killed process loses nothing committed
        db.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT_PAGES}")
        db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
        if not tables:
            _create(db)
        elif version == 1:
            _migrate_from_1(db)
        elif version == 2:
            _migrate_from_2(db)
    except sqlite3.Error as exc:
        db.close()
        if is_damage(exc):
            raise _damaged(path, exc) from None
        raise MiniN8nError(f"cannot open the execution store {path}: {exc}") from None
    except BaseException:
        db.close()
        raise
    return db


def _use_wal(db: sqlite3.Connection) -> None:
    """Switch the file to WAL (a no-op once it is). Of connections switching a new file at the same
    moment SQLite refuses all but one at once, "database is locked", without the busy timeout:
    those wait a moment and try again, until BUSY_TIMEOUT_S has passed."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not getattr(exc, "sqlite_errorname", "").startswith("SQLITE_BUSY") or time.monotonic() > deadline:
                raise
        time.sleep(0.005)


@contextmanager
def _layout_change(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, the lock taken up front: committed, or rolled back on any error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _create(db: sqlite3.Connection) -> None:
    with _layout_change(db):
        if db.execute("SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='executions'").fetchone()[0] == 0:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def _migrate_from_2(db: sqlite3.Connection) -> None:
    """Layout 2 to 3: the table of run batches (a fold's runs in one row) beside the runs table,
    whose rows stay as they are (both are read)."""
    with _layout_change(db):
        if db.execute("PRAGMA user_version").fetchone()[0] == 2:  # else another process migrated it meanwhile
            statement = next(part for part in SCHEMA.split(";") if "CREATE TABLE run_batches" in part)
            db.execute(statement)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def _migrate_from_1(db: sqlite3.Connection) -> None:
    """Layout 1 (the workflow in every execution row, rewritten at each boundary; unchecked text
    columns; checkpoints beside a stack_seq pointer) to the current layout, in one transaction."""
    with _layout_change(db):
        if db.execute("PRAGMA user_version").fetchone()[0] != 1:  # another process migrated it meanwhile
            return
        for table in ("executions", "runs", "checkpoints"):
            db.execute(f"ALTER TABLE {table} RENAME TO v1_{table}")
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        for row in db.execute(
            "SELECT id, workflow_name, workflow, mode, status, started_at, stopped_at, start_node, last_node, error,"
            " result, stack_seq, pause, runs_at_boundary, pid, updated_at FROM v1_executions"
        ).fetchall():
            (eid, name, workflow, mode, status, started, stopped, start_node, last_node, error, result, stack_seq,
             pause, at_boundary, pid, updated) = row
            wf = workflow.encode("utf-8", "surrogatepass")
            digest = workflow_hash(wf)
            db.execute("INSERT OR IGNORE INTO workflows (hash, data, crc) VALUES (?,?,?)", (digest, wf, crc32(wf)))
            fields = [None if v is None else v.encode("utf-8", "surrogatepass") for v in (error, result, pause)]
            db.execute(
                "INSERT INTO executions (id, workflow_name, workflow_hash, mode, status, started_at, stopped_at,"
                " start_node, error, result, pause, crc, owner_pid, owner_start, updated_at)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,NULL,?)",
                (eid, name, digest, mode, status, started, stopped, start_node, *fields, fields_crc(fields), pid, updated),
            )
            for seq, base, stack in db.execute(
                "SELECT seq, base, stack FROM v1_checkpoints WHERE execution_id=? AND seq<=? ORDER BY seq", (eid, stack_seq)
            ).fetchall():
                data = stack.encode("utf-8", "surrogatepass")
                db.execute(
                    "INSERT INTO boundaries (execution_id, seq, runs, last_node, base, stack, crc) VALUES (?,?,?,?,?,?,?)",
                    (eid, seq, at_boundary, last_node, base, data, crc32(data)),
                )
        for eid, seq, node, run_index, base, task in db.execute(
            "SELECT execution_id, seq, node, run_index, base, task FROM v1_runs"
        ).fetchall():
            data = task.encode("utf-8", "surrogatepass")
            db.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?)", (eid, seq, node, run_index, base, data, crc32(data)))
        for table in ("runs", "checkpoints", "executions"):
            db.execute(f"DROP TABLE v1_{table}")
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def fields_crc(fields: Sequence[bytes | None]) -> int:
    """One checksum over an execution row's error, result and pause blobs."""
    crc = 0
    for value in fields:
        crc = crc32(value if value is not None else b"\x00", crc)
    return crc

