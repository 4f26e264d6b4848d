"""The executor: an explicit execution stack, run data per node run, hooks, abort, pause/resume.

Everything needed to continue lives in `ExecutionState` (plain JSON). The executor can stop
before any stack entry runs (a node, a tool run, or a node resumed with its EngineResponse)
and continue later from a JSON snapshot, in this process or another.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable

from . import from_ai, node_settings
from .abort import AbortSignal
from .chat import ModelReply, ToolSpec
from .collector import fewer_collections
from .connection_types import AI_LANGUAGE_MODEL, AI_MEMORY, AI_OUTPUT_PARSER, AI_TOOL, MAIN
from .context import NodeContext, SupplyContext, check_supplied
from .errors import (
    ExecutionCancelled, MiniN8nError, NodeApiError, NodeOperationError, PutToWait, StoreFailed, SubNodeError, store_failed,
)
from .hooks import (
    ChunkSent, ExecutionPaused, ExecutionResumed, Hooks, NodeAfter, NodeBefore, RunUpdated, StoredEvent, WorkflowAfter,
    WorkflowBefore,
)
from .node_type import NodeType
from .observation import observation, with_observation
from .pin_data import pinned_items
from .recording import RecordedChatModel, RecordedMemory, RecordedOutputParser, failed_supply
from .registry import Registry
from .requests import ActionResponse, EngineRequest, EngineResponse
from .resume_runs import RecordedAhead
from .rules import node_problems
from .run_data import (
    ExecutionState, Item, PendingRequest, SourceRef, StackEntry, TaskData, TaskError, now_ms, with_paired_items,
)
from .start import choose_start
from .streaming import error_chunk
from .unsupported_tools import placeholder_tool
from .versions import version_note
from .services import Services
from .workflow import Node, Workflow

if TYPE_CHECKING:
    from .debugger import Debugger, PausePoint


log = logging.getLogger(__name__)


class Engine:
    """One engine per application: a registry of node types and the services nodes share."""

    def __init__(self, registry: Registry, services: Services | None = None, store: Any = None) -> None:
        self.registry = registry
        self.services = services or Services()
        self.store = store  # an engine.store.ExecutionStoreBase: every execution is written there

    def start_node(self, workflow: Workflow, prefer_chat: bool = False, trigger: str | None = None,
                   injected: bool = False) -> Node:
        """The trigger a run starts from (engine/start.py): the named one, the Chat Trigger when a
        message is given, else the first trigger that can run (pinned triggers of any type count)."""
        return choose_start(workflow, self.registry, trigger=trigger, prefer_chat=prefer_chat, injected=injected)

    def create(
        self,
        workflow: Workflow,
        *,
        start: str | None = None,
        items: list[Item] | None = None,
        mode: str = "manual",
        hooks: Hooks | None = None,
        signal: AbortSignal | None = None,
    ) -> "Execution":
        if start is None:
            start = self.start_node(workflow).name
        if not workflow.has_node(start):
            raise MiniN8nError(f'start node "{start}" is not in the workflow')
        state = ExecutionState(workflow=workflow, mode=mode, startNode=start)
        state.stack.append(StackEntry(node=start, input=items if items is not None else [{"json": {}}]))
        return self._attached(Execution(self, state, hooks or Hooks(), signal), fresh=True)

    def restore(self, snapshot: dict[str, Any] | ExecutionState, hooks: Hooks | None = None, signal: AbortSignal | None = None) -> "Execution":
        """An execution continued from a JSON snapshot (its own copy: the snapshot stays as it was)."""
        state = ExecutionState.from_json(snapshot if isinstance(snapshot, dict) else snapshot.to_json())
        return self._attached(Execution(self, state, hooks or Hooks(), signal))

    def resume(self, execution_id: str, hooks: Hooks | None = None, signal: AbortSignal | None = None) -> "Execution":
        """A paused or crashed execution from the store, ready to continue from its last boundary."""
        if self.store is None:
            raise MiniN8nError("no execution store is open")
        state, recorded = self.store.prepare_resume(execution_id)
        return self._attached(Execution(self, state, hooks or Hooks(), signal,
                                        recorded_ahead=RecordedAhead(recorded) if recorded else None))

    def _attached(self, execution: "Execution", *, fresh: bool = False) -> "Execution":
        """`execution` stored from now on; `fresh`: its id is new (no stored execution has it)."""
        if self.store is not None:
            self.store.attach(execution, fresh=fresh)
        return execution

    async def run(self, workflow: Workflow, **kwargs: Any) -> ExecutionState:
        """Create and run an execution to its end."""
        return await self.create(workflow, **kwargs).run()


def _what_is_stored(event: StoredEvent) -> str:
    if isinstance(event, NodeAfter):
        return f'the run of node "{event.node}"'
    if isinstance(event, RunUpdated):
        return f'the edited run of node "{event.node}"'
    return "the end"


class Execution:
    """One run of a workflow: its state, hooks and abort signal, and the loop that drives it."""

    def __init__(self, engine: Engine, state: ExecutionState, hooks: Hooks, signal: AbortSignal | None,
                 *, recorded_ahead: RecordedAhead | None = None) -> None:
        self.engine = engine
        self.state = state
        self.hooks = hooks
        self.signal = signal or AbortSignal()
        self.debugger: Debugger | None = None  # where the run pauses (the one pause mechanism)
        # called with (state, at_boundary): at a boundary the stack is exact and resumable
        self.on_checkpoint: Callable[[ExecutionState, bool], None] | None = None
        self.on_detach: Callable[[ExecutionState], None] | None = None  # left paused: the store's lease ends
        # the store's writer, told of every finished run, run edited and the end before the hooks
        # are (`tell`): called directly, not as a listener, whose failure would only be logged
        self.on_record: Callable[[StoredEvent], None] | None = None
        self.replay: Any = None  # an engine.replay.ReplaySource while re-running recorded results
        # resumed: the runs recorded after the boundary it resumes from, served again (engine.resume_runs)
        self.recorded_ahead = recorded_ahead
        self.streaming = False  # answers a streaming Chat Trigger: nodes send chunks (engine/streaming.py)
        # give the event loop a turn at a boundary once this many seconds have passed (a UI's loop)
        self.yield_interval_s: float | None = None
        self._last_yield = 0.0
        self.params_cache: dict[str, Any] = {}
        self.memo: dict[tuple[str, str], dict[str, Any]] = {}
        self.notes: dict[str, list[str]] = {}  # run-log notes of the node run in progress, by node name
        self.run_metadata: dict[str, dict[str, Any]] = {}  # metadata a node run in progress gave, by node name
        self._rules_ok: set[str] = set()
        self._nodes = {n.name: n for n in state.workflow.nodes}
        # nodes whose On Error / Retry On Fail settings change how their runs end (engine/node_settings.py)
        self._error_settings = {n.name for n in state.workflow.nodes if node_settings.has_error_settings(n)}
        self._incoming: dict[tuple[str, str], list[tuple[str, int]]] = {}  # (source, the target's input index)
        # n8n's execution order "v1": a node's children run topmost first (else in link order)
        self._v1_order = state.workflow.settings.get("executionOrder") == "v1"
        self._main_inputs: dict[str, int] = {}  # how many main inputs each node's links reach (n8n's count)
        for src, ctype, _i, target in state.workflow.links():
            self._incoming.setdefault((target.node, ctype), []).append((src, target.index))
            if ctype == MAIN:
                self._main_inputs[target.node] = max(self._main_inputs.get(target.node, 1), target.index + 1)
        self._detaching = False
        self._run_task: asyncio.Task[Any] | None = None
        pause = (state.pause or {}) if state.status == "paused" else {}
        # a restored execution that was paused passes its own pause point once without stopping
        self._resume_key: str | None = pause.get("key") if pause.get("kind") != "wait" else None
        # a restored execution a node left waiting (PutToWait): that node takes `resume_items` once
        self._waited_at: str | None = pause.get("node") if pause.get("kind") == "wait" else None
        self.resume_items: list[Item] | None = None  # the resuming request's item(s); None: resumed by time

    # ----- helpers used by contexts and recorders --------------------------------------------
    def node_type(self, node: Node) -> NodeType:
        return self.engine.registry.get(node.type)

    def n8n_parameters(self, node: Node) -> dict[str, Any]:
        """A node's parameters as n8n holds them (what `$parameter` reads)."""
        return self.node_type(node).n8n_parameters(node.parameters, node.typeVersion)

    def record(self, node: str, task: TaskData) -> None:
        self.state.run_data.setdefault(node, []).append(task)

    def snapshot(self) -> dict[str, Any]:
        return self.state.to_json()

    async def maybe_yield(self) -> None:
        """Give the event loop a turn if `yield_interval_s` has passed since the last one (at node
        boundaries and before model calls): paint, input and timers run; the run stays "running"."""
        interval = self.yield_interval_s
        if interval is not None and time.perf_counter() - self._last_yield > interval:
            await asyncio.sleep(0)
            self._last_yield = time.perf_counter()

    @property
    def may_pause(self) -> bool:
        """Whether pause points need their payloads built (a debugger, or a pause to pass)."""
        return self.debugger is not None or self._resume_key is not None

    def update_run(self, node: str, run_index: int, task: TaskData) -> None:
        """Announce a change to a recorded run (an edit made while paused)."""
        self.tell(RunUpdated(self.state.id, node, run_index, task))

    def stop_recording(self, record: Callable[[StoredEvent], None]) -> None:
        """Tell `record` nothing more (its store's writer is retired or replaced), unless another took its place."""
        if self.on_record is record:
            self.on_record = None

    @property
    def hears_runs(self) -> bool:
        """Whether a finished run's NodeAfter has anyone to go to (the hot paths make it only then)."""
        return self.on_record is not None or self.hooks.wants(NodeAfter)

    def tell(self, event: StoredEvent) -> None:
        """`event` to the store, then to the hooks. The store failing stops the execution
        (StoreFailed): a run left out of the stored execution would make it a different one."""
        self.tell_store(event)
        self.hooks.emit(event)

    def tell_store(self, event: StoredEvent) -> None:
        """`event` to the store alone: so is a run served again on resume (engine.resume_runs), whose
        row the store keeps; the hooks read it from the store, as one made before the boundary."""
        record = self.on_record
        if record is not None:
            try:
                record(event)
            except Exception as exc:
                raise store_failed(exc, self.state.id, _what_is_stored(event)) from exc

    async def pause_at(self, point: PausePoint) -> dict[str, Any] | None:
        """Pause here if the debugger wants to; returns the user's edit of the payload, if any."""
        if self._resume_key is not None and point.key == self._resume_key:
            self._resume_key = None
            return None
        debugger = self.debugger
        if debugger is None or not debugger.wants(point):
            return None
        state = self.state
        state.status = "paused"
        state.pause = {**point.to_json(), "key": point.key}
        self._checkpoint(point.is_boundary)
        self.hooks.emit(ExecutionPaused(state.id, state.pause))
        edit = await debugger.hold(point)  # Stop or detach cancel here; the pause stays stored
        state.status = "running"
        state.pause = None
        self.hooks.emit(ExecutionResumed(state.id))
        return edit

    def take_resume(self, node: str) -> tuple[bool, list[Item] | None]:
        """Whether this execution was resumed waiting at `node` (once), and the items it was resumed with."""
        if self._waited_at != node:
            return False, None
        self._waited_at = None
        return True, self.resume_items

    def _put_to_wait(self, entry: StackEntry, waiting: PutToWait) -> bool:
        """Store the execution paused before `entry`'s node (back on the stack, not recorded), as
        n8n stores a waiting execution; its run ends here and its lease with it."""
        from .debugger import PausePoint  # imported by the runs that pause only

        state = self.state
        entry.round, entry.start_time, entry.run_index = 0, None, None
        state.stack.append(entry)
        state.status = "paused"
        point = PausePoint(kind="wait", node=entry.node, payload=waiting.payload)
        state.pause = {**point.to_json(), "key": point.key}
        self._checkpoint(True)
        self.hooks.emit(ExecutionPaused(state.id, state.pause))
        return False

    def detach(self) -> None:
        """Leave a paused execution as it is stored (the editor closes, the CLI exits): its task
        ends, its state stays "paused", and `mini-n8n resume` or a later session continues it."""
        if self.state.status != "paused":
            raise MiniN8nError("only a paused execution can be left to resume later")
        self._detaching = True
        if self._run_task is not None:
            self._run_task.cancel()

    # ----- running ----------------------------------------------------------------------------
    async def run(self) -> ExecutionState:
        """Run until the stack is empty, an error, a Stop, or a pause the execution is left at."""
        state = self.state
        resumed = state.status in ("paused", "crashed", "running")
        state.status = "running"
        state.stopped_at = None
        if self._waited_at is not None:
            state.pause = None
        self.hooks.emit(WorkflowBefore(state.id, state.workflow.name, resumed))
        task = self._run_task = asyncio.current_task()
        remove = self.signal.add_callback(lambda: task.cancel() if task is not None else None)
        try:
            with fewer_collections():
                await self._loop()
        except asyncio.CancelledError:
            if self._detaching:
                state.status = "paused"
                if self.on_detach is not None:
                    self.on_detach(state)
                return state
            if not self.signal.aborted:
                raise
            self._fail_running("Execution was cancelled", status="cancelled")
        except ExecutionCancelled:
            self._fail_running("Execution was cancelled", status="cancelled")
        except StoreFailed as failed:
            self._end_unstored(failed)
            raise
        finally:
            remove()
        if state.status == "running":
            state.status = "success"
        elif state.status == "paused" and self.on_detach is not None:  # left waiting (PutToWait)
            self.on_detach(state)
        if state.status != "paused":
            state.stopped_at = now_ms()
            try:
                self._checkpoint(True)
            except StoreFailed as failed:  # the end itself could not be stored
                self._end_unstored(failed)
                raise
            end = WorkflowAfter(state.id, state.status, state.error)
            try:
                self.tell(end)
            except StoreFailed:  # the end is stored (the checkpoint before): what failed after is said
                self.hooks.emit(end)
                raise
        return state

    def _end_unstored(self, failed: StoreFailed) -> None:
        """The run stops at a store failure, as if its process had died there: "crashed", with the
        store's error, resumable from its last boundary once the cause is gone (a full disk made
        room on; a run that cannot be stored fails again, as the same error). The store is asked
        to keep that and to give up the execution's lease (where it fails again, the execution is
        found crashed once its process has ended); the hooks hear the end either way."""
        self._fail_running(str(failed), status="crashed")
        state = self.state
        state.stopped_at = now_ms()
        try:
            self._checkpoint(False)  # no boundary: the stack is in the middle of a node's run
            if self.on_detach is not None:
                self.on_detach(state)
        except Exception:  # the store's first failure is the one raised; a second one says nothing new
            log.warning("execution %s: the store could not keep its end either", state.id, exc_info=True)
        self.hooks.emit(WorkflowAfter(state.id, state.status, state.error))

    def _fail_running(self, message: str, status: str) -> None:
        self.state.status = status  # type: ignore[assignment]
        self.state.pause = None
        self.state.error = TaskError(message=message, node=self._running_node)

    _running_node: str | None = None

    async def _loop(self) -> None:
        state = self.state
        stack = state.stack
        self._last_yield = time.perf_counter()
        while stack or (state.waiting and self._release_waiting()):
            if self.yield_interval_s is not None:
                await self.maybe_yield()
            if self.signal.aborted:
                raise ExecutionCancelled()
            entry = stack[-1]
            if entry.round == 0 and entry.pending is None and self.may_pause and not self._served_next(entry):
                await self._pause_before(entry)
            self._checkpoint(True)
            stack.pop()
            entry.touch()  # it changes while it runs: if it comes back to the stack, it is written again
            if not await self._run_entry(entry):
                return

    def _served_next(self, entry: StackEntry) -> bool:
        """Whether `entry` is a tool run its resume serves from the runs recorded before (no pause then)."""
        ahead = self.recorded_ahead
        return ahead is not None and entry.mode == "tool" and ahead.next_is(entry.node)

    def _checkpoint(self, at_boundary: bool = True) -> None:
        if self.on_checkpoint is not None:
            try:
                self.on_checkpoint(self.state, at_boundary)
            except Exception as exc:  # also where a node pauses: never read as that node's error
                raise store_failed(exc, self.state.id, "a node boundary") from exc

    async def _pause_before(self, entry: StackEntry) -> None:
        """The "node" and "before_tool" pause points; a tool's arguments may be edited here."""
        from .debugger import PausePoint

        if entry.mode == "main":
            await self.pause_at(PausePoint(kind="node", node=entry.node, payload={"input": entry.input}))
            return
        action = entry.action
        assert action is not None
        parent = entry.parent or {}
        args = {k: v for k, v in action.input.items() if not (k == "tool" and action.metadata.get("isFromToolkit"))}
        edit = await self.pause_at(PausePoint(
            kind="before_tool", node=entry.node, agent=parent.get("node"), iteration=parent.get("iteration"),
            itemIndex=parent.get("itemIndex"), toolCallId=action.id, toolName=parent.get("toolName"),
            payload={"args": args},
        ))
        if edit is not None and "args" in edit and edit["args"] != args:
            new_args = dict(edit["args"])
            entry.edits.append({"what": "toolInput", "original": args, "new": new_args})
            if action.metadata.get("isFromToolkit"):
                new_args = {**new_args, "tool": action.input.get("tool")}
            action.input = new_args
            entry.input = [{"json": new_args}]
            entry.touch()
            self._touch_waiting(action.id)  # its request's action is this one

    async def _pause_after_tool(self, entry: StackEntry, task: TaskData) -> None:
        """The "tool_result" / "tool_error" pause points; the observation may be edited here."""
        if self.replay is not None:
            self.replay.check_tool(entry, task)
        if not self.may_pause:
            return
        action = entry.action
        assert action is not None
        found = self._waiting_response(action.id)
        if found is None:
            return
        waiting, response = found
        from .debugger import PausePoint

        text, failed = observation(response.data)
        parent = entry.parent or {}
        edit = await self.pause_at(PausePoint(
            kind="tool_error" if failed else "tool_result", node=entry.node, agent=parent.get("node"),
            iteration=parent.get("iteration"), itemIndex=parent.get("itemIndex"), toolCallId=action.id,
            toolName=parent.get("toolName"), payload={"observation": text},
        ))
        if edit is not None and "observation" in edit and edit["observation"] != text:
            record = {"what": "observation", "original": text, "new": str(edit["observation"])}
            data = with_observation(response.data, record["new"])
            shown = data.get("metadata") or {}  # new containers: the one the stack held may be stored already
            data["metadata"] = {**shown, "edits": [*shown.get("edits", ()), record]}
            response.data = data
            waiting.touch()
            task.metadata.setdefault("edits", []).append(record)
            self.update_run(entry.node, entry.run_index or 0, task)

    def _waiting_response(self, action_id: str) -> tuple[StackEntry, ActionResponse] | None:
        """The answer to action `action_id` and the entry whose request holds it."""
        for waiting in reversed(self.state.stack):
            if waiting.pending is not None:
                for response in waiting.pending.responses:
                    if response.action.id == action_id:
                        return waiting, response
        return None

    def _touch_waiting(self, action_id: str) -> None:
        """The entry whose pending request holds action `action_id` changed with it."""
        for waiting in reversed(self.state.stack):
            pending = waiting.pending
            if pending is not None and any(a.id == action_id for a in pending.request.actions):
                waiting.touch()

    async def _run_entry(self, entry: StackEntry) -> bool:
        """Run one stack entry; False when the execution has failed and must stop."""
        state = self.state
        node = self._nodes.get(entry.node)
        if node is None:
            return self._fail(entry, None, NodeOperationError(f'Node "{entry.node}" is not in the workflow', node=entry.node))[0]
        if entry.round == 0:
            entry.start_time = now_ms()
            entry.run_index = len(state.run_data.get(node.name, ()))
            if self.recorded_ahead and entry.mode == "tool":
                recorded = self.recorded_ahead.take(node.name, entry.run_index, entry.parent)
                if recorded is not None:
                    entry.round = 1
                    self._serve_recorded(entry, node, recorded)
                    return True
            if self.hooks.wants(NodeBefore):
                self.hooks.emit(NodeBefore(state.id, node.name, entry.run_index, entry.parent))
        entry.round += 1
        self._running_node = node.name
        try:
            if node.name in self._error_settings and (entry.mode == "main" or self.replay is None):
                result = await self._call_with_settings(node, entry)
            else:
                result = await self._call(node, entry)
        except (asyncio.CancelledError, StoreFailed):
            raise
        except PutToWait as waiting:
            if entry.mode != "main":
                return self._fail(entry, node, NodeOperationError(
                    f'Node "{node.name}" waits to be resumed, which only a main-path node may do', node=node.name))[0]
            return self._put_to_wait(entry, waiting)
        except Exception as exc:  # a node type's bug must reach the user as that node's error
            error = self._node_error(node, exc)
            if entry.mode == "main" and node.name in self._error_settings and not self.signal.aborted \
                    and not isinstance(exc, ExecutionCancelled) and node_settings.continues_on_error(node):
                inputs = entry.inputs if entry.inputs is not None else [entry.input]
                self._finish(entry, node, node_settings.passed_through(inputs),
                             error=TaskError(message=error.message, description=error.description, node=error.node or node.name))
                return True
            go_on, task = self._fail(entry, node, error)
            if go_on and entry.mode == "tool":
                try:
                    await self._pause_after_tool(entry, task)
                except NodeOperationError as diverged:  # a replay that diverged ends the run here
                    return self._stop_with(diverged)
            return go_on
        if isinstance(result, EngineRequest):
            self._push_request(entry, node, result)
            return True
        task = self._finish(entry, node, result)
        if entry.mode == "tool":
            try:
                await self._pause_after_tool(entry, task)
            except NodeOperationError as diverged:  # a replay that diverged ends the run here
                return self._stop_with(diverged)
        return True

    def _serve_recorded(self, entry: StackEntry, node: Node, task: TaskData) -> None:
        """A tool run its resume serves again: recorded as it was (its store has it already: told
        it was served) and handed to the request waiting for it, the tool not run."""
        self.record(node.name, task)
        answer = self._answer(entry, task)
        assert answer is not None  # a tool's run
        self.tell_store(NodeAfter(self.state.id, node.name, entry.run_index or 0, task, entry.parent, answer.data, served=True))
        self._deliver(entry, answer)

    @staticmethod
    def _node_error(node: Node, exc: Exception) -> NodeOperationError:
        if isinstance(exc, NodeOperationError):
            return exc
        if isinstance(exc, MiniN8nError):
            return NodeOperationError(str(exc), node=node.name)
        return NodeOperationError(f"{type(exc).__name__}: {exc}", node=node.name)

    async def _call_with_settings(self, node: Node, entry: StackEntry) -> list[list[Item]] | EngineRequest:
        """A node's call under its Retry On Fail and On Error settings, as n8n runs them: a failed
        try (an error, or a first output item holding `error`) is tried again after the wait, each
        failed try noted in the run log (a tool's tries too); with the error output on, items made
        of an error move to it."""
        tries, wait_ms = node_settings.retries(node)
        pending = entry.pending
        attempt = 1
        while True:
            entry.pending = pending
            try:
                result = await self._call(node, entry)
            except (ExecutionCancelled, asyncio.CancelledError, PutToWait, StoreFailed):
                raise
            except Exception as exc:
                if attempt >= tries or self.signal.aborted:
                    raise
                message = self._node_error(node, exc).message
            else:
                first = result[0][0] if isinstance(result, list) and result and result[0] else None
                data = first.get("json") if first is not None else None
                if not (isinstance(data, dict) and "error" in data) or attempt >= tries:  # n8n: `json.error !== undefined`
                    break
                message = str(data["error"])
            self.notes.setdefault(node.name, []).append(node_settings.retry_note(node, attempt, tries, message, wait_ms))
            attempt += 1
            if wait_ms:
                await asyncio.sleep(wait_ms / 1000)
        if isinstance(result, list) and entry.mode == "main" and not entry.pinned and node_settings.has_error_output(node):
            _inputs, outputs = self.node_type(node).ports_for(node.parameters, node.typeVersion)
            mains = sum(1 for spec in node_settings.outputs_with_error(node, outputs) if spec.type == MAIN)
            inputs = entry.inputs if entry.inputs is not None else [entry.input]
            result = node_settings.route_errors(result, inputs, mains)
        return result

    def _stop_with(self, error: NodeOperationError) -> bool:
        self.state.status = "error"
        self.state.error = TaskError(message=error.message, description=error.description, node=error.node)
        return False

    async def _call(self, node: Node, entry: StackEntry) -> list[list[Item]] | EngineRequest:
        node_type = self.node_type(node)
        if entry.mode == "main":
            if node.is_disabled:
                return [entry.input]
            pinned = pinned_items(self.state.workflow, node.name)
            if pinned is not None:
                entry.pinned = True
                return [pinned]
            if not node_type.supported and node.name == self.state.start_node and not entry.source:
                return [entry.input]  # a trigger we do not run, started with its item given (--input)
        elif node.is_disabled:
            raise NodeOperationError(f'Tool node "{node.name}" is disabled', node=node.name)
        elif (pinned_answer := pinned_items(self.state.workflow, node.name)) is not None:
            entry.pinned = True  # a pinned tool sub-node answers with its pinned items (engine/unsupported_tools.py)
            return [pinned_answer]
        elif self.replay is not None:
            recorded = self.replay.tool_run(entry)
            if recorded is not None:
                entry.replayed = True
                if recorded.error is not None:
                    raise NodeOperationError(recorded.error.message, node=node.name, description=recorded.error.description)
                return recorded.data[AI_TOOL]
        if node.name not in self._rules_ok:  # the graph does not change during a run: check once
            note = version_note(node, node_type)
            if note is not None:
                self.notes.setdefault(node.name, []).append(note)
            problems = node_problems(self.state.workflow, self.engine.registry, node.name)
            if problems:
                raise NodeOperationError(problems[0], node=node.name, description="; ".join(problems[1:]) or None)
            self._rules_ok.add(node.name)
        if entry.mode == "main" and entry.round == 1 and node_settings.executes_once(node):
            entry.input = entry.input[:1]  # n8n's "Execute Once": the first item of each input
            if entry.inputs is not None:
                entry.inputs = [items[:1] if items else items for items in entry.inputs]
        response = None
        if entry.pending is not None:
            response = EngineResponse(
                actionResponses=entry.pending.responses, metadata=entry.pending.request.metadata
            )
            entry.pending = None
        ctx = NodeContext(
            self, node, entry.input, run_index=entry.run_index or 0, action=entry.action,
            parent=entry.parent, iteration=entry.round, entry=entry,
        )
        return await node_type.execute(ctx, response)

    def _push_request(self, entry: StackEntry, node: Node, request: EngineRequest) -> None:
        stack = self.state.stack
        entry.pending = PendingRequest(request=request)
        stack.append(entry)
        for action in reversed(request.actions):
            parent = {
                "node": node.name,
                "runIndex": entry.run_index,
                "iteration": entry.round,
                "itemIndex": action.metadata.get("itemIndex", 0),
                "toolCallId": action.id,
                "toolName": action.metadata.get("toolName", action.node_name),
            }
            if entry.parent is not None:
                parent["parent"] = entry.parent
            stack.append(StackEntry(node=action.node_name, input=[{"json": action.input}], mode="tool", action=action, parent=parent))

    def _task(self, entry: StackEntry, status: str = "success") -> TaskData:
        start = entry.start_time or now_ms()
        task = TaskData(
            startTime=start,
            executionTime=now_ms() - start,
            executionStatus=status,  # type: ignore[arg-type]
            source=entry.source,
        )
        if entry.mode == "main":
            task.input = {MAIN: entry.inputs if entry.inputs is not None else [entry.input]}
        else:
            task.input = {AI_TOOL: [entry.input]}
        if entry.parent is not None:
            task.metadata = dict(entry.parent)
        if entry.edits:
            task.metadata["edits"] = list(entry.edits)
        if entry.replayed:
            task.metadata["replayed"] = True
        if entry.pinned:
            task.metadata["pinned"] = True
        given = self.run_metadata.pop(entry.node, None)
        if given:
            task.metadata.update(given)
        notes = self.notes.pop(entry.node, None)
        if notes:
            task.metadata["notes"] = notes
        if entry.round > 1 or entry.model_usage.get("calls"):
            usage = entry.model_usage
            task.metadata.update(
                iterations=entry.round,
                tokenUsage={"promptTokens": int(usage.get("promptTokens", 0)), "completionTokens": int(usage.get("completionTokens", 0))},
                modelTimeMs=round(usage.get("modelMs", 0.0), 3),
                modelCalls=int(usage.get("calls", 0)),
            )
        return task

    def _finish(self, entry: StackEntry, node: Node, result: list[list[Item]], error: TaskError | None = None) -> TaskData:
        """Record a finished run and queue its children; `error`: the node failed and continues
        (On Error), its run holds the error beside the output."""
        state = self.state
        task = self._task(entry)
        if error is not None:
            task.error = error
            task.execution_status = "error"
        conn = MAIN if entry.mode == "main" else AI_TOOL
        if entry.mode == "main":
            result = with_paired_items(result, entry.input)
            if not (result and result[0]) and node_settings.always_outputs(node):
                inputs = entry.inputs if entry.inputs is not None else [entry.input]
                result = [[node_settings.empty_output(inputs)], *result[1:]]
        task.data = {conn: result}
        self.record(node.name, task)
        answer = self._answer(entry, task)
        if self.hears_runs:
            self.tell(NodeAfter(state.id, node.name, entry.run_index or 0, task, entry.parent,
                                answer.data if answer is not None else None))
        if answer is not None:
            self._deliver(entry, answer)
            return task
        state.last_node = node.name
        state.result = result[0] if result else []
        outputs = state.workflow.connections.get(node.name, {}).get(MAIN, [])
        links = [(index, target) for index, targets in enumerate(outputs)
                 if index < len(result) and result[index] for target in targets]
        if len(links) > 1 and self._v1_order:
            links = self._by_position(links)
        children: list[StackEntry] = []  # in the order n8n queues them: the last one runs first
        for index, target in links:
            items = result[index]
            source = SourceRef(previousNode=node.name, previousNodeOutput=index, previousNodeRun=entry.run_index or 0)
            if self._main_inputs.get(target.node, 1) > 1:
                ready = self._wait_for_inputs(target.node, target.index, items, source)
                if ready is not None:
                    children.append(ready)
                continue
            children.append(StackEntry(node=target.node, input=items, source=[source]))
        state.stack.extend(children if self._v1_order else reversed(children))
        return task

    def _by_position(self, links: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        """n8n's v1 order of a node's children: queued lowest on the canvas first (then rightmost),
        so the topmost, leftmost child runs first; children at the same place run last-linked first."""
        def place(link: tuple[int, Any]) -> tuple[float, float]:
            target = self._nodes.get(link[1].node)
            position = target.position if target is not None else [0, 0]
            return (-float(position[1]), -float(position[0]))

        return sorted(links, key=place)

    # ----- nodes with several main inputs (n8n's waitingExecution, v1 order) ---------------------
    def _wait_for_inputs(self, name: str, input_index: int, items: list[Item], source: SourceRef) -> StackEntry | None:
        """Park one input's items for a node with several main inputs; the run, once every input has
        items (the first waiting run still missing this input gets them, as n8n does)."""
        waiting = self.state.waiting
        entry = next((e for e in waiting if e.node == name and e.inputs is not None and e.inputs[input_index] is None), None)
        if entry is None:
            entry = StackEntry(node=name, inputs=[None] * self._main_inputs[name])
            waiting.append(entry)
        assert entry.inputs is not None
        entry.inputs[input_index] = items
        entry.source = self._ordered_sources(entry, input_index, source)
        if any(i is None for i in entry.inputs):
            return None
        waiting.remove(entry)
        entry.input = entry.inputs[0] or []
        return entry

    @staticmethod
    def _ordered_sources(entry: StackEntry, input_index: int, source: SourceRef) -> list[SourceRef]:
        """The entry's sources in input order (inputs without items have none)."""
        assert entry.inputs is not None
        by_input = dict(zip((k for k, i in enumerate(entry.inputs) if i is not None and k != input_index), entry.source))
        by_input[input_index] = source
        return [by_input[k] for k in sorted(by_input)]

    def _release_waiting(self) -> bool:
        """The stack ran empty: start the first waiting run n8n would start with inputs missing
        (those read as no items), unless its type requires them or a parent still waits. False
        when none may start (the execution then ends, as n8n's does)."""
        waiting = self.state.waiting
        index = 0
        while index < len(waiting):
            entry = waiting[index]
            assert entry.inputs is not None
            node = self._nodes[entry.node]
            required = self.node_type(node).required_inputs(node.parameters)
            count = len(entry.inputs)
            names = {e.node for e in waiting}
            present = [k for k, items in enumerate(entry.inputs) if items is not None]
            if (isinstance(required, list) and len(required) == count) or required == count \
                    or self._main_ancestors(entry.node) & names \
                    or (isinstance(required, list) and any(k not in present for k in required)) \
                    or (isinstance(required, int) and len(present) < required):
                index += 1
                continue
            del waiting[index]
            entry.inputs = [items or [] for items in entry.inputs]
            if any(entry.inputs):
                entry.input = entry.inputs[0]
                self.state.stack.append(entry)
                return True
            index = 0
        return False

    def _main_ancestors(self, name: str) -> set[str]:
        """Every node main connections lead from to `name`."""
        memo = self.memo.setdefault(("main-ancestors", name), {})
        if "nodes" not in memo:
            found: set[str] = set()
            pending = [name]
            while pending:
                for parent, _index in self._incoming.get((pending.pop(), MAIN), ()):
                    if parent not in found:
                        found.add(parent)
                        pending.append(parent)
            memo["nodes"] = found
        return memo["nodes"]

    @staticmethod
    def _answer(entry: StackEntry, task: TaskData) -> ActionResponse | None:
        """A tool run's answer to the request that asked for it (None for a main node's run): its
        data is the object the run's NodeAfter event carries as `answer`."""
        if entry.mode != "tool":
            return None
        assert entry.action is not None
        return ActionResponse(action=entry.action, data=task.to_json())

    def _deliver(self, entry: StackEntry, answer: ActionResponse) -> None:
        """Hand a tool run's answer to the request waiting for it, further down the stack."""
        action = entry.action
        assert action is not None
        for waiting in reversed(self.state.stack):
            pending = waiting.pending
            if pending is not None and any(a.id == action.id for a in pending.request.actions):
                pending.responses.append(answer)
                return
        raise MiniN8nError(f'no node is waiting for the result of action "{action.id}" ({entry.node})')

    def _fail(self, entry: StackEntry, node: Node | None, exc: NodeOperationError) -> tuple[bool, TaskData]:
        """Record a failed run; (whether the execution goes on, the run). A tool's failure is
        an observation for the model, not a failed execution."""
        name = node.name if node else entry.node
        task = self._task(entry, status="error")
        task.error = TaskError(message=exc.message, description=exc.description, node=exc.node or name)
        self.record(name, task)
        if self.streaming and entry.mode == "main" and node is not None:  # as n8n: every failed node run
            said = exc.api_message if isinstance(exc, NodeApiError) and exc.api_message else exc.description
            self.hooks.emit(ChunkSent(self.state.id, error_chunk(node, entry.run_index or 0, said)))
        answer = self._answer(entry, task)
        self.tell(NodeAfter(self.state.id, name, entry.run_index or 0, task, entry.parent,
                            answer.data if answer is not None else None))
        if answer is not None:
            self._deliver(entry, answer)
            return True, task
        self.state.status = "error"
        self.state.error = task.error
        self.state.last_node = name
        return False, task

    # ----- sub-node data -------------------------------------------------------------------------
    def _sub_nodes(self, target: str, conn_type: str, input_index: int | None = None) -> Iterable[Node]:
        for name, index in self._incoming.get((target, conn_type), ()):
            node = self._nodes[name]
            if not node.is_disabled and (input_index is None or index == input_index):
                yield node

    async def supply(self, ctx: NodeContext, conn_type: str, item_index: int, input_index: int | None = None) -> Any:
        """What the sub-nodes on `conn_type` supply (those on input `input_index` only, when given):
        a list for tools, the first one's data otherwise."""
        if (ctx.node.name, conn_type) not in self._incoming:  # nothing is connected there
            return [] if conn_type == AI_TOOL else None
        entry = ctx.entry
        parent = {"node": ctx.node.name, "runIndex": ctx.run_index, "iteration": ctx.iteration, "itemIndex": item_index}
        if conn_type == AI_LANGUAGE_MODEL and input_index == 1:
            parent["fallback"] = True  # an Agent's Fallback Model: its calls say so in their metadata
        if ctx.parent is not None:
            parent["parent"] = ctx.parent
        found: list[Any] = []
        for sub in self._sub_nodes(ctx.node.name, conn_type, input_index):
            sub_type = self.node_type(sub)
            kept = self.memo.get(("supplied-once", sub.name)) if conn_type == AI_TOOL else None
            if kept is not None:
                found.extend(kept["tools"])
                continue
            sub_ctx = SupplyContext(self, sub, ctx, item_index)
            try:
                if conn_type == AI_TOOL and not sub_type.supported:
                    data = placeholder_tool(sub, bool(self._from_ai_fields(sub)))
                else:
                    data = await sub_type.supply_data(sub_ctx)
            except (SubNodeError, ExecutionCancelled, StoreFailed):
                raise  # a sub-node's own sub-node failed: already recorded and worded
            except Exception as exc:
                raise failed_supply(self, sub.name, parent, exc) from exc
            check_supplied(conn_type, sub, ctx.node.name, data)
            if conn_type != AI_TOOL:  # a tool's run is a node run: noted there
                self._note_sub_node_version(sub)
            if conn_type == AI_LANGUAGE_MODEL:
                data = RecordedChatModel(data, self, sub.name, parent, self._usage_counter(entry))
            elif conn_type == AI_MEMORY:
                data = RecordedMemory(data, self, sub.name, parent)
            elif conn_type == AI_OUTPUT_PARSER:
                data = RecordedOutputParser(data, self, sub.name, parent)
            elif conn_type == AI_TOOL:
                tools = data if isinstance(data, list) else [data]
                model_filled = self._from_ai_fields(sub)
                for tool in tools:
                    if isinstance(tool, ToolSpec):
                        if not tool.source_node_name:
                            tool.source_node_name = sub.name
                        if model_filled and not tool.is_from_toolkit:
                            tool.parameters = from_ai.with_fields(tool.parameters, model_filled)
                if sub_type.supplies_once and sub.name in self.params_cache:  # no expression among its parameters
                    self.memo[("supplied-once", sub.name)] = {"tools": tools}  # the same tools at every later round
                found.extend(tools)
                continue
            found.append(data)
        if conn_type == AI_TOOL:
            return found
        return found[0] if found else None

    def _note_sub_node_version(self, node: Node) -> None:
        """A sub-node's typeVersion its type does not map: noted once, on its next recorded run."""
        noted = self.memo.setdefault(("version-noted", ""), {})
        if node.name not in noted:
            noted[node.name] = version_note(node, self.node_type(node))
            if noted[node.name] is not None:
                self.notes.setdefault(node.name, []).append(noted[node.name])

    def _from_ai_fields(self, node: Node) -> list[from_ai.FromAI]:
        """The `$fromAI(...)` arguments of a tool node's parameters (read once per execution)."""
        memo = self.memo.setdefault(("from-ai", node.name), {})
        if "fields" not in memo:
            memo["fields"] = from_ai.fields_in(node.parameters)
        return memo["fields"]

    @staticmethod
    def _usage_counter(entry: StackEntry | None) -> Callable[[ModelReply, float], None]:
        def count(reply: ModelReply, latency_ms: float) -> None:
            if entry is None:
                return
            usage = entry.model_usage
            usage["promptTokens"] = usage.get("promptTokens", 0) + reply.usage.prompt_tokens
            usage["completionTokens"] = usage.get("completionTokens", 0) + reply.usage.completion_tokens
            usage["modelMs"] = usage.get("modelMs", 0.0) + latency_ms
            usage["calls"] = usage.get("calls", 0) + 1

        return count
