"""Credentials (API keys) kept outside workflow files: a user-only JSON file, then the environment.

A workflow node keeps n8n's reference `{"openAiApi": {"id": ..., "name": ...}}`; the secret
itself lives in `credentials.json` under the user's config folder (mode 0600) or comes from an
environment variable such as OPENAI_API_KEY. Nothing here ever logs or formats a secret.

Values are checked as they are loaded: stray whitespace around a value (a key pasted with its
line break) is removed with a warning that names the credential; a key with a line break,
space or non-ASCII text inside is refused. A credential file others can read is used with a
warning. Every form a key can take in an error text (as is, Python- or JSON-escaped) is
scrubbed by `scrub_secret`.
"""

import functools
import json
import logging
import os
import stat
import time
import uuid
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from .environment import env_value
from .errors import MiniN8nError

CREDENTIALS_FILE_ENV = "MINI_N8N_CREDENTIALS"
HOME_ENV = "MINI_N8N_HOME"
SECRET_FIELDS = frozenset({"apiKey", "token", "accessToken"})  # sent in an HTTP header: one printable word
MIN_SCRUB_LENGTH = 4  # shorter values would scrub ordinary words
# a file changed this recently is not kept parsed: a second change within the file system's
# timestamp granularity (a few ms, or seconds on some) could leave its stat the same
SETTLED_NS = 2_000_000_000

log = logging.getLogger(__name__)
_warned: set[tuple[object, ...]] = set()
_loaded_secrets: set[str] = set()  # every key this process has loaded: errors are scrubbed of them


def warn_once(key: tuple[object, ...], message: str) -> None:
    """A warning said once per process for one fact (a credential is read at every model call)."""
    if key not in _warned:
        _warned.add(key)
        log.warning(message)


def secret_renderings(secret: str) -> list[str]:
    """The texts a secret can appear as in an error: itself, Python- and JSON-escaped, as bytes;
    longest first, so a longer form is replaced before a shorter one inside it."""
    forms = {secret, repr(secret)[1:-1], json.dumps(secret)[1:-1], repr(secret.encode("utf-8", "replace"))[2:-1]}
    stripped = secret.strip()
    if stripped != secret:
        forms.add(stripped)
    return sorted((f for f in forms if len(f) >= MIN_SCRUB_LENGTH), key=len, reverse=True)


def scrub_secret(text: str, secret: str | None) -> str:
    """`text` with every rendering of `secret` replaced by ***."""
    if not secret or len(secret.strip()) < MIN_SCRUB_LENGTH:
        return text
    for form in secret_renderings(secret):
        text = text.replace(form, "***")
    return text


def scrub_known_secrets(text: str) -> str:
    """`text` with every rendering of every key this process has loaded replaced by ***."""
    for secret in _loaded_secrets:
        text = scrub_secret(text, secret)
    return text


def _problem_inside(value: str) -> str | None:
    """What makes a (stripped) secret unusable in an HTTP header, if anything."""
    for ch in value:
        if ch in "\r\n":
            return "a line break"
        if ch.isspace():
            return "a space"
        if ord(ch) < 32 or ord(ch) == 127:
            return "a control character"
        if ord(ch) > 126:
            return "a non-ASCII character"
    return None


def clean_credential(data: dict[str, Any], where: str) -> dict[str, Any]:
    """The credential's data with whitespace around each text value removed (with a warning
    naming `where` and the field); a secret with a line break, space or non-ASCII text inside
    is a CredentialError. Never shows the value."""
    cleaned = dict(data)
    for name, value in data.items():
        if not isinstance(value, str):
            continue
        stripped = value.strip()
        if stripped != value:
            what = "a line break" if any(c in "\r\n" for c in value) else "whitespace"
            warn_once(
                ("strip", where, name),
                f"{where}: {name} had {what} around it; it was removed (fix the stored value to silence this)",
            )
            cleaned[name] = stripped
        if name in SECRET_FIELDS and stripped:
            _loaded_secrets.update({value, stripped} if len(stripped) >= MIN_SCRUB_LENGTH else ())
            problem = _problem_inside(stripped)
            if problem:
                raise CredentialError(
                    f"{where}: {name} contains {problem}; an API key is one word of printable ASCII characters"
                )
    return cleaned


