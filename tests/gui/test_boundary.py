"""Only gui/bridge.py drives the engine (runs, executions, the store, the debugger); other GUI
modules use its value types and get their collaborators passed in, never probed for."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[2]
GUI = ROOT / "gui"
DRIVERS = {"Engine", "Execution", "ExecutionStore", "ExecutionStoreBase", "SqliteExecutionStore", "StepBook",
           "Debugger", "ReplaySource", "Hooks", "AbortSignal", "open_engine", "RunBridge"}
DRIVER_MODULES = {"engine.executor", "engine.runs", "engine.replay", "engine.cli"}


def imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every `from module import name` and `import module` in a file."""
    found: list[tuple[str, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.extend((node.module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((alias.name, "") for alias in node.names)
    return found


def test_only_the_bridge_imports_what_drives_the_engine() -> None:
    offenders = []
    for path in GUI.rglob("*.py"):
        if path.relative_to(GUI).as_posix() in ("bridge.py", "launch.py"):  # the door, and the program's entry
            continue
        for module, name in imports(path):
            engine_side = module.split(".")[0] in ("engine", "nodes")
            if engine_side and (module in DRIVER_MODULES or name in DRIVERS or module.startswith("nodes")):
                offenders.append(f"{path.relative_to(ROOT)}: from {module} import {name}")
            if module == "gui.bridge" and name in DRIVERS - {"RunBridge"}:
                offenders.append(f"{path.relative_to(ROOT)}: from gui.bridge import {name}")
    assert offenders == []


def test_the_bridge_exports_no_engine_driver() -> None:
    import gui.bridge as bridge

    assert set(bridge.__all__) & (DRIVERS - {"RunBridge"}) == set()


def test_the_bridge_exports_only_what_it_owns() -> None:
    """Value types come from `engine` directly; the bridge's names are its own (no re-exports)."""
    import gui.bridge as bridge

    borrowed = [name for name in bridge.__all__
                if getattr(getattr(bridge, name), "__module__", "gui.bridge") != "gui.bridge"]
    assert borrowed == []
    through = []
    for path in [*GUI.rglob("*.py"), *(ROOT / "tests").rglob("*.py")]:
        for module, name in imports(path):
            if module == "gui.bridge" and name and name not in bridge.__all__:
                through.append(f"{path.relative_to(ROOT)}: from gui.bridge import {name}")
    assert through == []


def test_controllers_do_not_probe_their_collaborators() -> None:
    for name in ("run_controller.py", "debug_controller.py", "executions_controller.py", "bridge.py", "panels/executions.py",
                 "panels/chat_panel.py", "panels/steps_model.py", "start_from_trigger.py", "main_window.py"):
        text = (GUI / name).read_text()
        assert "getattr(" not in text and "hasattr(" not in text, name


def test_the_trigger_action_knows_its_window_by_type() -> None:
    text = (GUI / "start_from_trigger.py").read_text()
    assert "attr-defined" not in text and "window: MainWindow" in text


def test_no_panel_holds_the_store_the_step_book_or_the_debugger(run_window) -> None:
    from PySide6.QtCore import QObject

    from engine.debugger import Debugger
    from engine.executor import Engine
    from engine.steps_table import StepBook
    from engine.store import ExecutionStoreBase
    from gui.bridge import RunBridge
    from tests.builders import agent_workflow

    window, controller = run_window(agent_workflow([{"text": "hi"}], tools=[]))
    holders = []
    for obj in [window, *window.findChildren(QObject)]:
        if isinstance(obj, RunBridge):
            continue
        for attribute, value in vars(obj).items():
            if isinstance(value, (ExecutionStoreBase, StepBook, Debugger, Engine)):
                holders.append(f"{type(obj).__name__}.{attribute}: {type(value).__name__}")
    assert holders == []
    assert isinstance(controller.bridge, RunBridge) and controller.debug.bridge is controller.bridge
