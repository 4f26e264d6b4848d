"""Autosave of unsaved work to a recovery file, and finding the files a crash left behind.

Each open window owns one file named after the process id; a file whose process is gone (or
that no live window of this process owns) is what a crash left, and is offered on start.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from engine.errors import WorkflowFileError
from engine.processes import pid_alive
from engine.workflow import parse_workflow, Workflow, workflow_to_data

FORMAT = "mini-n8n-recovery"
_owned: set[Path] = set()  # recovery files owned by live windows of this process


def recovery_dir() -> Path:
    """Where recovery files live; MINI_N8N_RECOVERY_DIR moves them (tests use a temporary folder)."""
    folder = os.environ.get("MINI_N8N_RECOVERY_DIR")
    if not folder:
        from PySide6.QtCore import QStandardPaths  # here: PySide builds a type's enums at its first import

        base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation) or str(Path.home() / ".mini-n8n")
        folder = str(Path(base) / "recovery")
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class RecoveredWork:
    """A recovery file left by a crash: the workflow, the file it belonged to and when."""

    file: Path
    workflow: Workflow
    path: str | None
    saved_at: str

    def discard(self) -> None:
        self.file.unlink(missing_ok=True)


class RecoveryFile:
    """The recovery file of one window: written after edits, deleted on save or clean close."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or recovery_dir()
        self.file = self.directory / f"{os.getpid()}-{uuid.uuid4().hex[:12]}.json"
        _owned.add(self.file)

    def write(self, workflow: Workflow, path: str | None) -> None:
        data: dict[str, Any] = {
            "format": FORMAT,
            "pid": os.getpid(),
            "path": path,
            "savedAt": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "workflow": workflow_to_data(workflow),
        }
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".recovery.", suffix=".tmp", dir=str(self.directory))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, ensure_ascii=False)
            os.replace(tmp, self.file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def discard(self) -> None:
        self.file.unlink(missing_ok=True)

    def release(self) -> None:
        """The window is gone: delete the file and stop owning it."""
        self.discard()
        _owned.discard(self.file)

    def abandon(self) -> None:
        """Stop owning the file without deleting it: what a crash does (used by tests)."""
        _owned.discard(self.file)


def left_behind(directory: Path | None = None) -> tuple[list[RecoveredWork], list[str]]:
    """Recovery files of crashed sessions, newest first, and problems with unreadable ones."""
    folder = directory or recovery_dir()
    found: list[RecoveredWork] = []
    problems: list[str] = []
    for file in sorted(folder.glob("*.json")):
        if file in _owned:
            continue
        try:
            pid = int(file.name.split("-", 1)[0])
        except ValueError:
            continue
        if pid != os.getpid() and pid_alive(pid):
            continue
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            if data.get("format") != FORMAT:
                raise ValueError("not a recovery file")
            workflow = parse_workflow(data["workflow"], str(file))
        except (OSError, ValueError, KeyError, WorkflowFileError) as exc:
            problems.append(f"{file}: {exc}")
            continue
        found.append(RecoveredWork(file, workflow, data.get("path"), str(data.get("savedAt", ""))))
    found.sort(key=lambda r: r.saved_at, reverse=True)
    return found, problems
