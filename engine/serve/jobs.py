"""A job: bring one execution to an end or a pause. The same code runs it in the server process
(`serve --mode regular`) and in a worker (`--mode queue`), where a redelivered job continues
the execution from its last stored boundary.

A job is plain JSON (the broker carries it): the execution id, and for a new execution its
workflow, start node and input items; `resume` continues a paused one (with `items`: the
request that resumes an execution a Wait node left waiting).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import asdict, dataclass
from typing import Any, Callable

from ..abort import AbortSignal
from ..errors import MiniN8nError
from ..executor import Engine, Execution
from ..hooks import ChunkSent, HookEvent
from ..run_data import ENDED, ExecutionState, Item, StackEntry
from ..store import ExecutionBusy
from ..workflow import Workflow, parse_workflow, workflow_to_data

MODE = "webhook"  # the mode n8n gives executions started by a webhook or a chat message
STOP_POLL_S = 0.5  # how often a worker asks the store whether its execution was asked to stop
log = logging.getLogger("mini_n8n.worker")


@dataclass(frozen=True)
class Job:
    execution_id: str
    workflow: dict[str, Any] | None = None
    start: str | None = None
    items: list[Item] | None = None
    resume: bool = False
    mode: str = MODE  # n8n's execution mode: "webhook" (webhooks, forms, chat), "trigger" (schedules)
    stream: str | None = None  # queue mode: where the worker sends the chunks of a streamed reply (engine/serve/chunks.py)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Job":
        return cls(**data)

    @classmethod
    def new(cls, workflow: Workflow, start: str, items: list[Item], execution_id: str, mode: str = MODE) -> "Job":
        return cls(execution_id, workflow_to_data(workflow), start, items, mode=mode)


def new_state(job: Job) -> ExecutionState:
    """The state of a job's execution before its first node (what Engine.create makes)."""
    assert job.workflow is not None and job.start is not None
    state = ExecutionState(id=job.execution_id, workflow=parse_workflow(job.workflow, f"job {job.execution_id}"),
                           mode=job.mode, startNode=job.start)
    state.stack.append(StackEntry(node=job.start, input=job.items if job.items is not None else [{"json": {}}]))
    return state


def prepare(engine: Engine, job: Job, signal: AbortSignal | None = None) -> Execution | None:
    """The execution the job continues, claimed for this process; None when there is nothing to
    do (it ended, or it is paused and the job does not resume it). Raises ExecutionBusy while
    another live process runs it."""
    store = engine.store
    if not store.exists(job.execution_id):
        if job.workflow is None:
            raise MiniN8nError(f'no execution "{job.execution_id}" to resume')
        return engine.restore(new_state(job), signal=signal)
    status = store.load(job.execution_id).status
    if status in ENDED or (status == "paused" and not job.resume):
        return None
    try:
        execution = engine.resume(job.execution_id, signal=signal)
        execution.resume_items = job.items  # a waiting Wait node's request item (None: resumed without one)
        if status != "paused":  # crashed: the process running it died (its job came back, or the API resumes it)
            log.info("execution %s was %s: resuming it from its last boundary", job.execution_id, status)
        return execution
    except ExecutionBusy:
        raise
    except MiniN8nError:
        if store.load(job.execution_id).status in ENDED:  # another process ended it meanwhile
            return None
        raise


async def run_job(engine: Engine, job: Job, signal: AbortSignal | None = None,
                  stop_requested: Callable[[str], bool] | None = None,
                  on_chunk: Callable[[dict[str, Any]], None] | None = None) -> ExecutionState:
    """Run the job's execution to an end or a pause; the stored state when there was nothing to do.
    `stop_requested(id)`, asked every STOP_POLL_S, stops it as the API's stop asks. With `on_chunk`
    the execution streams (its trigger's response mode is Streaming): each chunk goes there."""
    signal = signal or AbortSignal()
    execution = prepare(engine, job, signal)
    if execution is None:
        return engine.store.load(job.execution_id)
    if on_chunk is not None:
        execution.streaming = True

        def relay(event: HookEvent) -> None:
            if isinstance(event, ChunkSent):
                on_chunk(event.chunk)

        execution.hooks.add(relay)
    if stop_requested is None:
        state = await execution.run()
    else:
        watcher = asyncio.get_running_loop().create_task(_watch_stop(job.execution_id, signal, stop_requested))
        try:
            state = await execution.run()
        finally:
            watcher.cancel()
    engine.store.flush()  # its end where other processes read it (the API's, behind a queue; the CLI's)
    return state


async def _watch_stop(execution_id: str, signal: AbortSignal, stop_requested: Callable[[str], bool]) -> None:
    while True:
        if stop_requested(execution_id):
            signal.abort("stopped through the API")
            return
        await asyncio.sleep(STOP_POLL_S)
