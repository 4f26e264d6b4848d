"""Streamed chat replies in queue mode: workers send the chunks of an execution to the server that
holds its HTTP response, through the broker that carries the jobs.

The broker, not the store: chunks are transient messages for one connected client, many per
second, and lose their point once the execution settled; the store holds what lasts (the run
data and the answer). n8n does the same in its queue mode (a worker's `send-chunk` progress
messages on its Redis queue). Each server consumes a queue of its own (exclusive, deleted with
its connection), bound to the `mini-n8n-chunks` direct exchange by its key; a job carries the
key, so a worker — or the one that resumes the execution after a crash — publishes there. The
worker ends each run of a job with a `done` message after the last chunk, so the server knows
no chunk is still in flight when it closes the response.

Delivery is best effort: a chunk lost while the broker restarts is not sent again (the answer
stays in the store); a server that restarts has lost its clients' connections anyway.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import uuid
from typing import Any, Callable

from kombu import Connection, Consumer, Exchange, Producer, Queue

EXCHANGE = Exchange("mini-n8n-chunks", type="direct", durable=False, auto_delete=False)
RECONNECT_S = 1.0
log = logging.getLogger("mini_n8n.serve")

Handler = Callable[[dict[str, Any]], None]


class ChunkRelay:
    """The server's end: a thread consuming this server's chunk queue, handing each message to the
    handler registered for its execution, on the server's event loop."""

    def __init__(self, broker_url: str) -> None:
        self.url = broker_url
        self.key = f"mini-n8n-chunks-{uuid.uuid4().hex[:12]}"
        self._handlers: dict[str, Handler] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, loop: asyncio.AbstractEventLoop, timeout_s: float = 10.0) -> None:
        """Consume from now on (blocking until the queue exists, so a job may name it)."""
        if self._thread is None:
            self._loop = loop
            self._thread = threading.Thread(target=self._consume, name="chunk-relay", daemon=True)
            self._thread.start()
        if not self._ready.wait(timeout_s):
            raise ConnectionError(f"the broker did not take this server's chunk queue within {timeout_s:.0f} s")

    def register(self, execution_id: str, handler: Handler) -> None:
        self._handlers[execution_id] = handler

    def unregister(self, execution_id: str) -> None:
        self._handlers.pop(execution_id, None)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _consume(self) -> None:
        queue = Queue(self.key, EXCHANGE, routing_key=self.key, durable=False, exclusive=True, auto_delete=True)
        while not self._stop.is_set():
            try:
                with Connection(self.url, connect_timeout=5) as conn:
                    with Consumer(conn, [queue], callbacks=[self._on_message], accept=["json"], no_ack=True):
                        self._ready.set()
                        while not self._stop.is_set():
                            try:
                                conn.drain_events(timeout=0.5)
                            except socket.timeout:
                                conn.heartbeat_check()
            except Exception as exc:  # the broker went away: chunks in flight are lost, look again
                if not self._stop.is_set():
                    log.warning("the chunk relay lost the broker (%s); reconnecting", exc)
                    self._stop.wait(RECONNECT_S)

    def _on_message(self, body: Any, _message: Any) -> None:
        if not isinstance(body, dict):
            return
        handler = self._handlers.get(str(body.get("executionId")))
        if handler is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(handler, body)


class ChunkPublisher:
    """A worker's end: publishes an execution's chunks to the key its job names."""

    def __init__(self, connect: Callable[[], Connection]) -> None:
        self._connect = connect
        self._connection: Connection | None = None
        self._producer: Producer | None = None

    def _send(self, key: str, body: dict[str, Any]) -> None:
        try:
            if self._producer is None:
                self._connection = self._connect()
                self._producer = Producer(self._connection.channel(), exchange=EXCHANGE, serializer="json")
            self._producer.publish(body, routing_key=key, declare=[EXCHANGE])
        except Exception as exc:  # the stream is best effort: the execution goes on, its result is stored
            log.warning("a chunk of execution %s could not be sent: %s", body.get("executionId"), exc)
            self.close()

    def chunk(self, key: str, execution_id: str, chunk: dict[str, Any]) -> None:
        self._send(key, {"executionId": execution_id, "chunk": chunk})

    def done(self, key: str, execution_id: str, status: str) -> None:
        self._send(key, {"executionId": execution_id, "done": status})

    def close(self) -> None:
        self._producer = None
        if self._connection is not None:
            try:
                self._connection.release()
            except Exception:  # already gone
                pass
            self._connection = None