class CredentialError(MiniN8nError):
    """The credential file cannot be read or written; the message names the file, never a secret."""


class CredentialInfo(NamedTuple):
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
    return _default_path(env_value(CREDENTIALS_FILE_ENV), env_value(HOME_ENV), env_value("XDG_CONFIG_HOME"), env_value("HOME"))


@functools.lru_cache(maxsize=8)
def _default_path(explicit: str | None, home: str | None, config: str | None, user_home: str | None) -> Path:
    """The default location for these environment values (asked at every model call: kept per values)."""
    if explicit:
        return Path(explicit).expanduser()
    if home:
        return Path(home).expanduser() / "credentials.json"
    return Path(config or str(Path.home() / ".config")) / "mini-n8n" / "credentials.json"


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


def _identity(path: Path, st: os.stat_result) -> tuple[object, ...]:
    """What tells one version of a file from another without reading it."""
    return (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


class FileCredentialStore:
    """Credentials in one JSON file readable by the user only: {"credentials": [{id, name, type, data}]}."""

    def __init__(self, path: Path | str | None = None) -> None:
        self._path = Path(path) if path is not None else None
        # the entries last read, with the file's identity and stat then: a model call reads the
        # credential each time, and the file is parsed again only when it has changed
        self._cached: tuple[tuple[object, ...], list[dict[str, Any]]] | None = None

    @property
    def path(self) -> Path:
        """The explicit file, else the default location as the environment says now."""
        return self._path if self._path is not None else default_credentials_path()

    def _read(self) -> list[dict[str, Any]]:
        """The file's credential entries; parsed again only when its path, inode, size, mtime,
        ctime or mode differ from the last read, or it changed within SETTLED_NS of that read
        (an edit is seen at the next call)."""
        path = self.path
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise CredentialError(f"cannot read the credential file {path}: {exc.strerror}") from None
        key = _identity(path, st)
        cached = self._cached
        if cached is not None and cached[0] == key:
            return list(cached[1])
        self._cached = None
        entries = self._parse(path)
        try:
            unchanged = _identity(path, os.stat(path)) == key  # while it was read: what was read is what the key names
        except OSError:
            unchanged = False
        if unchanged and time.time_ns() - st.st_ctime_ns > SETTLED_NS:
            self._cached = (key, entries)
        return list(entries)

    def _parse(self, path: Path) -> list[dict[str, Any]]:
        try:
            raw = path.read_bytes()
            mode = path.stat().st_mode
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise CredentialError(f"cannot read the credential file {path}: {exc.strerror}") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            warn_once(
                ("mode", str(path), mode),
                f"the credential file {path} can be read or changed by other users (mode {stat.S_IMODE(mode):04o}); "
                f"it is used anyway. Make it yours only: chmod 600 {path}",
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CredentialError(
                f"the credential file {path} is not text (byte {exc.start} is not UTF-8); it must hold JSON: "
                '{"credentials": [...]}'
            ) from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CredentialError(f"the credential file {path} is not valid JSON (line {exc.lineno})") from None
        except RecursionError:
            raise CredentialError(f"the credential file {path} is nested too deeply to be a credential file") from None
        entries = doc.get("credentials") if isinstance(doc, dict) else None
        if not isinstance(entries, list):
            raise CredentialError(f'the credential file {path} has no "credentials" list')
        return [e for e in entries if isinstance(e, dict) and isinstance(e.get("data"), dict)]

    def _write(self, entries: list[dict[str, Any]]) -> None:
        import tempfile  # with shutil, bz2 and lzma: imported when credentials are saved, not at every start

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
                            return self._cleaned(entry, cred_type)
            return None
        return self._cleaned(entries[0], cred_type) if len(entries) == 1 else None

    def _cleaned(self, entry: dict[str, Any], cred_type: str) -> dict[str, Any]:
        where = describe_credential(cred_type, {"id": entry.get("id"), "name": entry.get("name")})
        return clean_credential(entry["data"], f"{where} in {self.path}")

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

    def get(self, cred_type: str, ref: dict | None) -> dict[str, str] | None:
        names = self.ENV.get(cred_type, {})
        found = {}
        for field_name, variable in names.items():
            value = env_value(variable)
            if value:
                found.update(clean_credential({field_name: value}, f"${variable}"))
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
