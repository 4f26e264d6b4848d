"""The `mini-n8n` command's headless part: run, resume and inspect executions (gui/launch.py opens the editor when no command is given).

`mini-n8n serve FILE_OR_FOLDER...` and `mini-n8n worker` serve workflows (engine/serve).

`mini-n8n run FILE [--message TEXT] [--session ID] [--break SPEC]` prints the run log, then
`status:` and `answer:`. Exit 0 on success, 1 on a failed run, 2 on a bad file or bad
arguments, 3 when the run paused at a breakpoint (continue it with `mini-n8n resume ID`).
`--trigger NAME --input JSON` starts from any trigger with the given item; `--raw-output` prints
the execution as n8n's `execute --rawOutput` does. Ctrl-C stops a run where it is and exits 130; a closed stdout (`| head`) stops it and exits 141,
silently; either way the execution is stored paused ("interrupted") and `mini-n8n resume`
continues it from its last node boundary. Every execution is written to the execution store
(`$MINI_N8N_DB` overrides its path).

Only argparse is imported at start: `--help` stays instant, and a run imports the engine and
just the node types its workflow uses.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import closing
from typing import TYPE_CHECKING, Any, Sequence

from .pydantic_plugins import without_pydantic_plugins
from .terminal import EXIT_CLOSED_PIPE, EXIT_INTERRUPTED, Output, prepare_stdout, silence_stdout

if TYPE_CHECKING:
    from collections.abc import Callable

    from .debugger import Breakpoints
    from .executor import Execution
    from .run_data import ExecutionState

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_PAUSED = 0, 1, 2, 3
# --break kinds besides a node name (engine.debugger.PAUSE_KINDS without "node")
BREAK_KINDS = ("before_model", "after_model", "before_tool", "tool_result", "tool_error")
INTERRUPTED = "interrupted"  # the pause kind of a run stopped by Ctrl-C or a closed stdout


def _columns() -> int:
    """The terminal's width as argparse would find it ($COLUMNS, the terminal, else 80), without
    importing shutil (and with it bz2 and lzma) at every start."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ is not None else 80
    except (AttributeError, ValueError, OSError):
        return 80


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, width if width is not None else _columns() - 2)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    complete: Callable[[], argparse.ArgumentParser] | None = None  # the whole parser, when this one lists one command

    def error(self, message: str) -> None:
        (self if self.complete is None else self.complete()).print_usage(sys.stderr)
        print(f"mini-n8n: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _run_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("file", help="an n8n workflow JSON file")
    run.add_argument("--message", "-m", help="a chat message: starts from the Chat Trigger")
    run.add_argument("--session", help="the chat session id (Simple Memory key)")
    run.add_argument("--break", dest="breaks", action="append", default=[], metavar="SPEC",
                     help=f"pause there and exit 3: a node name or one of {', '.join(BREAK_KINDS)}, "
                          "optionally KIND:TOOL, or from-iteration:N")
    run.add_argument("--quiet", "-q", action="store_true", help="print only status and answer")
    run.add_argument("--trigger", metavar="NAME", help="start from this trigger (any trigger, also types mini-n8n does not run)")
    run.add_argument("--input", metavar="JSON", help="the trigger's output item(s): JSON text or @file.json")
    run.add_argument("--raw-output", action="store_true", help="print only the execution as JSON, in the shape of n8n's `execute --rawOutput`")


def _resume_arguments(resume: argparse.ArgumentParser) -> None:
    resume.add_argument("id")
    resume.add_argument("--input", help="the item(s) a Wait node waiting on a webhook call outputs (JSON, or @file.json)")
    resume.add_argument("--quiet", "-q", action="store_true")


def _rerun_arguments(rerun: argparse.ArgumentParser) -> None:
    rerun.add_argument("id")
    rerun.add_argument("--from-iteration", type=int, required=True, metavar="N",
                       help="recorded model replies and tool results for iterations 1..N, live after")
    rerun.add_argument("--quiet", "-q", action="store_true")


def _replay_arguments(replay: argparse.ArgumentParser) -> None:
    replay.add_argument("id")
    replay.add_argument("--quiet", "-q", action="store_true")


def _executions_arguments(ex: argparse.ArgumentParser) -> None:
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


def _serve_arguments(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("targets", nargs="+", metavar="FILE_OR_FOLDER", help="workflow files, or folders of them")
    serve.add_argument("--mode", choices=("regular", "queue"), default="regular",
                       help="regular: run executions in this process; queue: hand them to workers (PostgreSQL store)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=5678)


def _worker_arguments(worker: argparse.ArgumentParser) -> None:
    worker.add_argument("--concurrency", type=int, default=1, metavar="N", help="executions run at once (pool processes)")


# each command: its help line and what declares its arguments
_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None] | None]] = {
    "run": ("run a workflow file and print its run log", _run_arguments),
    "resume": ("continue a paused, interrupted or crashed execution", _resume_arguments),
    "rerun": ("run a finished execution again, reusing its results up to an iteration", _rerun_arguments),
    "replay": ("run an execution again offline on its recorded model replies; report the first divergence", _replay_arguments),
    "executions": ("list, show or delete stored executions", _executions_arguments),
    "examples": ("the paths of the example workflows that come with mini-n8n", None),
    "serve": ("serve workflows over HTTP: chat, webhook and form triggers, schedules, and the executions API", _serve_arguments),
    "worker": ("run queued executions (for `serve --mode queue`)", _worker_arguments),
}
SUBCOMMANDS = frozenset(_COMMANDS)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Given the command a command line starts with, only that
    command's parser is built (a parser costs ~0.4 ms, most of it argparse's gettext look-ups);
    the top-level usage an error prints still lists every command."""
    parser = _Parser(prog="mini-n8n", description="Build and debug tool-calling AI agents. Without a command: open the editor.")
    if command is not None:
        parser.complete = build_parser  # an error names every command in the usage
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, (help_text, declare) in _COMMANDS.items():
        if command is None or command == name:
            subparser = sub.add_parser(name, help=help_text)
            if declare is not None:
                declare(subparser)
    return parser


def parse_breaks(specs: list[str]) -> Breakpoints:
    from .debugger import Breakpoints

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


async def drive(execution: Execution, quiet: bool, out: Output, started: Callable[[], None]) -> int:
    """Run (or continue) an execution, printing its log; a pause detaches it and exits 3.

    Ctrl-C or a closed stdout stop it where it is: stored paused ("interrupted") at its last
    node boundary, so `mini-n8n resume` runs the interrupted node again; exit 130 or 141."""
    import asyncio
    import signal

    from .errors import StoreFailed
    from .hooks import ExecutionPaused, NodeBefore
    from .run_log import RunLog

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    running: list[str] = []  # the node that started last: where an interruption stops
    interrupted = finished = False

    def interrupt() -> None:
        nonlocal interrupted
        if not (interrupted or finished):
            interrupted = True
            task.cancel()

    def on_event(event: object) -> None:
        if isinstance(event, ExecutionPaused) and event.where.get("kind") != "wait":  # a wait ends the run itself
            loop.call_soon(execution.detach)
        elif isinstance(event, NodeBefore):
            running[:] = [event.node]

    execution.hooks.add(RunLog(on_line=None if quiet else lambda line: out.line(line.text)))
    execution.hooks.add(on_event)
    out.on_closed = lambda: loop.call_soon(interrupt)  # not from inside the hook that wrote
    loop.add_signal_handler(signal.SIGINT, interrupt)
    started()
    try:
        state = await execution.run()
    except asyncio.CancelledError:
        if not interrupted:
            raise
        task.uncancel()
        state = _store_interrupted(execution, running[0] if running else None)
    except StoreFailed as failed:
        state = execution.state
        if state.status != "crashed":  # the store failed after storing how the run ended
            raise
        # stored as crashed where it stopped, or found so once this process has ended
        raise StoreFailed(f"{failed}\n  execution {state.id} is kept where it stopped: `mini-n8n resume {state.id}`"
                          " continues it once that is mended") from failed
    finally:
        finished = True
        loop.remove_signal_handler(signal.SIGINT)
        out.on_closed = None
    code = report(state, out)
    if interrupted:
        return EXIT_CLOSED_PIPE if out.closed else EXIT_INTERRUPTED
    return code


def _store_interrupted(execution: Execution, node: str | None) -> ExecutionState:
    """Mark a run stopped mid-way as paused where it was; the store keeps its last boundary
    (the stack and runs written there), which is what a resume continues from."""
    state = execution.state
    state.status = "paused"
    state.pause = {"kind": INTERRUPTED, "node": node}
    store = execution.engine.store
    if store is not None:
        store.checkpoint(state, at_boundary=False)
    return state


def report(state: ExecutionState, out: Output) -> int:
    out.line()
    out.line(f"execution: {state.id}")
    out.line(f"status: {state.status}")
    if state.status == "paused":
        where = state.pause or {}
        out.line(f"paused: {where.get('kind')} at \"{where.get('node')}\"" + (f", iteration {where['iteration']}" if where.get("iteration") else ""))
        if where.get("kind") == "wait":
            from .expressions.scope import resume_urls

            payload = where.get("payload") or {}
            form = payload.get("resume") == "form"
            suffix = f"/{payload['webhookSuffix']}" if payload.get("webhookSuffix") else ""
            out.line(f"waiting for: {'GET|POST' if form else payload.get('httpMethod', 'GET')} "
                     f"{resume_urls(state.id)['resumeFormUrl' if form else 'resumeUrl']}{suffix} (mini-n8n serve)")
            out.line(f"continue with: mini-n8n resume {state.id} --input JSON")
        else:
            out.line(f"continue with: mini-n8n resume {state.id}")
        return EXIT_PAUSED
    if state.status == "success":
        from .runs import answer_of

        answer = answer_of(state)
        if answer is not None:
            out.line(f"answer: {answer}" if answer.strip() else "answer: (empty reply — the model returned no text)")
        return EXIT_OK
    if state.error is not None:
        where = f"[{state.error.node}] " if state.error.node else ""
        out.line(f"error: {where}{state.error.message}")
        if state.error.description:
            out.line(f"       {state.error.description}")
    return EXIT_FAILED


async def run_file(args: argparse.Namespace, out: Output, started: Callable[[], None]) -> int:
    from .errors import MiniN8nError, WorkflowFileError
    from .start import read_input
    from .workflow import load_workflow

    try:
        workflow = load_workflow(args.file)
    except WorkflowFileError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    for warning in workflow.load_warnings:
        print(f"mini-n8n: warning: {args.file}: {warning}", file=sys.stderr)
    from . import runs

    engine = runs.open_engine()
    with closing(engine.store):
        try:
            items = read_input(args.input) if args.input is not None and args.message is None else None
            execution = runs.start(engine, workflow, message=args.message, session_id=args.session, trigger=args.trigger,
                                   items=items, mode="cli")
        except runs.NoChatTrigger:
            print(f'mini-n8n: error: --message needs a Chat Trigger, and "{workflow.name}" has none', file=sys.stderr)
            return EXIT_USAGE
        except MiniN8nError as exc:
            print(f"mini-n8n: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if args.breaks:
            from .debugger import Debugger

            execution.debugger = Debugger(parse_breaks(args.breaks))
        if args.raw_output:
            return await raw_run(execution, out, started)
        return await drive(execution, args.quiet, out, started)


async def raw_run(execution: Execution, out: Output, started: Callable[[], None]) -> int:
    """`run --raw-output`: only the execution as JSON, as n8n's `execute --rawOutput` prints it."""
    import json

    from .raw_output import raw_output

    started()
    state = await execution.run()
    out.line(json.dumps(raw_output(state), indent=2, ensure_ascii=False))
    return {"success": EXIT_OK, "paused": EXIT_PAUSED}.get(state.status, EXIT_FAILED)


