"""The `mini-n8n` command: a subcommand (`run`, `resume`, `executions`, ...) goes to the headless
CLI, anything else opens the editor. It lives on the GUI side because only this side may know both;
the CLI path imports no Qt."""

from __future__ import annotations

import sys
from typing import Callable, Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from engine.cli import is_command

    if is_command(args):
        from engine.cli import main as cli_main

        return cli_main(None if argv is None else args)  # None: the process's own command line
    return import_editor()(args)


def import_editor() -> Callable[[list[str]], int]:
    """The editor's `main`, its modules imported with the collector off and frozen after: they
    live as long as the process, and no collection walks them again. Only this path imports Qt."""
    import gc

    from engine.collector import pause_collections
    from engine.pydantic_plugins import without_pydantic_plugins

    without_pydantic_plugins()
    resume_collections = pause_collections()
    try:
        from gui.app import main as editor_main
    finally:
        gc.freeze()
        resume_collections()
    return editor_main


if __name__ == "__main__":
    raise SystemExit(main())
