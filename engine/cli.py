"""The `mini-n8n` command: run, resume and inspect executions headless, or open the editor.

`mini-n8n run FILE [--message TEXT] [--session ID] [--break SPEC]` prints the run log, then
`status:` and `answer:`; `--trigger NAME --input JSON` starts from any trigger with the given
item, `--raw-output` prints the execution as n8n's `execute --rawOutput` does. Exit 0 on success, 1 on a failed run, 2 on a bad file or bad
arguments, 3 when the run paused at a breakpoint (continue it with `mini-n8n resume ID`).
Every execution is written to the execution store (`$MINI_N8N_DB` overrides its path).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Sequence

from .abort import AbortSignal
from .debugger import PAUSE_KINDS, Breakpoints, Debugger
from .errors import MiniN8nError, WorkflowFileError
from .executor import Engine, Execution
from .hooks import ExecutionPaused, Hooks
from .registry import Registry, builtin_registry
from .raw_output import raw_output
from .replay import ReplaySource
from .run_data import ExecutionState
from .run_log import RunLog, compact, format_line
from .services import Services
from .start import StartError, read_input, unsupported_message, unsupported_on_path
from .steps_table import rows_to_text, steps_of
from .store import ExecutionStore, Retention, SqliteMemoryStore
from .workflow import load_workflow

SUBCOMMANDS = {"run", "resume", "executions", "rerun", "replay"}
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_PAUSED = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        self.print_usage(sys.stderr)
        print(f"mini-n8n: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mini-n8n", description="Build and debug tool-calling AI agents. Without a command: open the editor.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = sub.add_parser("run", help="run a workflow file and print its run log")
    run.add_argument("file", help="an n8n workflow JSON file")
    run.add_argument("--message", "-m", help="a chat message: starts from the Chat Trigger")
    run.add_argument("--session", help="the chat session id (Simple Memory key)")
    run.add_argument("--break", dest="breaks", action="append", default=[], metavar="SPEC",
                     help=f"pause there and exit 3: a node name or one of {', '.join(PAUSE_KINDS[1:])}, "
                          "optionally KIND:TOOL, or from-iteration:N")
    run.add_argument("--quiet", "-q", action="store_true", help="print only status and answer")
    run.add_argument("--trigger", metavar="NAME", help="start from this trigger (any trigger, also types mini-n8n does not run)")
    run.add_argument("--input", metavar="JSON", help="the trigger's output item(s): JSON text or @file.json")
    run.add_argument("--raw-output", action="store_true", help="print only the execution as JSON, in the shape of n8n's `execute --rawOutput`")
    resume = sub.add_parser("resume", help="continue a paused or crashed execution")
    resume.add_argument("id")
    resume.add_argument("--quiet", "-q", action="store_true")
    rerun = sub.add_parser("rerun", help="run a finished execution again, reusing its results up to an iteration")
    rerun.add_argument("id")
    rerun.add_argument("--from-iteration", type=int, required=True, metavar="N",
                       help="recorded model replies and tool results for iterations 1..N, live after")
    rerun.add_argument("--quiet", "-q", action="store_true")
    replay = sub.add_parser("replay", help="run an execution again offline on its recorded model replies; report the first divergence")
    replay.add_argument("id")
    replay.add_argument("--quiet", "-q", action="store_true")
    ex = sub.add_parser("executions", help="list, show or delete stored executions")
    ex_sub = ex.add_subparsers(dest="action", required=True, parser_class=_Parser)
    ex_sub.add_parser("list", help="the stored executions, newest first")
    show = ex_sub.add_parser("show", help="the run log of one execution")
    show.add_argument("id")
    show.add_argument("--json", action="store_true", help="the execution as JSON, in the shape of n8n's `execute --rawOutput`")
    delete = ex_sub.add_parser("delete", help="delete one execution")
    delete.add_argument("id")
    prune = ex_sub.add_parser("prune", help="delete finished executions beyond the retention setting, then vacuum")
    prune.add_argument("--max-age-days", type=float, metavar="N", help="keep finished executions of the last N days "
                       "(default $MINI_N8N_PRUNE_MAX_AGE_DAYS)")
    prune.add_argument("--max-count", type=int, metavar="N", help="keep the newest N finished executions "
                       "(default $MINI_N8N_PRUNE_MAX_COUNT)")
    prune.add_argument("--no-vacuum", action="store_true", help="do not compact the file afterwards")
    ex_sub.add_parser("check", help="check the whole store file for damage (read-only)")
    return parser


def parse_breaks(specs: list[str]) -> Breakpoints:
    bp = Breakpoints()
    for spec in specs:
        kind, _, arg = spec.partition(":")
        if kind == "from-iteration":
            bp.from_iteration = int(arg)
        elif kind == "before_model":
            bp.before_model = True
        elif kind == "after_model":
            bp.after_model = True
        elif kind in ("before_tool", "tool_result", "tool_error"):
            bp.before_tool |= kind == "before_tool"
            bp.after_tool_result |= kind == "tool_result"
            bp.on_tool_error |= kind == "tool_error"
            if arg:
                bp.tools.append(arg)
        elif kind == "node":
            bp.nodes.append(arg)
        else:
            bp.nodes.append(spec)
    return bp


def answer_of(state: ExecutionState) -> str | None:
    items = state.result or []
    if not items:
        return None
    data = items[0].get("json", {})
    if "output" in data:
        value = data["output"]
        return value if isinstance(value, str) else compact(value)
    return compact(data)


def open_engine(registry: Registry | None = None) -> Engine:
    """An engine that stores every execution and keeps Simple Memory in the store's file."""
    store = ExecutionStore()
    return Engine(registry or builtin_registry(), Services(memory=SqliteMemoryStore(store)), store=store)


