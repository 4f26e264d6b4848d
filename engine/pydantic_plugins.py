"""mini-n8n uses no pydantic plugins: a process of its own (a command, the editor) tells pydantic
so before its first model, sparing pydantic's search for them."""

from __future__ import annotations

import os
import sys

PYDANTIC_LOADER_CHECKED = (2, 14)  # the newest pydantic whose plugin loader without_pydantic_plugins stands in for


def pydantic_checked() -> bool:
    """Whether the installed pydantic is at most PYDANTIC_LOADER_CHECKED, read from its
    version.py without importing it (this runs before the command imports anything)."""
    import importlib.util
    import re

    spec = importlib.util.find_spec("pydantic")
    if spec is None or spec.origin is None:
        return False
    try:
        with open(os.path.join(os.path.dirname(spec.origin), "version.py"), encoding="utf-8") as source:
            text = source.read()
    except OSError:
        return False
    found = re.search(r"^VERSION = '(\d+)\.(\d+)", text, re.MULTILINE)
    return found is not None and (int(found[1]), int(found[2])) <= PYDANTIC_LOADER_CHECKED


def without_pydantic_plugins() -> None:
    """Unless the user set PYDANTIC_DISABLE_PLUGINS, set it to "__all__" (looking for plugins
    reads the entry points of every installed distribution at the first model, ~3% of a
    one-round run, ~28M instructions before the editor's first frame), and while it disables
    them pydantic's plugin loader is a module giving that loader's answer, no plugins: the loader
    imports importlib.metadata (with email, zipfile, csv, tempfile...), another ~4%. The loader
    is pydantic's own module, not its API: a pydantic newer than PYDANTIC_LOADER_CHECKED keeps it."""
    value = os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if value in ("__all__", "1", "true") and "pydantic.plugin._loader" not in sys.modules and pydantic_checked():
        import types

        loader = types.ModuleType("pydantic.plugin._loader", "pydantic's plugin loader while PYDANTIC_DISABLE_PLUGINS disables plugins")
        loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
        sys.modules["pydantic.plugin._loader"] = loader
