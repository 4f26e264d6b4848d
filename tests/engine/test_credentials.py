"""The credential store: a user-only JSON file, then the environment; workflows keep references only."""

from __future__ import annotations

import json
import stat

import pytest

from engine.credentials import (
    ChainedCredentialStore,
    CredentialError,
    EnvCredentialStore,
    FileCredentialStore,
    default_credential_store,
    default_credentials_path,
    scrub_secret,
)
from engine.services import Services


def test_save_list_get_delete(tmp_path) -> None:
    store = FileCredentialStore(tmp_path / "cfg" / "credentials.json")
    a = store.save("openAiApi", "Work", {"apiKey": "sk-a"})
    b = store.save("openAiApi", "Home", {"apiKey": "sk-b", "url": "http://127.0.0.1:9/v1"})
    store.save("ollamaApi", "Lab", {"baseUrl": "http://127.0.0.1:11434"})
    assert [(c.name, c.type) for c in store.list("openAiApi")] == [("Work", "openAiApi"), ("Home", "openAiApi")]
    assert store.get("openAiApi", {"id": b.id, "name": "renamed since"}) == {"apiKey": "sk-b", "url": "http://127.0.0.1:9/v1"}
    assert store.get("openAiApi", {"name": "Work"}) == {"apiKey": "sk-a"}
    assert store.get("openAiApi", {"id": "missing"}) is None
    assert store.get("openAiApi", None) is None  # two of that type: a reference must pick one
    assert store.get("ollamaApi", None) == {"baseUrl": "http://127.0.0.1:11434"}
    assert a.reference() == {"openAiApi": {"id": a.id, "name": "Work"}}
    assert store.delete(a.id) is True and store.delete(a.id) is False
    assert [c.name for c in store.list()] == ["Home", "Lab"]


