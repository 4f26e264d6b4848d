"""engine/ and nodes/ run in a process that never imports Qt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

SCRIPT = """
import importlib, pkgutil, sys
import engine, nodes
for pkg in (engine, nodes):
    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        importlib.import_module(info.name)
qt = sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "qasync", "shiboken6", "PyQt5", "PyQt6"))
print("QT:" + ",".join(qt))
"""


def test_engine_and_nodes_never_import_qt() -> None:
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "QT:"


def test_no_qt_import_statement_in_engine_or_nodes() -> None:
    offenders = []
    for folder in ("engine", "nodes"):
        for path in (ROOT / folder).rglob("*.py"):
            for line in path.read_text().splitlines():
                stripped = line.strip()
                if stripped.startswith(("import ", "from ")) and any(
                    name in stripped.split()[1] for name in ("PySide6", "qasync", "shiboken6")
                ):
                    offenders.append(f"{path.relative_to(ROOT)}: {stripped}")
    assert offenders == []


def test_engine_and_nodes_never_import_the_editor() -> None:
    offenders = []
    for folder in ("engine", "nodes"):
        for path in (ROOT / folder).rglob("*.py"):
            for line in path.read_text().splitlines():
                words = line.split()
                if len(words) > 1 and words[0] in ("import", "from") and words[1].split(".")[0] == "gui":
                    offenders.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    assert offenders == []


def test_the_command_opens_the_editor_only_without_a_cli_command() -> None:
    from engine.cli import is_command

    assert is_command(["run", "x.json"]) and is_command(["--help"]) and is_command(["executions", "list"])
    assert not is_command([]) and not is_command(["workflow.json"])


def test_builtin_node_types_are_named_by_their_own_type_ids() -> None:
    import nodes
    from engine.registry import builtin_registry

    registry = builtin_registry()
    loaded = registry.types()
    assert [t.type for t in loaded] == list(nodes.BUILTIN_NODE_CLASSES)
    assert [t.type for t in nodes.BUILTIN_NODE_TYPES] == list(nodes.BUILTIN_NODE_CLASSES)


def test_a_wrongly_named_lazy_type_is_a_clear_error() -> None:
    import nodes
    from engine.errors import RegistryError
    from engine.registry import Registry

    registry = Registry(lazy={"n8n-nodes-base.wrong": "nodes.triggers.manual_trigger:ManualTrigger"},
                        loader=nodes.load_class)
    assert registry.knows("n8n-nodes-base.wrong")
    with pytest.raises(RegistryError, match='has type id "n8n-nodes-base.manualTrigger", registered as "n8n-nodes-base.wrong"'):
        registry.get("n8n-nodes-base.wrong")


IMPORTS = """
import sys
from engine.cli import main
try:
    main(sys.argv[1:])
except SystemExit:  # --help
    pass
heavy = sorted(m for m in ("pydantic", "engine.executor", "httpx", "mcp", "nodes.tools.mcp_client", "nodes.models.local_model",
                           "nodes.models.openai_chat", "nodes.tools.http_request", "llama_cpp") if m in sys.modules)
print("IMPORTED:" + ",".join(heavy), file=sys.stderr)
"""


def imported_by(*args: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", IMPORTS, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("IMPORTED:"), result.stderr
    return [m for m in last.removeprefix("IMPORTED:").split(",") if m]


def test_help_imports_neither_pydantic_nor_the_engine() -> None:
    assert imported_by("--help") == []


def test_a_scripted_run_imports_only_the_node_types_it_uses() -> None:
    example = ROOT / "resources" / "examples" / "scripted-calculator-agent.json"
    assert imported_by("run", "-q", str(example), "--message", "What is 2 + 2?") == ["engine.executor", "pydantic"]


COMMAND_PROCESS = """
import sys
from engine.cli import main
sys.argv = ["mini-n8n", *sys.argv[1:]]
code = main()  # the process's own command line, as the `mini-n8n` script runs it
loaded = sorted(m for m in ("importlib.metadata", "engine.debugger") if m in sys.modules)
print("LOADED:" + ",".join(loaded), file=sys.stderr)
"""


def loaded_by_command(env_value: str | None, *args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if env_value is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = env_value
    result = subprocess.run([sys.executable, "-c", COMMAND_PROCESS, *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=120, env=env)
    assert "status: success" in result.stdout, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("LOADED:"), result.stderr
    return [m for m in last.removeprefix("LOADED:").split(",") if m]


def test_a_command_looks_for_no_pydantic_plugins_unless_the_user_says_otherwise() -> None:
    """A run without breakpoints imports no debugger, and (pydantic plugins disabled, as the
    command sets unless the user chose) not the plugin loader's importlib.metadata."""
    example = ROOT / "resources" / "examples" / "scripted-calculator-agent.json"
    run = ("run", "-q", str(example), "--message", "What is 2 + 2?")
    assert loaded_by_command(None, *run) == []
    assert loaded_by_command("some-plugin", *run) == ["importlib.metadata"]


def test_a_pydantic_newer_than_the_checked_one_keeps_its_own_plugin_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine import pydantic_plugins

    assert pydantic_plugins.pydantic_checked()  # the pinned pydantic is one the stand-in was checked against
    monkeypatch.setattr(pydantic_plugins, "PYDANTIC_LOADER_CHECKED", (2, 5))
    assert not pydantic_plugins.pydantic_checked()
