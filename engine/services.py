"""Process-wide services a node may use: conversation memory store and credentials."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Protocol

from .chat import ChatMessage


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


class CredentialStore(Protocol):
    def get(self, cred_type: str, ref: dict | None) -> dict[str, str] | None: ...


class EnvCredentialStore:
    """Credentials from environment variables only (e.g. OPENAI_API_KEY)."""

    ENV = {"openAiApi": {"apiKey": "OPENAI_API_KEY", "url": "OPENAI_BASE_URL"}}

    def get(self, cred_type: str, ref: dict | None) -> dict[str, str] | None:
        names = self.ENV.get(cred_type, {})
        found = {k: os.environ[v] for k, v in names.items() if os.environ.get(v)}
        return found or None


@dataclass
class Services:
    memory: MemoryStore = field(default_factory=InProcessMemoryStore)
    credentials: CredentialStore = field(default_factory=EnvCredentialStore)
