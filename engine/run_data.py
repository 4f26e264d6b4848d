"""Run data: one TaskData per node run, and the resumable state of an execution.

Field names follow n8n's ITaskData (camelCase in JSON) so run data reads the same as n8n's.
"""

import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from .credentials import scrub_known_secrets
from .defaults import new_list

from .connection_types import AI_LANGUAGE_MODEL
from .requests import Action, ActionResponse, EngineRequest
from .shared_log import copied, plain
from .workflow import Workflow

Item = dict[str, Any]  # {"json": {...}} as in n8n's INodeExecutionData

TaskStatus = Literal["success", "error", "running", "canceled"]
ExecutionStatus = Literal["new", "running", "paused", "success", "error", "cancelled", "crashed"]
ENDED: tuple[ExecutionStatus, ...] = ("success", "error", "cancelled")  # finished, failed or stopped: it runs no more


def now_ms() -> float:
    return time.time() * 1000.0


def with_paired_items(outputs: list[list[Item]], inputs: list[Item]) -> list[list[Item]]:
    """Output items with n8n's `pairedItem` (the input item each came from) where the node gave
    none, by n8n's rule: one input item pairs every output item with it; one output of as many
    items as the input pairs them by position; otherwise the items stay unpaired."""
    single = len(inputs) == 1
    by_position = len(outputs) == 1 and len(outputs[0]) == len(inputs)
    if not (single or by_position) or all("pairedItem" in i for out in outputs for i in out):
        return outputs
    return [
        [item if "pairedItem" in item else {**item, "pairedItem": {"item": 0 if single else index}}
         for index, item in enumerate(out)]
        for out in outputs
    ]


class TaskError(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    message: str
    description: str | None = None
    node: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message}
        if self.description is not None:
            out["description"] = self.description
        if self.node is not None:
            out["node"] = self.node
        return out

    @field_validator("message", "description")
    @classmethod
    def _no_keys(cls, text: str | None) -> str | None:
        """An error is shown and stored: no key loaded by this process survives in it, in any form."""
        return scrub_known_secrets(text) if text else text


