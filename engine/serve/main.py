"""`mini-n8n serve [--mode regular|queue] [--host H] [--port P] FILE_OR_FOLDER...`."""

from __future__ import annotations

import logging
import os
import sys

from ..errors import MiniN8nError
from .worker import EXIT_USAGE, need_postgres

ENV_API_KEY = "MINI_N8N_API_KEY"
ENV_WEBHOOK_URL = "WEBHOOK_URL"  # n8n's: the public base URL of webhooks (their items' webhookUrl)
LOOPBACK_OR_ANY = ("0.0.0.0", "::", "127.0.0.1", "::1")  # webhookUrl names "localhost" then, as n8n's default host


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
    from .scheduler import Scheduler
    from .webhooks import WebhookServer
    from .workflows import serve_targets

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        served = serve_targets(targets)
        for warning in served.warnings:
            print(f"mini-n8n: warning: {warning}", file=sys.stderr)
        if not served:
            print("mini-n8n: error: none of the given workflows has anything to serve", file=sys.stderr)
            return EXIT_USAGE
        store = open_store()
        memory = open_memory(store)
        engine = Engine(builtin_registry(), Services(memory=memory), store=store)
        if mode == "queue":
            from .chunks import ChunkRelay
            from .queue import broker_url, make_app

            relay = ChunkRelay(broker_url()) if any(e.streaming for e in served.chats.values()) else None
            runner: InProcessRunner | QueueRunner = QueueRunner(engine, make_app(), relay)
        else:
            runner = InProcessRunner(engine)
    except MiniN8nError as exc:
        print(f"mini-n8n: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    api_key = os.environ.pop(ENV_API_KEY, None) or None  # kept only as a hash from here on
    if api_key is None:
        print(f"mini-n8n: warning: {ENV_API_KEY} is not set: the executions API answers 401 to every request", file=sys.stderr)
    base = f"http://{host}:{port}"
    public = os.environ.get(ENV_WEBHOOK_URL) or f"http://{'localhost' if host in LOOPBACK_OR_ANY else host}:{port}/"
    os.environ[ENV_WEBHOOK_URL] = public  # $execution.resumeUrl of the executions run in this process
    webhooks = WebhookServer(served.webhooks, runner, public)
    scheduler = Scheduler(served.schedules, runner) if served.schedules else None
    for warning in scheduler.warnings if scheduler is not None else ():
        print(f"mini-n8n: warning: {warning}", file=sys.stderr)
    server = Server(served.chats, runner, store, memory, api_key, webhooks=webhooks, scheduler=scheduler)
    del api_key
    for webhook_id, endpoint in served.chats.items():
        print(f"chat: {base}/webhook/{webhook_id}/chat  ({endpoint.workflow.name}, {endpoint.source})", flush=True)
    for hook in served.webhooks:
        print(f"{hook.kind}: {hook.method if hook.kind == 'webhook' else 'GET|POST'} {base}/{hook.kind}/{hook.path}  "
              f"({hook.workflow.name}, {hook.source})", flush=True)
    for line in scheduler.describe() if scheduler is not None else ():
        print(f"schedule: {line}", flush=True)
    print(f"mode: {mode}; store: {store.path}", flush=True)
    uvicorn.run(server.app(), host=host, port=port, log_level="warning", access_log=False)
    return 0
