"""Stored JSON values as checksummed blobs: a flipped byte is reported, never decoded into nonsense.

Values are written as UTF-8 JSON by orjson (twenty times the standard library's speed, which
made serialising the stack most of a boundary's cost). What orjson refuses — a lone surrogate,
an integer beyond 64 bits, a non-string key — is written by the standard library as ASCII
JSON, so any Python string is stored and read back exactly. NaN and ±Infinity are stored as
null, as n8n's JSON.stringify stores them. Each blob carries a CRC-32 of its bytes, computed by
zlib-ng (the same values as zlib's, at a third of its cost on a few KB: carry-less multiplication).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import orjson
from zlib_ng.zlib_ng import crc32

from ..errors import MiniN8nError
from ..shared_log import LogWindow
from ..workflow import Workflow, workflow_json, workflow_to_data
from .journal import RowStatus

if TYPE_CHECKING:
    from ..run_data import ExecutionState


def _window_list(value: Any) -> Any:
    """A window on an append-only log (engine.shared_log) is written as the list it shows."""
    if type(value) is LogWindow:
        return value.to_list()
    raise TypeError(f"{type(value).__name__} is not JSON")


_encoder = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), check_circular=False, default=_window_list)


class StoreDamaged(MiniN8nError):
    """The store file is damaged (SQLite's own checks or a checksum failed): nothing more is written to it."""


def pack(value: Any) -> tuple[bytes, int]:
    """The blob for `value` and its checksum."""
    try:
        data = orjson.dumps(value, default=_window_list)
    except TypeError:
        data = _encoder.encode(value).encode("ascii")
    return data, crc32(data)


def row_fields(state: ExecutionState) -> tuple[bytes | None, bytes | None, bytes | None]:
    """An execution row's error, result and pause blobs (None where it has none)."""
    return (
        pack(state.error.model_dump())[0] if state.error else None,
        pack(state.result)[0] if state.result is not None else None,
        pack(state.pause)[0] if state.pause else None,
    )


def row_status(state: ExecutionState) -> RowStatus:
    """The status fields of an execution's row as `state` has them now."""
    return RowStatus(state.status, state.stopped_at, row_fields(state))


def pack_workflow(workflow: Workflow) -> tuple[bytes, int]:
    """pack(workflow_to_data(workflow)), written by pydantic without the dict in between (a
    workflow is packed at every run's start): the same bytes wherever orjson would write them, the
    same JSON otherwise (an integer beyond 64 bits); a lone surrogate goes pack's way."""
    try:
        data = workflow_json(workflow)
    except ValueError:
        return pack(workflow_to_data(workflow))
    return data, crc32(data)


def unpack(data: bytes | str, crc: int | None, where: str) -> Any:
    """The value of a stored blob; `where` names it (file, execution, row) if its checksum fails."""
    if isinstance(data, str):  # a text column (written before checksums, or by hand)
        data = data.encode("utf-8", "surrogatepass")
    if crc is not None and crc32(data) != crc:
        raise StoreDamaged(f"{where} fails its checksum: the file is damaged (the damaged data is not shown)")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass  # a lone surrogate's escape, or NaN written by an older layout: the standard library reads those
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise StoreDamaged(f"{where} is not readable JSON ({exc}): the file is damaged") from None
