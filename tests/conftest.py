"""Shared fixtures: an engine with the built-in node types."""

from __future__ import annotations

import pytest

from engine.executor import Engine
from engine.registry import Registry, builtin_registry


@pytest.fixture
def registry() -> Registry:
    return builtin_registry()


@pytest.fixture
def engine(registry: Registry) -> Engine:
    return Engine(registry)


@pytest.fixture(autouse=True)
def _private_store(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test writes executions to its own SQLite file, never to the user's data folder."""
    monkeypatch.setenv("MINI_N8N_DB", str(tmp_path_factory.mktemp("store") / "executions.sqlite"))


@pytest.fixture(autouse=True)
def _private_credentials(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the user's credential file or API keys from the environment."""
    monkeypatch.setenv("MINI_N8N_CREDENTIALS", str(tmp_path_factory.mktemp("credentials") / "credentials.json"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", "OLLAMA_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _private_editor_files(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Editor windows keep recovery files and settings (recent files) in a temporary folder."""
    folder = tmp_path_factory.mktemp("editor")
    monkeypatch.setenv("MINI_N8N_RECOVERY_DIR", str(folder / "recovery"))
    monkeypatch.setenv("MINI_N8N_CONFIG_DIR", str(folder / "config"))


from tests.store_backends import pg_target, store_target  # noqa: E402,F401  (the store tests' back ends)


@pytest.fixture(autouse=True)
def _check_store_stacks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every boundary the store writes in a test is checked against the stack made whole: an entry
    changed without StackEntry.touch() fails the test instead of storing a stale entry."""
    monkeypatch.setattr("engine.store.boundary_rows.CHECK_STACKS", True)
