"""Sub-node calls recorded as runs of the sub-node: every model call and memory access.

The engine wraps what a model or memory node supplies, so each call gets a TaskData under the
sub-node's name (input, output, usage, latency) and its own node_before / node_after events.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence, TypeVar

from .abort import AbortSignal
from .chat import ChatMemory, ChatMessage, ChatModel, ModelReply, OutputParser, TokenCallback, ToolSpec
from .connection_types import AI_LANGUAGE_MODEL, AI_MEMORY, AI_OUTPUT_PARSER
from .errors import MiniN8nError, NodeOperationError, SubNodeError
from .hooks import NodeAfter, NodeBefore, TokenEvent
from .run_data import SourceRef, TaskData, TaskError, now_ms
from .shared_log import LogWindow, plain

if TYPE_CHECKING:
    from .executor import Execution

T = TypeVar("T")


class _Recorder:
    def __init__(self, execution: "Execution", node: str, conn_type: str, parent: dict[str, Any]) -> None:
        self._execution = execution
        self._node = node
        self._conn_type = conn_type
        self._parent = parent
        self.last_task: TaskData | None = None
        self.last_run_index = 0

    async def _record(
        self,
        input_json: dict[str, Any],
        call: Callable[[], Awaitable[T]],
        output_json: Callable[[T], dict[str, Any]],
        extra_metadata: Callable[[T], dict[str, Any]] | None = None,
    ) -> T:
        ex = self._execution
        run_index = len(ex.state.run_data.get(self._node, ()))
        if ex.hooks.wants(NodeBefore):
            ex.hooks.emit(NodeBefore(ex.state.id, self._node, run_index, self._parent))
        start = now_ms()
        t0 = time.perf_counter()
        task = TaskData(startTime=start, metadata=dict(self._parent))
        task.input = {self._conn_type: [[{"json": input_json}]]}  # JSON already: not validated again
        try:
            result = await call()
        except NodeOperationError as exc:
            exc.node = exc.node or self._node
            self._finish(task, t0, run_index, error=TaskError(message=exc.message, description=exc.description, node=exc.node))
            raise
        except Exception as exc:
            message = str(exc) or type(exc).__name__
            self._finish(task, t0, run_index, error=TaskError(message=message, node=self._node))
            raise NodeOperationError(message, node=self._node) from exc
        task.data = {self._conn_type: [[{"json": output_json(result)}]]}
        if extra_metadata is not None:
            task.metadata.update(extra_metadata(result))
        notes = ex.notes.pop(self._node, None)  # what the sub-node noted while it was set up
        if notes:
            task.metadata["notes"] = notes
        self._finish(task, t0, run_index)
        self.last_task, self.last_run_index = task, run_index
        return result

    def _served(self, task: TaskData) -> None:
        """A run its resume serves again (engine.resume_runs), recorded as it was (its store has it
        already: told it was served)."""
        ex = self._execution
        run_index = len(ex.state.run_data.get(self._node, ()))
        ex.record(self._node, task)
        ex.tell_store(NodeAfter(ex.state.id, self._node, run_index, task, self._parent, served=True))
        self.last_task, self.last_run_index = task, run_index

    def _finish(self, task: TaskData, t0: float, run_index: int, error: TaskError | None = None) -> None:
        ex = self._execution
        task.execution_time = (time.perf_counter() - t0) * 1000.0
        if error is not None:
            task.execution_status = "error"
            task.error = error
        ex.record(self._node, task)
        if ex.hears_runs:
            ex.tell(NodeAfter(ex.state.id, self._node, run_index, task, self._parent))


def failed_supply(execution: "Execution", sub_node: str, parent: dict[str, Any], exc: Exception) -> SubNodeError:
    """A sub-node that could not supply its parent: its run is recorded with its error (as n8n shows
    it on the sub-node) and the parent gets n8n's "Error in sub-node <name>"."""
    if isinstance(exc, NodeOperationError):
        error = TaskError(message=exc.message, description=exc.description, node=sub_node)
    else:
        error = TaskError(message=str(exc) if isinstance(exc, MiniN8nError) else f"{type(exc).__name__}: {exc}", node=sub_node)
    run_index = len(execution.state.run_data.get(sub_node, ()))
    execution.hooks.emit(NodeBefore(execution.state.id, sub_node, run_index, parent))
    task = TaskData(startTime=now_ms(), executionStatus="error", error=error, metadata=dict(parent),
                    source=[SourceRef(previousNode=parent["node"], previousNodeRun=parent.get("runIndex") or 0)])
    notes = execution.notes.pop(sub_node, None)
    if notes:
        task.metadata["notes"] = notes
    execution.record(sub_node, task)
    execution.tell(NodeAfter(execution.state.id, sub_node, run_index, task, parent))
    return SubNodeError(sub_node, error.message)


