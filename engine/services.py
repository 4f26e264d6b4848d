"""Process-wide services a node may use: conversation memory store and credentials."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from .chat import ChatMessage
from .credentials import CredentialStore, EnvCredentialStore, default_credential_store


class MemoryStore(Protocol):
    """Where Simple Memory keeps conversations, keyed by workflow and session."""

    def load(self, key: tuple[str, str]) -> list[ChatMessage]: ...

    def append(self, key: tuple[str, str], messages: list[ChatMessage]) -> None: ...

    def clear(self, key: tuple[str, str]) -> None: ...


class InProcessMemoryStore:
    """Conversations held for the life of the process, as n8n's Simple Memory does."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], list[ChatMessage]] = {}

    def load(self, key: tuple[str, str]) -> list[ChatMessage]:
        return list(self._data.get(key, ()))

    def append(self, key: tuple[str, str], messages: list[ChatMessage]) -> None:
        self._data.setdefault(key, []).extend(messages)

    def clear(self, key: tuple[str, str]) -> None:
        self._data.pop(key, None)


@dataclass
class Services:
    memory: MemoryStore = field(default_factory=InProcessMemoryStore)
    credentials: CredentialStore = field(default_factory=default_credential_store)
