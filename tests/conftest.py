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