async def resume(args: argparse.Namespace, out: Output, started: Callable[[], None]) -> int:
    from .errors import MiniN8nError

    from .runs import open_engine, resume as resume_execution
    from .start import read_input

    engine = open_engine()
    with closing(engine.store):
        try:
            items = read_input(args.input) if args.input is not None else None
            execution = resume_execution(engine, args.id, items=items)
        except MiniN8nError as exc:
            print(f"mini-n8n: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        return await drive(execution, args.quiet, out, started)


async def rerun(args: argparse.Namespace, compare: bool, out: Output, started: Callable[[], None]) -> int:
    from .errors import MiniN8nError

    from .runs import open_engine, rerun as rerun_execution

    engine = open_engine()
    with closing(engine.store):
        try:
            execution, source = rerun_execution(engine, args.id, from_iteration=getattr(args, "from_iteration", None),
                                                compare=compare)
        except MiniN8nError as exc:
            print(f"mini-n8n: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        code = await drive(execution, args.quiet, out, started)
    out.line(f"reused: {source.used_models} model repl{'y' if source.used_models == 1 else 'ies'}, {source.used_tools} tool result(s)")
    if compare:
        if source.divergence is None and execution.state.status == "success":
            out.line("replay: no divergence")
        elif source.divergence is not None:
            out.line(f"divergence: {source.divergence.describe()}")
    return code


def examples(out: Output) -> int:
    """Print the path of each example workflow shipped with mini-n8n (run one with `mini-n8n run PATH`)."""
    from mini_n8n_resources import example_files

    for path in example_files():
        out.line(str(path))
    return EXIT_OK


def _command(args: argparse.Namespace, out: Output, started: Callable[[], None]) -> int:
    import asyncio

    if args.command == "run":
        return asyncio.run(run_file(args, out, started))
    if args.command == "resume":
        return asyncio.run(resume(args, out, started))
    if args.command in ("rerun", "replay"):
        return asyncio.run(rerun(args, args.command == "replay", out, started))
    if args.command == "examples":
        return examples(out)
    if args.command == "serve":
        from .serve.main import main as serve

        started()
        return serve(args.targets, args.mode, args.host, args.port)
    if args.command == "worker":
        from .serve.worker import main as worker

        started()
        return worker(args.concurrency)
    from .cli_executions import executions

    return executions(args, out)


def is_command(args: Sequence[str]) -> bool:
    """Whether a command line is for this CLI (a subcommand or --help); `mini-n8n` opens the editor otherwise."""
    return bool(args) and (args[0] in SUBCOMMANDS or args[0] in ("-h", "--help"))


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; `argv` None means this process's own command line, which ends when this returns."""
    return _main(list(sys.argv[1:] if argv is None else argv), process_ends=argv is None)


def _main(args_list: list[str], process_ends: bool) -> int:
    import gc

    out = Output()
    resume_collections: Callable[[], None] | None = None

    def started() -> None:
        """A run (or a server) starts: what the start-up built is frozen, never walked by a
        collection again, and the collector runs for what comes next."""
        nonlocal resume_collections
        if resume_collections is not None:
            gc.freeze()
            resume_collections()
            resume_collections = None

    try:
        args = build_parser(args_list[0] if args_list and args_list[0] in SUBCOMMANDS else None).parse_args(args_list)
        prepare_stdout()
        from .collector import fewer_collections, pause_collections

        if process_ends:
            # The process's own command: the collector is off while its start-up (imports, the
            # workflow, the store) builds what lives to the end, a tenth of a one-round run's CPU otherwise.
            resume_collections = pause_collections()
            without_pydantic_plugins()
        with fewer_collections():  # a command is short-lived: what it imports and builds lives to its end
            code = _command(args, out, started)
            if process_ends:
                # The interpreter's exit walks every object still alive (a whole run's worth)
                # in its last collections: a fifth of a one-round `mini-n8n run`'s CPU. The
                # store is closed by now; moving what is left out of the collector's reach skips
                # that walk (what is not in a reference cycle is still freed at exit).
                gc.freeze()
    except KeyboardInterrupt:  # Ctrl-C outside a run (a run stops itself): nothing to keep
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # stdout closed while printing outside Output
        silence_stdout()
        return EXIT_CLOSED_PIPE
    except Exception as exc:
        from .errors import MiniN8nError

        if not isinstance(exc, MiniN8nError):
            raise
        print(f"mini-n8n: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if resume_collections is not None:
            resume_collections()
    return EXIT_CLOSED_PIPE if out.closed else code


if __name__ == "__main__":
    raise SystemExit(main())
