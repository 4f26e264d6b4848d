"""Where a server's executions run: in the server process (`--mode regular`) or on workers through
the queue (`--mode queue`). Both give back the stored state once the execution ended or paused."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from typing import TYPE_CHECKING, Any, Callable

from ..abort import AbortSignal
from ..errors import MiniN8nError
from ..executor import Engine
from ..run_data import ExecutionState
from ..store import ExecutionBusy
from .jobs import ENDED, Job, prepare, run_job

if TYPE_CHECKING:
    from .chunks import ChunkRelay

POLL_S = 0.02  # how often a queue-mode server looks for executions that ended
ENV_RESPONSE_TIMEOUT = "MINI_N8N_RESPONSE_TIMEOUT_S"
RESPONSE_TIMEOUT_S = 300.0  # a chat client waits this long for a queued execution, then gets its id
SETTLED = (*ENDED, "paused")  # a worker acked the job: the client gets its answer
DONE_GRACE_S = 2.0  # a settled streamed execution: how long its worker's last chunks may still be on the way
ChunkSink = Callable[[dict[str, Any]], None]
log = logging.getLogger("mini_n8n.serve")


class Conflict(MiniN8nError):
    """The request does not fit the execution's state (HTTP 409)."""


class StillRunning(MiniN8nError):
    """The execution did not settle within the response timeout (HTTP 504); it goes on."""

    def __init__(self, execution_id: str, waited_s: float) -> None:
        super().__init__(f"execution {execution_id} has not finished after {waited_s:.0f} s; it goes on: "
                         f"GET /api/v1/executions/{execution_id} tells how it ends")
        self.execution_id = execution_id


def response_timeout() -> float:
    text = os.environ.get(ENV_RESPONSE_TIMEOUT, "").strip()
    try:
        return float(text) if text else RESPONSE_TIMEOUT_S
    except ValueError:
        raise MiniN8nError(f"${ENV_RESPONSE_TIMEOUT} must be a number of seconds, not {text!r}") from None


class InProcessRunner:
    """Runs executions on the server's own event loop."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.running: dict[str, AbortSignal] = {}
        self._background: set[asyncio.Task[Any]] = set()

    async def submit(self, job: Job) -> ExecutionState:
        signal = self.running[job.execution_id] = AbortSignal()
        try:
            return await run_job(self.engine, job, signal)
        finally:
            self.running.pop(job.execution_id, None)

    async def start(self, job: Job) -> None:
        """Run the job's execution in the background (a webhook answered at once, a schedule)."""
        self._spawn(self.submit(job), job.execution_id)

    def _spawn(self, work: Any, execution_id: str) -> None:
        async def run() -> None:
            try:
                await work
            except Exception as exc:  # logged: nobody waits for this execution's answer
                log.error("execution %s failed to run: %s", execution_id, exc)

        task = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def stream(self, job: Job, on_chunk: ChunkSink) -> "asyncio.Task[ExecutionState]":
        """Start the job's execution streaming its chunks to `on_chunk`; the task that ends with it."""
        signal = self.running[job.execution_id] = AbortSignal()

        async def run() -> ExecutionState:
            try:
                return await run_job(self.engine, job, signal, on_chunk=on_chunk)
            finally:
                self.running.pop(job.execution_id, None)

        task = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def resume(self, execution_id: str) -> None:
        """Continue a paused or crashed execution here, in the background."""
        signal = AbortSignal()
        try:
            execution = prepare(self.engine, Job(execution_id, resume=True), signal)
        except ExecutionBusy as busy:
            raise Conflict(str(busy)) from None
        if execution is None:
            raise Conflict(f'execution "{execution_id}" has ended; only paused or crashed executions resume')
        self.running[execution_id] = signal

        async def run() -> None:
            try:
                await execution.run()
            finally:
                self.running.pop(execution_id, None)

        task = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def stop(self, execution_id: str) -> None:
        signal = self.running.get(execution_id)
        if signal is not None:
            signal.abort()
            return
        await cancel_stored(self.engine, execution_id)

    async def close(self) -> None:
        for signal in self.running.values():
            signal.abort("the server stopped")
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)


async def cancel_stored(engine: Engine, execution_id: str) -> None:
    """Stop an execution no process is running (paused, crashed, queued): claim it and end it "cancelled"."""
    signal = AbortSignal()
    signal.abort()
    try:
        execution = prepare(engine, Job(execution_id, resume=True), signal)
    except ExecutionBusy as busy:
        raise Conflict(str(busy)) from None
    if execution is None:
        raise Conflict(f'execution "{execution_id}" has ended already')
    await execution.run()