class SourceRef(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    previous_node: str = Field(alias="previousNode")
    previous_node_output: int = Field(0, alias="previousNodeOutput")
    previous_node_run: int = Field(0, alias="previousNodeRun")

    def to_json(self) -> dict[str, Any]:
        fields = self.__dict__  # one attribute lookup: a model's own ones each go through its __getattr__ hook
        return {"previousNode": fields["previous_node"], "previousNodeOutput": fields["previous_node_output"],
                "previousNodeRun": fields["previous_node_run"]}


class TaskData(BaseModel):
    """One run of one node: when, how long, status, input, output per connection type, error."""

    model_config = ConfigDict(populate_by_name=True)

    start_time: float = Field(alias="startTime")
    execution_time: float = Field(0.0, alias="executionTime")
    execution_status: TaskStatus = Field("success", alias="executionStatus")
    input: dict[str, list[list[Item]]] = Field(default_factory=dict)
    data: dict[str, list[list[Item]]] = Field(default_factory=dict)
    error: TaskError | None = None
    source: list[SourceRef] = Field(default_factory=new_list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def to_json(self, *, for_store: bool = False) -> dict[str, Any]:
        """The run as JSON. `input` and `data` are JSON already and are shared, not copied:
        long agent runs record large message lists, and the store writes what repeats once.
        A model run's messages are a window on the agent's message log, written as a list
        (`for_store`: kept a window, of which the store writes what it adds to the last one, and
        the metadata shared, not copied: the store writes it out at once)."""
        fields = self.__dict__  # read directly: each attribute of a model goes through its __getattr__ hook
        out: dict[str, Any] = {"startTime": float(fields["start_time"]), "executionTime": float(fields["execution_time"]),
                               "executionStatus": fields["execution_status"]}
        error = fields["error"]
        if error is not None:
            out["error"] = error.to_json()
        source = fields["source"]
        out["source"] = [s.to_json() for s in source] if source else []
        out["metadata"] = fields["metadata"] if for_store else copied(fields["metadata"])
        out["input"] = fields["input"] if for_store else plain_input(fields["input"])
        out["data"] = fields["data"]
        return out

    @field_serializer("input")
    def _plain_input(self, value: dict[str, list[list[Item]]]) -> dict[str, list[list[Item]]]:
        return plain_input(value)


def plain_input(value: dict[str, list[list[Item]]]) -> dict[str, list[list[Item]]]:
    """A run's input with its message windows as lists (only model runs' inputs hold windows)."""
    runs = value.get(AI_LANGUAGE_MODEL)
    if runs is None:
        return value
    converted = plain(runs)
    return value if converted is runs else {**value, AI_LANGUAGE_MODEL: converted}


class PendingRequest(BaseModel):
    """An EngineRequest whose actions are being run, and the answers gathered so far."""

    model_config = ConfigDict(populate_by_name=True)

    request: EngineRequest
    responses: list[ActionResponse] = Field(default_factory=new_list)


class StackEntry(BaseModel):
    """One node run waiting on the execution stack.

    `mode` "main" is a node of the main path; "tool" is a node run to answer an action of
    a parent's EngineRequest (`action`, `parent`). `pending` is set while the node waits for
    its own request's actions; `round` counts how often the node has been called.
    """

    model_config = ConfigDict(populate_by_name=True)

    node: str
    input: list[Item] = Field(default_factory=new_list)
    source: list[SourceRef] = Field(default_factory=new_list)
    mode: Literal["main", "tool"] = "main"
    action: Action | None = None
    parent: dict[str, Any] | None = None
    pending: PendingRequest | None = None
    round: int = 0
    start_time: float | None = Field(None, alias="startTime")
    run_index: int | None = Field(None, alias="runIndex")
    model_usage: dict[str, float] = Field(default_factory=dict, alias="modelUsage")
    edits: list[dict[str, Any]] = Field(default_factory=new_list)
    replayed: bool = False
    pinned: bool = False  # the node output its pinned data instead of running
    # a node with several main inputs (Merge): the items of each input, None where none came
    inputs: list[list[Item] | None] | None = None
    # moved by `touch()` wherever the entry changes while on the stack or off it (not by answers
    # appended to its pending request): the store writes again only entries whose revision moved.
    # Not part of the entry's JSON; kept in __dict__ directly (pydantic's __setattr__ costs a µs)
    revision: int = Field(0, exclude=True)

    def touch(self) -> None:
        """Note a change other than an answer appended to the pending request's responses."""
        self.__dict__["revision"] += 1

    def to_json(self, *, for_store: bool = False) -> dict[str, Any]:
        """The entry as JSON, sharing (not copying) its items and its request's metadata (whose
        step windows become lists of the same step objects; `for_store`: stay windows, and the action
        and parent are shared, for the store, see TaskData). Written for speed: the store makes it
        for every entry at every node boundary (fields read from __dict__: a model's attributes
        each go through its __getattr__ hook)."""
        fields = self.__dict__
        source = fields["source"]
        out: dict[str, Any] = {"node": fields["node"], "source": [s.to_json() for s in source] if source else [],
                               "mode": fields["mode"]}
        action, parent = fields["action"], fields["parent"]
        if action is not None:
            out["action"] = action.to_json(shared=for_store)
        if parent is not None:
            out["parent"] = parent if for_store else copied(parent)
        out["round"] = fields["round"]
        start_time = fields["start_time"]
        if start_time is not None:
            out["startTime"] = float(start_time)
        run_index = fields["run_index"]
        if run_index is not None:
            out["runIndex"] = run_index
        out["modelUsage"] = usage_json(fields["model_usage"])
        edits = fields["edits"]
        out["edits"] = copied(edits) if edits else []
        out["replayed"] = fields["replayed"]
        out["pinned"] = fields["pinned"]
        out["input"] = fields["input"]
        inputs = fields["inputs"]
        if inputs is not None:  # a node with several main inputs: the list is changed in place, so a copy
            out["inputs"] = list(inputs)
        pending = fields["pending"]
        if pending is not None:
            out["pending"] = pending_json(pending, for_store)
        return out


def usage_json(usage: dict[str, float]) -> dict[str, float]:
    """An entry's model usage as its JSON holds it: each count a float."""
    return dict(zip(usage, map(float, usage.values())))


def pending_json(pending: PendingRequest, for_store: bool = False) -> dict[str, Any]:
    """A pending request as StackEntry.to_json writes it."""
    waiting = pending.__dict__
    request = waiting["request"].__dict__
    metadata = request["metadata"]
    return {
        "request": {"actions": [a.to_json(shared=for_store) for a in request["actions"]],
                    "metadata": metadata if for_store else plain(metadata)},
        "responses": [response_json(r, for_store) for r in waiting["responses"]],
    }


def response_json(response: ActionResponse, for_store: bool = False) -> dict[str, Any]:
    """One answer of a pending request as StackEntry.to_json writes it."""
    fields = response.__dict__
    return {"action": fields["action"].to_json(shared=for_store), "data": fields["data"]}


class ExecutionState(BaseModel):
    """Everything needed to continue an execution, in this process or another: plain JSON."""

    model_config = ConfigDict(populate_by_name=True)

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    workflow: Workflow
    mode: str = "manual"
    status: ExecutionStatus = "new"
    started_at: float = Field(default_factory=now_ms, alias="startedAt")
    stopped_at: float | None = Field(None, alias="stoppedAt")
    start_node: str | None = Field(None, alias="startNode")
    stack: list[StackEntry] = Field(default_factory=new_list)
    run_data: dict[str, list[TaskData]] = Field(default_factory=dict, alias="runData")
    last_node: str | None = Field(None, alias="lastNode")
    error: TaskError | None = None
    result: list[Item] | None = None
    pause: dict[str, Any] | None = None  # the debugger's pause point while paused (with its key)
    # runs of nodes with several main inputs that wait for the inputs still missing, oldest first
    waiting: list[StackEntry] = Field(default_factory=new_list)
    # what nodes keep between their runs in this execution (n8n's node context), by node name
    node_context: dict[str, dict[str, Any]] = Field(default_factory=dict, alias="nodeContext")

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ExecutionState":
        return cls.model_validate(data)
