"""The recent-files list, kept in the editor's settings (newest first, at most ten)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings

MAX_RECENT = 10


def settings() -> QSettings:
    """The editor's settings; MINI_N8N_CONFIG_DIR moves them (tests use a temporary folder)."""
    from PySide6.QtCore import QSettings  # here: PySide builds a type's enums at its first import (after the first frame)

    folder = os.environ.get("MINI_N8N_CONFIG_DIR")
    if folder:
        return QSettings(str(Path(folder) / "mini-n8n.ini"), QSettings.Format.IniFormat)
    return QSettings("mini-n8n", "mini-n8n")


class RecentFiles:
    """Paths of recently opened or saved workflows."""

    KEY = "recentFiles"

    def __init__(self, store: QSettings | None = None) -> None:
        self._store = store

    @property
    def store(self) -> QSettings:
        """The settings, opened at the first read or write (after the editor's first frame)."""
        if self._store is None:
            self._store = settings()
        return self._store

    def paths(self) -> list[str]:
        value = self.store.value(self.KEY, [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def add(self, path: str | os.PathLike[str]) -> None:
        path = str(Path(path).resolve())
        paths = [path] + [p for p in self.paths() if p != path]
        self.store.setValue(self.KEY, paths[:MAX_RECENT])
        self.store.sync()

    def remove(self, path: str) -> None:
        self.store.setValue(self.KEY, [p for p in self.paths() if p != path])
        self.store.sync()

    def clear(self) -> None:
        self.store.setValue(self.KEY, [])
        self.store.sync()
