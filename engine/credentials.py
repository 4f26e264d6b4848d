"""Credentials (API keys) kept outside workflow files: a user-only JSON file, then the environment.

A workflow node keeps n8n's reference `{"openAiApi": {"id": ..., "name": ...}}`; the secret
itself lives in `credentials.json` under the user's config folder (mode 0600) or comes from an
environment variable such as OPENAI_API_KEY. Nothing here ever logs or formats a secret.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .errors import MiniN8nError

CREDENTIALS_FILE_ENV = "MINI_N8N_CREDENTIALS"
HOME_ENV = "MINI_N8N_HOME"


class CredentialError(MiniN8nError):
    """The credential file cannot be read or written; the message names the file, never a secret."""


@dataclass(frozen=True)
class CredentialInfo:
    """What a credential picker shows: never the secret."""

    id: str
    name: str
    type: str

    def reference(self) -> dict[str, dict[str, str]]:
        """n8n's reference as a workflow node keeps it."""
        return {self.type: {"id": self.id, "name": self.name}}


class CredentialStore(Protocol):
    def get(self, cred_type: str, ref: dict | None) -> dict[str, str] | None: ...

    def list(self, cred_type: str | None = None) -> list[CredentialInfo]: ...


def default_credentials_path() -> Path:
    """$MINI_N8N_CREDENTIALS, else $MINI_N8N_HOME/credentials.json, else ~/.config/mini-n8n/."""
    explicit = os.environ.get(CREDENTIALS_FILE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home).expanduser() / "credentials.json"
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "mini-n8n" / "credentials.json"


def credential_ref(node_credentials: dict[str, Any] | None, cred_type: str) -> dict[str, Any] | None:
    """The `{id, name}` reference a node keeps for one credential type, if any."""
    if not node_credentials:
        return None
    ref = node_credentials.get(cred_type)
    return ref if isinstance(ref, dict) else None


def describe_credential(cred_type: str, ref: dict[str, Any] | None) -> str:
    """How an error names a credential: its name and type, never its data."""
    if ref and ref.get("name"):
        return f'credential "{ref["name"]}" ({cred_type})'
    if ref and ref.get("id"):
        return f'credential id {ref["id"]} ({cred_type})'
    return f"{cred_type} credential"


class FileCredentialStore:
    """Credentials in one JSON file readable by the user only: {"credentials": [{id, name, type, data}]}."""

    def __init__(self, path: Path | str | None = None) -> None:
        self._path = Path(path) if path is not None else None

    @property
    def path(self) -> Path:
        """The explicit file, else the default location as the environment says now."""
        return self._path if self._path is not None else default_credentials_path()

    def _read(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise CredentialError(f"cannot read the credential file {self.path}: {exc.strerror}") from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CredentialError(f"the credential file {self.path} is not valid JSON (line {exc.lineno})") from None
        entries = doc.get("credentials") if isinstance(doc, dict) else None
        if not isinstance(entries, list):
            raise CredentialError(f'the credential file {self.path} has no "credentials" list')
        return [e for e in entries if isinstance(e, dict) and isinstance(e.get("data"), dict)]

    def _write(self, entries: list[dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".credentials-", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"credentials": entries}, handle, indent=2)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def list(self, cred_type: str | None = None) -> list[CredentialInfo]:
        return [
            CredentialInfo(str(e.get("id", "")), str(e.get("name", "")), str(e.get("type", "")))
            for e in self._read()
            if cred_type is None or e.get("type") == cred_type
        ]

    def get(self, cred_type: str, ref: dict | None) -> dict[str, str] | None:
        """The data of the credential the reference names (by id, else by name); None if absent."""
        entries = [e for e in self._read() if e.get("type") == cred_type]
        if ref:
            for key in ("id", "name"):
                wanted = ref.get(key)
                if wanted:
                    for entry in entries:
                        if str(entry.get(key)) == str(wanted):
                            return dict(entry["data"])
            return None
        return dict(entries[0]["data"]) if len(entries) == 1 else None

    def save(self, cred_type: str, name: str, data: dict[str, str], cred_id: str | None = None) -> CredentialInfo:
        """Add or replace a credential; returns what a node's reference needs."""
        entries = self._read()
        cred_id = cred_id or uuid.uuid4().hex[:16]
        entries = [e for e in entries if str(e.get("id")) != cred_id]
        entries.append({"id": cred_id, "name": name, "type": cred_type, "data": dict(data)})
        self._write(entries)
        return CredentialInfo(cred_id, name, cred_type)

    def delete(self, cred_id: str) -> bool:
        entries = self._read()
        kept = [e for e in entries if str(e.get("id")) != cred_id]
        if len(kept) == len(entries):
            return False
        self._write(kept)
        return True


class EnvCredentialStore:
    """Credentials from environment variables (e.g. OPENAI_API_KEY), one per type."""

    ENV: dict[str, dict[str, str]] = {
        "openAiApi": {"apiKey": "OPENAI_API_KEY", "url": "OPENAI_BASE_URL"},
        "ollamaApi": {"baseUrl": "OLLAMA_HOST", "apiKey": "OLLAMA_API_KEY"},
    }
    SECRET_FIELDS = {"apiKey"}

    def get(self, cred_type: str, ref: dict | None) -> dict[str, str] | None:
        names = self.ENV.get(cred_type, {})
        found = {k: os.environ[v] for k, v in names.items() if os.environ.get(v)}
        return found or None

    def list(self, cred_type: str | None = None) -> list[CredentialInfo]:
        out = []
        for ctype, names in self.ENV.items():
            if (cred_type is None or ctype == cred_type) and self.get(ctype, None):
                shown = " / ".join(v for v in names.values() if os.environ.get(v))
                out.append(CredentialInfo(f"env:{ctype}", f"Environment ({shown})", ctype))
        return out


class ChainedCredentialStore:
    """Asks each store in turn: the user's credential file first, then the environment."""

    def __init__(self, *stores: Any) -> None:
        self.stores = stores

    @property
    def file_store(self) -> FileCredentialStore | None:
        return next((s for s in self.stores if isinstance(s, FileCredentialStore)), None)

    def get(self, cred_type: str, ref: dict | None) -> dict[str, str] | None:
        for store in self.stores:
            if ref and str(ref.get("id", "")).startswith("env:") and not isinstance(store, EnvCredentialStore):
                continue
            found = store.get(cred_type, ref)
            if found:
                return found
        return None

    def list(self, cred_type: str | None = None) -> list[CredentialInfo]:
        return [info for store in self.stores for info in store.list(cred_type)]

    def save(self, cred_type: str, name: str, data: dict[str, str], cred_id: str | None = None) -> CredentialInfo:
        store = self.file_store
        if store is None:
            raise CredentialError("no credential file is configured")
        return store.save(cred_type, name, data, cred_id)

    def delete(self, cred_id: str) -> bool:
        store = self.file_store
        return store.delete(cred_id) if store is not None else False


def default_credential_store() -> ChainedCredentialStore:
    """The store the application uses: the user's credential file, then the environment."""
    return ChainedCredentialStore(FileCredentialStore(), EnvCredentialStore())