async def drive(execution: Execution, quiet: bool) -> int:
    """Run (or continue) an execution, printing its log; a pause detaches it and exits 3."""
    log = RunLog(on_line=None if quiet else lambda line: print(line.text, flush=True))
    execution.hooks.add(log)

    def on_pause(event: object) -> None:
        if isinstance(event, ExecutionPaused):
            asyncio.get_running_loop().call_soon(execution.detach)

    execution.hooks.add(on_pause)
    state = await execution.run()
    return report(state)


def report(state: ExecutionState) -> int:
    print()
    print(f"execution: {state.id}")
    print(f"status: {state.status}")
    if state.status == "paused":
        where = state.pause or {}
        print(f"paused: {where.get('kind')} at \"{where.get('node')}\"" + (f", iteration {where['iteration']}" if where.get("iteration") else ""))
        print(f"continue with: mini-n8n resume {state.id}")
        return EXIT_PAUSED
    if state.status == "success":
        answer = answer_of(state)
        if answer is not None:
            print(f"answer: {answer}" if answer.strip() else "answer: (empty reply — the model returned no text)")
        return EXIT_OK
    if state.error is not None:
        where = f"[{state.error.node}] " if state.error.node else ""
        print(f"error: {where}{state.error.message}")
        if state.error.description:
            print(f"       {state.error.description}")
    return EXIT_FAILED


