"""The job queue on Celery: how jobs are published, and the task a worker runs.

Broker: RabbitMQ by default ($MINI_N8N_QUEUE, an amqp:// or redis:// URL). RabbitMQ tracks each
unacknowledged delivery per connection and hands it to another consumer the moment that
connection dies, so a SIGKILLed worker's jobs move on at once; with Redis, Celery can only
restore them after a visibility timeout, a guess that either delays recovery or re-delivers
long executions that are still running.

Late acknowledgement: a job is acked only when its execution reached an end or a pause
(acks_late, reject_on_worker_lost for a pool child that died, prefetch 1 so a worker holds no
job it is not running). A job that finds its execution owned by a live process (a duplicate
delivery: a consumer timeout, a Redis visibility timeout) is retried later instead of run twice.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from celery import Celery

ENV_QUEUE = "MINI_N8N_QUEUE"
ENV_QUEUE_NAME = "MINI_N8N_QUEUE_NAME"  # several deployments on one broker: a queue name each
DEFAULT_BROKER = "amqp://guest:guest@127.0.0.1:5672//"
DEFAULT_QUEUE = "mini-n8n-executions"
TASK = "mini_n8n.run_execution"
BUSY_RETRY_S = 2.0  # a job whose execution another live process owns looks again after this long
STORE_RETRY_S, STORE_RETRIES = 5.0, 60  # a job whose store failed tries again (for five minutes)
# Redis only: how long a delivered, unacknowledged job stays invisible before Celery hands it
# out again. Longer than most executions (a duplicate waits on the owner's lease, see above).
REDIS_VISIBILITY_TIMEOUT_S = 3600

log = logging.getLogger("mini_n8n.worker")


def broker_url() -> str:
    return os.environ.get(ENV_QUEUE) or DEFAULT_BROKER


def queue_name() -> str:
    return os.environ.get(ENV_QUEUE_NAME) or DEFAULT_QUEUE


def make_app(url: str | None = None) -> Celery:
    url = url or broker_url()
    app = Celery("mini_n8n", broker=url, set_as_current=False)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,  # a job that raised (a bug, a bad job) is not redelivered forever
        worker_prefetch_multiplier=1,
        task_default_queue=queue_name(),
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,  # the execution store is where results are
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": REDIS_VISIBILITY_TIMEOUT_S} if url.startswith("redis") else {},
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        worker_enable_remote_control=False,  # no broadcast queue per worker: nothing here uses Celery's remote control
        task_send_sent_event=False,
    )
    app.task(name=TASK, bind=True, max_retries=None)(run_execution_task)
    return app


def publish(app: Celery, job: Any) -> None:
    """Hand a job (engine.serve.jobs.Job) to the workers; raises if the broker cannot take it."""
    app.send_task(TASK, args=[job.to_json()], queue=queue_name(), retry=True,
                  retry_policy={"max_retries": 3, "interval_start": 0.2, "interval_step": 0.5})


_engine: Any = None


def worker_engine() -> Any:
    """This worker process's engine and store, opened at its first job (after the pool forked)."""
    global _engine
    if _engine is None:
        from ..executor import Engine
        from ..registry import builtin_registry
        from ..services import Services
        from ..store import open_memory, open_store

        store = open_store()
        _engine = Engine(builtin_registry(), Services(memory=open_memory(store)), store=store)
    return _engine


def reset_engine() -> None:
    global _engine
    if _engine is not None:
        try:
            _engine.store.close()
        except Exception:  # its connection is already gone
            pass
        _engine = None


def run_execution_task(task: Any, job_data: dict[str, Any]) -> str:
    """The Celery task: run the job's execution to an end or a pause; its status."""
    from ..errors import MiniN8nError
    from ..store import ExecutionBusy
    from .jobs import Job, run_job

    job = Job.from_json(job_data)
    stream = job.stream
    on_chunk = None
    if stream is not None:
        publisher = chunk_publisher(task.app)
        on_chunk = lambda chunk: publisher.chunk(stream, job.execution_id, chunk)  # noqa: E731
    try:
        engine = worker_engine()
        state = asyncio.run(run_job(engine, job, stop_requested=engine.store.stop_requested, on_chunk=on_chunk))
    except ExecutionBusy as busy:
        log.info("execution %s: %s; looking again in %.0f s", job.execution_id, busy, BUSY_RETRY_S)
        raise task.retry(countdown=BUSY_RETRY_S)
    except MiniN8nError as exc:  # the store failed (a database restart): reconnect for the next try
        log.warning("execution %s: %s; trying again in %.0f s", job.execution_id, exc, STORE_RETRY_S)
        reset_engine()
        raise task.retry(countdown=STORE_RETRY_S, max_retries=STORE_RETRIES)
    if stream is not None:
        publisher.done(stream, job.execution_id, state.status)
    log.info("execution %s: %s", job.execution_id, state.status)
    return state.status


_publisher: Any = None


def chunk_publisher(app: Celery) -> Any:
    """This worker process's publisher of streamed chunks (engine/serve/chunks.py), on the broker."""
    global _publisher
    if _publisher is None:
        from .chunks import ChunkPublisher

        _publisher = ChunkPublisher(app.connection_for_write)
    return _publisher