class RecordedChatModel(_Recorder):
    """A model supplied by a model node; each `invoke` is a recorded run of that node."""

    def __init__(self, inner: ChatModel, execution: "Execution", node: str, parent: dict[str, Any], on_usage: Callable[[ModelReply, float], None]) -> None:
        super().__init__(execution, node, AI_LANGUAGE_MODEL, parent)
        self.inner = inner
        self._on_usage = on_usage

    @staticmethod
    def _messages_json(messages: Sequence[ChatMessage]) -> Sequence[dict[str, Any]]:
        """JSON of the messages. An agent passes a window on its append-only message log; the
        JSON of each message is then made once, in a log parallel to it, and every recorded run
        keeps a window on that (shared, not copied; written out as a list by `plain`)."""
        if isinstance(messages, LogWindow):
            return messages.mapped("json", ChatMessage.to_json)
        return [m.to_json() for m in messages]

    def _tool_names(self, tools: list[ToolSpec]) -> list[str]:
        """The names of the tools offered, one shared list per set of names (runs keep it)."""
        names = tuple(t.name for t in tools)
        shared = self._execution.memo.setdefault(("recorded-tool-names", self._node), {})
        found = shared.get(names)
        if found is None:
            found = shared[names] = list(names)
        return found

    def _where(self) -> dict[str, Any]:
        """Where a model pause point is (built only when the run may pause)."""
        parent = self._parent
        return {"node": self._node, "agent": parent.get("node"), "iteration": parent.get("iteration"), "itemIndex": parent.get("itemIndex")}

    async def invoke(
        self,
        messages: Sequence[ChatMessage],
        tools: list[ToolSpec],
        signal: AbortSignal,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        ex = self._execution
        if ex.yield_interval_s is not None:
            await ex.maybe_yield()
        parent = self._parent
        if ex.recorded_ahead:  # resumed: a reply recorded before is served again, the model not asked
            served = ex.recorded_ahead.take(self._node, len(ex.state.run_data.get(self._node, ())), parent)
            if served is not None:
                return self._serve_reply(served)
        input_json = {"messages": self._messages_json(messages), "tools": self._tool_names(tools)}
        if ex.may_pause:
            from .debugger import PausePoint  # imported by the runs that pause only

            await ex.pause_at(PausePoint(kind="before_model", payload=plain(input_json), **self._where()))

        def token(text: str) -> None:
            ex.hooks.emit(TokenEvent(ex.state.id, self._node, text, parent))
            if on_token is not None:
                on_token(text)

        recorded = ex.replay.model_reply(self._node, parent, plain(input_json)) if ex.replay is not None else None
        t0 = time.perf_counter()

        def metadata(reply: ModelReply) -> dict[str, Any]:
            latency = (time.perf_counter() - t0) * 1000.0
            self._on_usage(reply, latency)
            extra: dict[str, Any] = {"latencyMs": round(latency, 3), "tokenUsage": reply.usage.to_json()}
            if recorded is not None:
                extra["replayed"] = True
            return extra

        async def call() -> ModelReply:
            if recorded is not None:
                return recorded
            return await self.inner.invoke(messages, tools, signal, token)

        reply = await self._record(input_json, call, ModelReply.to_json, metadata)
        if ex.may_pause:
            from .debugger import PausePoint

            edit = await ex.pause_at(PausePoint(kind="after_model", payload={"reply": reply.to_json()}, **self._where()))
            if edit is not None and "reply" in edit:
                edited = ModelReply.model_validate({**reply.to_json(), **edit["reply"]})
                if edited != reply and self.last_task is not None:
                    task = self.last_task
                    task.metadata.setdefault("edits", []).append({"what": "reply", "original": reply.to_json(), "new": edited.to_json()})
                    task.data = {self._conn_type: [[{"json": edited.to_json()}]]}
                    ex.update_run(self._node, self.last_run_index, task)
                    reply = edited
        return reply

    def _serve_reply(self, task: TaskData) -> ModelReply:
        """The reply of a model run served again on resume, its usage and latency counted as recorded."""
        self._served(task)
        reply = ModelReply.model_validate(task.data[AI_LANGUAGE_MODEL][0][0]["json"])
        self._on_usage(reply, float(task.metadata.get("latencyMs", 0.0)))
        return reply


class RecordedMemory(_Recorder):
    """A memory supplied by a memory node; each load and save is a recorded run of that node."""

    def __init__(self, inner: ChatMemory, execution: "Execution", node: str, parent: dict[str, Any]) -> None:
        super().__init__(execution, node, AI_MEMORY, parent)
        self.inner = inner

    async def load_messages(self) -> list[ChatMessage]:
        return await self._record(
            {"action": "loadMemoryVariables"},
            self.inner.load_messages,
            lambda msgs: {"action": "loadMemoryVariables", "chatHistory": [m.to_json() for m in msgs]},
        )

    async def save_context(self, user_input: str, output: str) -> None:
        await self._record(
            {"action": "saveContext", "input": user_input, "output": output},
            lambda: self.inner.save_context(user_input, output),
            lambda _none: {"action": "saveContext", "input": user_input, "output": output},
        )


class RecordedOutputParser(_Recorder):
    """A parser supplied by an output-parser node; each `parse` is a recorded run of that node
    (n8n's shape: `{action: "parse", text}` in, `{action: "parse", response}` out)."""

    def __init__(self, inner: OutputParser, execution: "Execution", node: str, parent: dict[str, Any]) -> None:
        super().__init__(execution, node, AI_OUTPUT_PARSER, parent)
        self.inner = inner

    def tool_schema(self) -> dict[str, Any]:
        return self.inner.tool_schema()

    async def parse(self, text: str) -> Any:
        async def call() -> Any:
            return await self.inner.parse(text)

        return await self._record({"action": "parse", "text": text}, call, lambda result: {"action": "parse", "response": result})
