"""`mini-n8n serve [--mode regular|queue] [--host H] [--port P] FILE_OR_FOLDER...`."""

from __future__ import annotations

import logging
import os
import sys

from ..errors import MiniN8nError
from .worker import EXIT_USAGE, need_postgres

ENV_API_KEY = "MINI_N8N_API_KEY"


def main(targets: list[str], mode: str, host: str, port: int) -> int:
    if mode == "queue":
        refused = need_postgres("--mode queue")
        if refused is not None:
            print(f"mini-n8n: error: {refused}", file=sys.stderr)
            return EXIT_USAGE
    try:
        import uvicorn
    except ImportError:
        print("mini-n8n: error: serving needs the server extra: pip install 'mini-n8n[server]'", file=sys.stderr)
        return EXIT_USAGE
    from ..executor import Engine
    from ..registry import builtin_registry
    from ..services import Services
    from ..store import open_memory, open_store
    from .app import Server
    from .runners import InProcessRunner, QueueRunner
    from .workflows import chat_endpoints

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        endpoints, warnings = chat_endpoints(targets)
        for warning in warnings:
            print(f"mini-n8n: warning: {warning}", file=sys.stderr)
        if not endpoints:
            print("mini-n8n: error: none of the given workflows has anything to serve", file=sys.stderr)
            return EXIT_USAGE
        store = open_store()
        memory = open_memory(store)
        engine = Engine(builtin_registry(), Services(memory=memory), store=store)
        if mode == "queue":
            from .chunks import ChunkRelay
            from .queue import broker_url, make_app

            relay = ChunkRelay(broker_url()) if any(e.streaming for e in endpoints.values()) else None
            runner: InProcessRunner | QueueRunner = QueueRunner(engine, make_app(), relay)
        else:
            runner = InProcessRunner(engine)
    except MiniN8nError as exc:
        print(f"mini-n8n: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    api_key = os.environ.pop(ENV_API_KEY, None) or None  # kept only as a hash from here on
    if api_key is None:
        print(f"mini-n8n: warning: {ENV_API_KEY} is not set: the executions API answers 401 to every request", file=sys.stderr)
    server = Server(endpoints, runner, store, memory, api_key)
    del api_key
    base = f"http://{host}:{port}"
    for webhook_id, endpoint in endpoints.items():
        print(f"chat: {base}/webhook/{webhook_id}/chat  ({endpoint.workflow.name}, {endpoint.source})", flush=True)
    print(f"mode: {mode}; store: {store.path}", flush=True)
    uvicorn.run(server.app(), host=host, port=port, log_level="warning", access_log=False)
    return 0