class QueueRunner:
    """Hands executions to workers through the broker and waits for the store to say they settled."""

    def __init__(self, engine: Engine, app: Any, relay: ChunkRelay | None = None) -> None:
        self.engine = engine
        self.app = app
        self.relay = relay  # streamed chunks from the workers (a server with a streaming Chat Trigger)
        self._relay_started = False
        self._streams: set[asyncio.Task[ExecutionState]] = set()  # held here: a client may go away
        self.running: dict[str, AbortSignal] = {}  # none run in this process
        self.timeout_s = response_timeout()
        self._waiting: dict[str, list[asyncio.Future[ExecutionState]]] = {}
        self._resumed_from: dict[str, dict[str, Any] | None] = {}  # a resumed execution's pause it left
        self._poller: asyncio.Task[None] | None = None

    async def _publish(self, job: Job) -> None:
        from .queue import publish

        await asyncio.to_thread(publish, self.app, job)

    async def start(self, job: Job) -> None:
        """Hand the job to the workers without waiting for its end (a webhook answered at once, a schedule)."""
        await self._publish(job)

    async def submit(self, job: Job) -> ExecutionState:
        if job.resume:  # settled only once it left the pause it is resumed from
            self._resumed_from[job.execution_id] = self.engine.store.load(job.execution_id).pause
        future = await self._queue(job)
        try:
            return await self._settled(job.execution_id, future)
        finally:
            self._forget(job.execution_id, future)

    async def stream(self, job: Job, on_chunk: ChunkSink) -> "asyncio.Task[ExecutionState]":
        """Queue the job with this server's chunk key (raises if the broker cannot take it); the task
        that ends once the execution settled and its worker's last chunk arrived."""
        relay = self.relay
        if relay is None:
            raise MiniN8nError("this server has no chunk relay: streamed replies need one")
        loop = asyncio.get_running_loop()
        if not self._relay_started:
            await asyncio.to_thread(relay.start, loop)
            self._relay_started = True
        done = asyncio.Event()

        def deliver(body: dict[str, Any]) -> None:
            if "chunk" in body:
                on_chunk(body["chunk"])
            elif "done" in body:
                done.set()

        relay.register(job.execution_id, deliver)
        try:
            future = await self._queue(dataclasses.replace(job, stream=relay.key))
        except BaseException:
            relay.unregister(job.execution_id)
            raise

        async def settle() -> ExecutionState:
            try:
                state = await self._settled(job.execution_id, future)
                try:
                    await asyncio.wait_for(done.wait(), DONE_GRACE_S)
                except asyncio.TimeoutError:
                    log.warning("execution %s settled without its worker's last chunk message", job.execution_id)
                return state
            finally:
                relay.unregister(job.execution_id)
                self._forget(job.execution_id, future)

        task = loop.create_task(settle())
        self._streams.add(task)
        task.add_done_callback(self._streams.discard)
        return task

    async def _queue(self, job: Job) -> "asyncio.Future[ExecutionState]":
        """Publish the job; the future the store poller settles."""
        future: asyncio.Future[ExecutionState] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(job.execution_id, []).append(future)
        try:
            await self._publish(job)
        except BaseException:
            self._forget(job.execution_id, future)
            raise
        if self._poller is None or self._poller.done():
            self._poller = asyncio.get_running_loop().create_task(self._poll())
        return future

    async def _settled(self, execution_id: str, future: "asyncio.Future[ExecutionState]") -> ExecutionState:
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.timeout_s)
        except asyncio.TimeoutError:
            raise StillRunning(execution_id, self.timeout_s) from None

    def _forget(self, execution_id: str, future: "asyncio.Future[ExecutionState]") -> None:
        waiters = self._waiting.get(execution_id)
        if waiters is not None and future in waiters:
            waiters.remove(future)
            if not waiters:
                del self._waiting[execution_id]
                self._resumed_from.pop(execution_id, None)

    async def _poll(self) -> None:
        """One query for all waiting executions every POLL_S, while any are waiting."""
        store = self.engine.store
        while self._waiting:
            await asyncio.sleep(POLL_S)
            try:
                self._settle(store)
            except Exception as exc:  # the database restarts: waiters wait on, the next look tries again
                log.warning("looking for settled executions failed: %s", exc)
                await asyncio.sleep(1.0)

    def _settle(self, store: Any) -> None:
        ids = list(self._waiting)
        with store.lock:
            rows = store.connection.execute("SELECT id, status FROM executions WHERE id = ANY(%s)", (ids,)).fetchall()
        for execution_id, status in rows:
            if status not in SETTLED:
                continue
            state = store.load(execution_id)
            if state.status not in SETTLED:  # a worker took it on since the status was read
                continue
            if state.status == "paused" and execution_id in self._resumed_from \
                    and state.pause == self._resumed_from[execution_id]:
                continue  # no worker took the resumed job yet
            self._resumed_from.pop(execution_id, None)
            for future in self._waiting.pop(execution_id, []):
                if not future.done():
                    future.set_result(state)

    async def resume(self, execution_id: str) -> None:
        status = self.engine.store.load(execution_id).status
        if status not in ("paused", "crashed"):
            raise Conflict(f'execution "{execution_id}" is {status}; only paused or crashed executions resume')
        await self._publish(Job(execution_id, resume=True))

    async def stop(self, execution_id: str) -> None:
        """A paused or crashed execution is ended here; one a worker runs is asked to stop."""
        try:
            await cancel_stored(self.engine, execution_id)
        except Conflict:
            if not self.engine.store.request_stop(execution_id):
                raise

    async def close(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
        if self.relay is not None:
            await asyncio.to_thread(self.relay.close)
