"""engine/ and nodes/ run in a process that never imports Qt."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