async def run_file(args: argparse.Namespace) -> int:
    try:
        workflow = load_workflow(args.file)
    except WorkflowFileError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    try:
        engine = open_engine()
        if args.message is not None:
            from nodes.triggers.chat_trigger import chat_item

            start = engine.start_node(workflow, prefer_chat=True, trigger=args.trigger)
            if not start.type.endswith(".chatTrigger"):
                print(f'mini-n8n: error: --message needs a Chat Trigger, and "{workflow.name}" has none', file=sys.stderr)
                return EXIT_USAGE
            items = [chat_item(args.message, args.session)]
        else:
            items = read_input(args.input) if args.input is not None else None
            start = engine.start_node(workflow, trigger=args.trigger, injected=items is not None)
        blocked = unsupported_on_path(workflow, engine.registry, start.name, injected=items is not None)
        if blocked:
            raise StartError(unsupported_message(blocked))
        execution = engine.create(workflow, start=start.name, items=items, mode="cli")
    except MiniN8nError as exc:
        print(f"mini-n8n: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.breaks:
        execution.debugger = Debugger(parse_breaks(args.breaks))
    if args.raw_output:
        state = await execution.run()
        print(json.dumps(raw_output(state), indent=2, ensure_ascii=False))
        return {"success": EXIT_OK, "paused": EXIT_PAUSED}.get(state.status, EXIT_FAILED)
    return await drive(execution, args.quiet)


async def resume(args: argparse.Namespace) -> int:
    try:
        execution = open_engine().resume(args.id)
    except MiniN8nError as exc:
        print(f"mini-n8n: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return await drive(execution, args.quiet)


def prepare_rerun(engine: Engine, execution_id: str, *, from_iteration: int | None = None, compare: bool = False,
                  hooks: Hooks | None = None, signal: AbortSignal | None = None) -> tuple[Execution, ReplaySource]:
    """A new execution of a stored one's workflow and first input, fed its recorded results:
    up to `from_iteration` (re-run from here), or all of them compared as they go (`compare`)."""
    recorded = engine.store.load(execution_id)
    first = recorded.run_data.get(recorded.start_node or "", [])
    items = first[0].input.get("main", [[]])[0] if first else None
    execution = engine.create(recorded.workflow, start=recorded.start_node, items=items,
                              mode="replay" if compare else "rerun", hooks=hooks, signal=signal)
    source = ReplaySource(recorded, upto_iteration=None if compare else from_iteration, compare=compare)
    execution.replay = source
    return execution, source


async def rerun(args: argparse.Namespace, compare: bool) -> int:
    engine = open_engine()
    try:
        execution, source = prepare_rerun(engine, args.id, from_iteration=getattr(args, "from_iteration", None),
                                          compare=compare)
    except MiniN8nError as exc:
        print(f"mini-n8n: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    code = await drive(execution, args.quiet)
    print(f"reused: {source.used_models} model repl{'y' if source.used_models == 1 else 'ies'}, {source.used_tools} tool result(s)")
    if compare:
        if source.divergence is None and execution.state.status == "success":
            print("replay: no divergence")
        elif source.divergence is not None:
            print(f"divergence: {source.divergence.describe()}")
    return code


def executions(args: argparse.Namespace) -> int:
    store = ExecutionStore()
    if args.action == "list":
        rows = store.list()
        if not rows:
            print("no executions")
        for row in rows:
            started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.started_at / 1000))
            took = f"{row.duration_ms:8.0f} ms" if row.duration_ms is not None else "        —  "
            print(f"{row.id}  {row.status:<9}  {started}  {took}  {row.mode:<6}  {row.workflow_name}")
        return EXIT_OK
    if args.action in ("prune", "check"):
        return maintain(store, args)
    try:
        state = store.load(args.id)
    except MiniN8nError as exc:
        print(f"mini-n8n: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.action == "delete":
        store.delete(args.id)
        print(f"deleted {args.id}")
        return EXIT_OK
    if args.json:
        print(json.dumps(raw_output(state), indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"workflow: {state.workflow.name}  mode: {state.mode}")
    events = store.events(args.id)
    for event in events:
        task = event.task
        print(format_line(event.node, task, task.start_time + task.execution_time - state.started_at))
    rows = steps_of(events, finished=state.status in ("success", "error", "cancelled"))
    if rows:
        print("\nsteps:")
        print(rows_to_text(rows))
    return report(state) if state.status != "running" else EXIT_OK


def maintain(store: ExecutionStore, args: argparse.Namespace) -> int:
    """`executions prune` and `executions check`."""
    if args.action == "check":
        store.check()
        print(f"{store.path}: ok")
        return EXIT_OK
    configured = Retention.from_env()
    retention = Retention(args.max_age_days if args.max_age_days is not None else configured.max_age_days,
                          args.max_count if args.max_count is not None else configured.max_count)
    if not retention.active:
        print("mini-n8n: error: nothing to prune by: give --max-age-days or --max-count "
              "(or set MINI_N8N_PRUNE_MAX_AGE_DAYS / MINI_N8N_PRUNE_MAX_COUNT)", file=sys.stderr)
        return EXIT_USAGE
    deleted = store.prune(retention, vacuum=not args.no_vacuum)
    print(f"pruned {deleted} execution{'' if deleted == 1 else 's'}" + ("" if args.no_vacuum else ", file vacuumed"))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or args_list[0] not in SUBCOMMANDS and args_list[0] not in ("-h", "--help"):
        from gui.app import main as gui_main  # the editor; only this path imports Qt

        return gui_main(args_list)
    args = build_parser().parse_args(args_list)
    try:
        if args.command == "run":
            return asyncio.run(run_file(args))
        if args.command == "resume":
            return asyncio.run(resume(args))
        if args.command in ("rerun", "replay"):
            return asyncio.run(rerun(args, compare=args.command == "replay"))
        return executions(args)
    except MiniN8nError as exc:
        print(f"mini-n8n: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
