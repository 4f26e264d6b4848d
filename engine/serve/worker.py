"""`mini-n8n worker [--concurrency N]`: a Celery worker that runs queued executions.

N pool processes each run one execution at a time; the store must be PostgreSQL (the server
and every worker share it, on any number of machines)."""

from __future__ import annotations

import os
import socket
import sys

from ..store import is_postgres

EXIT_USAGE = 2


def need_postgres(what: str) -> str | None:
    """Why `what` cannot run on this store (None: $MINI_N8N_DB is a PostgreSQL URL)."""
    target = os.environ.get("MINI_N8N_DB")
    if is_postgres(target):
        return None
    return (f"{what} needs the execution store on PostgreSQL, shared by the server and every worker: set "
            f"MINI_N8N_DB to a postgresql:// URL (it is {target or 'unset: the SQLite file in your data folder'})")


def main(concurrency: int, loglevel: str = "INFO") -> int:
    refused = need_postgres("a worker")
    if refused is not None:
        print(f"mini-n8n: error: {refused}", file=sys.stderr)
        return EXIT_USAGE
    if concurrency < 1:
        print("mini-n8n: error: --concurrency must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    from ..store import open_store
    from .queue import make_app, queue_name

    open_store().close()  # a store that cannot be opened is reported now, not at the first job
    app = make_app()
    app.worker_main([
        "worker", f"--concurrency={concurrency}", "--pool=prefork", f"--loglevel={loglevel}", f"--queues={queue_name()}",
        f"--hostname=mini-n8n-{os.getpid()}@{socket.gethostname()}", "--without-gossip", "--without-mingle",
    ])
    return 0
