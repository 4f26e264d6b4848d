"""mini-n8n as a wheel: built from the checkout, installed into a new venv, run from elsewhere."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def test_every_package_of_the_checkout_is_in_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {".".join(init.parent.relative_to(ROOT).parts)
             for top in ("engine", "gui", "nodes") for init in (ROOT / top).rglob("__init__.py")}
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert config["package-dir"] == {"mini_n8n_resources": "resources"}


def test_every_data_file_is_in_a_listed_package_and_matched_by_its_patterns() -> None:
    """A folder holding data is a package of its own, listed, with its files' patterns: setuptools
    keeps the data of a folder it is not told about only as a fallback it warns about."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed, patterns = set(config["packages"]), config["package-data"]
    folders = {"resources": "mini_n8n_resources", "engine/expressions/js": "engine.expressions.js"}
    missed = []
    for folder, package in folders.items():
        for path in (ROOT / folder).rglob("*"):
            if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
                continue
            inner = path.parent.relative_to(ROOT / folder).parts
            owner = ".".join((package, *inner))
            if owner not in listed or not any(path.match(p) for p in patterns.get(owner, ())):
                missed.append(f"{path.relative_to(ROOT)} (package {owner})")
    assert missed == [], "data files no listed package's patterns take: " + ", ".join(missed)


@pytest.mark.slow
def test_the_wheel_installed_in_a_new_venv_runs_an_example_from_any_folder(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a clean copy: no stale build/ of the checkout can leak into the wheel
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__",
                                                                ".hypothesis", ".pytest_cache", "*.sqlite"))
    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    assert "absent from the `packages` configuration" not in built.stderr, built.stderr  # data setuptools may drop
    [wheel] = wheels.glob("mini_n8n-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # the dependencies come from this environment's site-packages (after the new venv's own)
    (site / "dev-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
                                str(wheel)], capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

    def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(a) for a in args], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)

    where = run(python, "-c", "import engine, gui, nodes, mini_n8n_resources as r, gui.theme as t; "
                              "print(engine.__file__); print(r.ICONS / 'agent.svg'); print(len(t.style_sheet()))")
    assert where.returncode == 0, where.stderr
    engine_file, icon, style_length = where.stdout.split()
    assert Path(engine_file).is_relative_to(venv) and Path(icon).is_relative_to(venv)
    assert Path(icon).is_file() and int(style_length) > 0

    examples = run(venv / "bin" / "mini-n8n", "examples")
    assert examples.returncode == 0, examples.stderr
    paths = [Path(line) for line in examples.stdout.splitlines()]
    assert {p.name for p in paths} == {p.name for p in (ROOT / "resources" / "examples").glob("*.json")}
    assert all(p.is_relative_to(venv) and p.is_file() for p in paths)
    scripted = next(p for p in paths if p.name == "scripted-calculator-agent.json")
    result = run(venv / "bin" / "mini-n8n", "run", scripted, "--message", "How much do 17 shirts cost?")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "answer: 17 shirts at 25 dollars each cost 425 dollars."
