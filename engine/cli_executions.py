"""`mini-n8n executions list|show|delete|prune|check`: the execution store from the command line."""

from __future__ import annotations

import argparse
import sys

from .cli import EXIT_OK, EXIT_USAGE, report
from .store import ExecutionStoreBase
from .terminal import Output


def executions(args: argparse.Namespace, out: Output) -> int:
    from .store import open_store

    store = open_store()
    try:
        return _executions(store, args, out)
    finally:
        store.close()


def _executions(store: ExecutionStoreBase, args: argparse.Namespace, out: Output) -> int:
    import time

    from .errors import MiniN8nError
    from .run_log import format_line
    from .steps_table import rows_to_text, steps_of

    if args.action == "list":
        rows = store.list()
        if not rows:
            out.line("no executions")
        for row in rows:
            if out.closed:
                break
            started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.started_at / 1000))
            took = f"{row.duration_ms:8.0f} ms" if row.duration_ms is not None else "        —  "
            out.line(f"{row.id}  {row.status:<9}  {started}  {took}  {row.mode:<6}  {row.workflow_name}")
        return EXIT_OK
    if args.action in ("prune", "check"):
        return maintain(store, args, out)
    try:
        state = store.load(args.id)
    except MiniN8nError as exc:
        print(f"mini-n8n: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.action == "delete":
        store.delete(args.id)
        out.line(f"deleted {args.id}")
        return EXIT_OK
    if args.json:
        import json

        from .raw_output import raw_output

        out.line(json.dumps(raw_output(state), indent=2, ensure_ascii=False))
        return EXIT_OK
    out.line(f"workflow: {state.workflow.name}  mode: {state.mode}")
    events = store.events(args.id)
    for event in events:
        task = event.task
        out.line(format_line(event.node, task, task.start_time + task.execution_time - state.started_at))
    rows = steps_of(events, finished=state.status in ("success", "error", "cancelled"))
    if rows:
        out.line("\nsteps:")
        out.line(rows_to_text(rows))
    return report(state, out) if state.status != "running" else EXIT_OK


def maintain(store: ExecutionStoreBase, args: argparse.Namespace, out: Output) -> int:
    """`executions prune` and `executions check`."""
    from pathlib import Path

    from .store import Retention

    if args.action == "check":
        store.check()
        out.line(f"{store.path}: ok")
        return EXIT_OK
    configured = Retention.from_env()
    retention = Retention(args.max_age_days if args.max_age_days is not None else configured.max_age_days,
                          args.max_count if args.max_count is not None else configured.max_count)
    if not retention.active:
        print("mini-n8n: error: nothing to prune by: give --max-age-days or --max-count "
              "(or set MINI_N8N_PRUNE_MAX_AGE_DAYS / MINI_N8N_PRUNE_MAX_COUNT)", file=sys.stderr)
        return EXIT_USAGE
    deleted = store.prune(retention, vacuum=not args.no_vacuum)
    vacuumed = ", file vacuumed" if isinstance(store.path, Path) else ", database vacuumed"
    out.line(f"pruned {deleted} execution{'' if deleted == 1 else 's'}" + ("" if args.no_vacuum else vacuumed))
    return EXIT_OK
