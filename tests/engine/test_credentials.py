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
