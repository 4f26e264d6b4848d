"""The `mini-n8n` command: a subcommand (`run`, `resume`, `executions`, ...) goes to the headless
CLI, anything else opens the editor. It lives on the GUI side because only this side may know both;
the CLI path imports no Qt."""

from __future__ import annotations

import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from engine.cli import is_command

    if is_command(args):
        from engine.cli import main as cli_main

        return cli_main(None if argv is None else args)  # None: the process's own command line
    from gui.app import main as editor_main  # the editor; only this path imports Qt

    return editor_main(args)


if __name__ == "__main__":
    raise SystemExit(main())