def test_file_is_readable_by_the_user_only(tmp_path) -> None:
    path = tmp_path / "credentials.json"
    FileCredentialStore(path).save("openAiApi", "Work", {"apiKey": "sk-a"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["credentials"][0]["data"] == {"apiKey": "sk-a"}


def test_broken_file_is_named_without_its_content(tmp_path) -> None:
    path = tmp_path / "credentials.json"
    path.write_text('{"credentials": [{"data": {"apiKey": "sk-leak"}}')
    with pytest.raises(CredentialError) as info:
        FileCredentialStore(path).list()
    assert str(path) in str(info.value) and "sk-leak" not in str(info.value)


def test_environment_fallback_and_chain(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    file_store = FileCredentialStore(tmp_path / "credentials.json")
    chain = ChainedCredentialStore(file_store, EnvCredentialStore())
    assert chain.get("openAiApi", {"id": "x", "name": "Not saved"}) == {"apiKey": "sk-env"}
    info = chain.save("openAiApi", "Saved", {"apiKey": "sk-file"})
    assert chain.get("openAiApi", info.reference()["openAiApi"]) == {"apiKey": "sk-file"}
    names = [c.name for c in chain.list("openAiApi")]
    assert names == ["Saved", "Environment (OPENAI_API_KEY)"]
    env_ref = chain.list("openAiApi")[1]
    assert chain.get("openAiApi", {"id": env_ref.id}) == {"apiKey": "sk-env"}


def test_default_store_location_and_services(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("MINI_N8N_CREDENTIALS", raising=False)
    monkeypatch.setenv("MINI_N8N_HOME", str(tmp_path))
    assert default_credentials_path() == tmp_path / "credentials.json"
    monkeypatch.setenv("MINI_N8N_CREDENTIALS", str(tmp_path / "other.json"))
    assert default_credentials_path() == tmp_path / "other.json"
    store = default_credential_store()
    assert isinstance(store.stores[0], FileCredentialStore) and isinstance(store.stores[1], EnvCredentialStore)
    assert isinstance(Services().credentials, ChainedCredentialStore)


def write_entries(path, entries: list[dict], mode: int = 0o600) -> None:
    path.write_text(json.dumps({"credentials": entries}))
    path.chmod(mode)


def test_stray_whitespace_is_stripped_with_a_warning_naming_the_credential(tmp_path, caplog) -> None:
    path = tmp_path / "credentials.json"
    write_entries(path, [{"id": "c1", "name": "Pasted", "type": "openAiApi",
                          "data": {"apiKey": " sk-pasted-1234\r\n", "url": "http://127.0.0.1:9/v1 "}}])
    assert FileCredentialStore(path).get("openAiApi", {"id": "c1"}) == {"apiKey": "sk-pasted-1234", "url": "http://127.0.0.1:9/v1"}
    assert f'credential "Pasted" (openAiApi) in {path}: apiKey had a line break around it' in caplog.text
    assert "url had whitespace around it" in caplog.text
    assert "sk-pasted" not in caplog.text


def test_an_environment_key_with_a_newline_is_stripped(monkeypatch, caplog) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-99\n")
    assert EnvCredentialStore().get("openAiApi", None) == {"apiKey": "sk-env-key-99"}
    assert "$OPENAI_API_KEY: apiKey had a line break around it" in caplog.text


@pytest.mark.parametrize(("key", "problem"), [
    ("sk-two\nlines", "a line break"), ("sk two words", "a space"), ("sk-\x07bell", "a control character"),
    ("sk-ключ-1234", "a non-ASCII character"),
])
def test_a_key_that_cannot_be_sent_is_refused_without_showing_it(tmp_path, key: str, problem: str) -> None:
    path = tmp_path / "credentials.json"
    write_entries(path, [{"id": "c1", "name": "Bad", "type": "openAiApi", "data": {"apiKey": key}}])
    with pytest.raises(CredentialError) as info:
        FileCredentialStore(path).get("openAiApi", {"id": "c1"})
    message = str(info.value)
    assert message.startswith('credential "Bad" (openAiApi)') and problem in message
    assert key not in message and key[3:] not in message


@pytest.mark.parametrize("mode", [0o644, 0o666, 0o640])
def test_a_file_others_can_read_is_used_with_a_warning(tmp_path, caplog, mode: int) -> None:
    path = tmp_path / "credentials.json"
    write_entries(path, [{"id": "c1", "name": "Work", "type": "openAiApi", "data": {"apiKey": "sk-a-1234"}}], mode)
    assert FileCredentialStore(path).get("openAiApi", {"id": "c1"}) == {"apiKey": "sk-a-1234"}
    assert f"the credential file {path} can be read or changed by other users (mode {mode:04o})" in caplog.text
    assert f"chmod 600 {path}" in caplog.text
    caplog.clear()
    FileCredentialStore(path).list()
    assert caplog.text == ""  # said once


def test_a_private_file_gives_no_warning(tmp_path, caplog) -> None:
    path = tmp_path / "credentials.json"
    write_entries(path, [{"id": "c1", "name": "Work", "type": "openAiApi", "data": {"apiKey": "sk-a-1234"}}])
    FileCredentialStore(path).get("openAiApi", {"id": "c1"})
    assert caplog.text == ""


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", b"[" * 100_000])
def test_a_binary_or_absurd_file_is_an_error_naming_it(tmp_path, content: bytes) -> None:
    path = tmp_path / "credentials.json"
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(CredentialError) as info:
        FileCredentialStore(path).list()
    assert str(path) in str(info.value)


@pytest.mark.parametrize("text", [
    "Illegal header value b'Bearer sk-abc-secret\\n'",  # httpx's escaped form of a key ending in a newline
    'request {"authorization": "Bearer sk-abc-secret\\n"}',  # JSON's
    "key sk-abc-secret\n in the middle",  # as is
])
def test_every_rendering_of_a_key_is_scrubbed(text: str) -> None:
    scrubbed = scrub_secret(text, "sk-abc-secret\n")
    assert "sk-abc" not in scrubbed and "***" in scrubbed
    assert scrub_secret(text, "sk-abc-secret").count("sk-abc") == 0


def test_errors_recorded_anywhere_are_scrubbed_of_every_loaded_key(tmp_path) -> None:
    from engine.run_data import TaskError

    path = tmp_path / "credentials.json"
    write_entries(path, [{"id": "c1", "name": "Work", "type": "openAiApi", "data": {"apiKey": "sk-loaded-key-4242\n"}}])
    FileCredentialStore(path).get("openAiApi", {"id": "c1"})
    error = TaskError(message="a tool said: Bearer sk-loaded-key-4242", description="header b'Bearer sk-loaded-key-4242\\n'")
    assert "sk-loaded" not in error.message + str(error.description)
    stored = TaskError.model_validate_json(error.model_dump_json())
    assert stored == error


def _write_in_place(path, key: str) -> None:  # type: ignore[no-untyped-def]
    with open(path, "r+", encoding="utf-8") as handle:  # same inode, same size
        handle.write(json.dumps({"credentials": [{"id": "1", "name": "W", "type": "openAiApi", "data": {"apiKey": key}}]}))


def test_an_edit_in_place_is_seen_at_the_next_read(tmp_path) -> None:
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({"credentials": []}))
    path.chmod(0o600)
    store = FileCredentialStore(path)
    for key in ("sk-aaaa", "sk-bbbb", "sk-cccc"):  # same size each time, within one timestamp tick
        _write_in_place(path, key)
        assert store.get("openAiApi", None) == {"apiKey": key}


def test_a_settled_file_is_parsed_once_until_it_changes(tmp_path, monkeypatch) -> None:
    import engine.credentials as credentials

    path = tmp_path / "credentials.json"
    store = FileCredentialStore(path)
    store.save("openAiApi", "Work", {"apiKey": "sk-aaaa"})
    monkeypatch.setattr(credentials, "SETTLED_NS", -10**18)  # every file counts as settled
    reads = []
    real_parse = FileCredentialStore._parse
    monkeypatch.setattr(FileCredentialStore, "_parse", lambda self, p: reads.append(p) or real_parse(self, p))
    for _ in range(3):
        assert store.get("openAiApi", None) == {"apiKey": "sk-aaaa"}
    assert len(reads) == 1
    store.save("openAiApi", "Home", {"apiKey": "sk-bbbb"})  # replaced: another inode
    assert [c.name for c in store.list()] == ["Work", "Home"]
    assert len(reads) == 2
    path.unlink()
    assert store.list() == []
