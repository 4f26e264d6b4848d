"""The `mini-n8n` command: run a workflow file headless, or open the editor.

`mini-n8n run FILE [--message TEXT] [--session ID]` prints the run log, then `status:` and
`answer:`. Exit 0 on success, 1 on a failed run, 2 on a bad file or bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Sequence

from .errors import MiniN8nError, WorkflowFileError
from .executor import Engine
from .hooks import Hooks
from .registry import builtin_registry
from .run_data import ExecutionState
from .run_log import RunLog, compact
from .workflow import load_workflow

SUBCOMMANDS = {"run"}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 as well; keep its message short
        self.print_usage(sys.stderr)
        print(f"mini-n8n: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mini-n8n", description="Build and debug tool-calling AI agents.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = sub.add_parser("run", help="run a workflow file and print its run log")
    run.add_argument("file", help="an n8n workflow JSON file")
    run.add_argument("--message", "-m", help="a chat message: starts from the Chat Trigger")
    run.add_argument("--session", help="the chat session id (Simple Memory key)")
    run.add_argument("--quiet", "-q", action="store_true", help="print only status and answer")
    return parser


def answer_of(state: ExecutionState) -> str | None:
    items = state.result or []
    if not items:
        return None
    data = items[0].get("json", {})
    if "output" in data:
        value = data["output"]
        return value if isinstance(value, str) else compact(value)
    return compact(data)


async def run_file(args: argparse.Namespace) -> int:
    try:
        workflow = load_workflow(args.file)
    except WorkflowFileError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    engine = Engine(builtin_registry())
    log = RunLog(on_line=None if args.quiet else lambda line: print(line.text, flush=True))
    try:
        if args.message is not None:
            from nodes.triggers.chat_trigger import chat_item

            start = engine.start_node(workflow, prefer_chat=True)
            if not start.type.endswith(".chatTrigger"):
                print(f'mini-n8n: error: --message needs a Chat Trigger, and "{workflow.name}" has none', file=sys.stderr)
                return 2
            items = [chat_item(args.message, args.session)]
        else:
            start = engine.start_node(workflow)
            items = None
        state = await engine.run(workflow, start=start.name, items=items, hooks=Hooks(log), mode="cli")
    except MiniN8nError as exc:
        print(f"mini-n8n: error: {exc}", file=sys.stderr)
        return 2
    print()
    print(f"status: {state.status}")
    if state.status == "success":
        answer = answer_of(state)
        if answer is not None:
            print(f"answer: {answer}")
        return 0
    if state.error is not None:
        where = f"[{state.error.node}] " if state.error.node else ""
        print(f"error: {where}{state.error.message}")
        if state.error.description:
            print(f"       {state.error.description}")
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or args_list[0] not in SUBCOMMANDS and args_list[0] not in ("-h", "--help"):
        from gui.app import main as gui_main  # the editor; only this path imports Qt

        return gui_main(args_list)
    args = build_parser().parse_args(args_list)
    if args.command == "run":
        return asyncio.run(run_file(args))
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
