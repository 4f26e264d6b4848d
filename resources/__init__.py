"""Files mini-n8n reads at run time: node icons, the editor's style sheet, example workflows.

In the repository this folder is `resources/`; installed, it is the package `mini_n8n_resources`
(pyproject.toml maps one onto the other), so the same paths work from a checkout and a wheel.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent
ICONS = ROOT / "icons"
STYLE_SHEET = ROOT / "style.qss"
EXAMPLES = ROOT / "examples"


def example_files() -> list[Path]:
    """The example workflows, by name."""
    return sorted(EXAMPLES.glob("*.json"))
