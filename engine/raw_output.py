"""An execution in the shape of n8n's `n8n execute --rawOutput` (n8n's IRun), so a run of ours
can be diffed against a run of n8n on the same file: `status`, `startedAt`, `stoppedAt`,
`data.resultData.runData[node][runIndex]` with `data`, `executionTime`, `executionStatus`, `error`."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from .run_data import ExecutionState, TaskData

# our statuses that n8n spells differently
_STATUS = {"cancelled": "canceled"}
WAIT_INDEFINITELY = "3000-01-01T00:00:00.000Z"  # n8n's waitTill of a wait without a time limit


def n8n_status(state: ExecutionState) -> str:
    """The status as n8n names it: an execution a Wait node left waiting is "waiting"."""
    if state.status == "paused" and (state.pause or {}).get("kind") == "wait":
        return "waiting"
    return _STATUS.get(state.status, state.status)


def wait_till(state: ExecutionState) -> str | None:
    """n8n's waitTill of a waiting execution (ISO time), None for any other."""
    if n8n_status(state) != "waiting":
        return None
    till = ((state.pause or {}).get("payload") or {}).get("waitTill")
    return WAIT_INDEFINITELY if till is None else iso_time(till)


def iso_time(ms: float | None) -> str | None:
    """n8n's timestamps: ISO 8601 in UTC with milliseconds, e.g. 2026-12-01T12:00:00.123Z."""
    if ms is None:
        return None
    stamp = datetime.fromtimestamp(ms / 1000.0, tz=timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def error_json(error: Any, node: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"message": error.message}
    if error.description:
        out["description"] = error.description
    if error.node or node:
        out["node"] = {"name": error.node or node}
    return out


def task_json(task: TaskData, index: int) -> dict[str, Any]:
    """One node run as n8n's ITaskData."""
    out: dict[str, Any] = {
        "startTime": int(task.start_time),
        "executionIndex": index,
        "source": [
            {"previousNode": s.previous_node, **({"previousNodeOutput": s.previous_node_output} if s.previous_node_output else {}),
             **({"previousNodeRun": s.previous_node_run} if s.previous_node_run else {})}
            for s in task.source
        ],
        "hints": [],
        "executionTime": int(round(task.execution_time)),
        "executionStatus": task.execution_status,
    }
    if task.data or task.error is None:
        out["data"] = task.data
    if task.error is not None:
        out["error"] = error_json(task.error)
    if task.metadata:
        out["metadata"] = task.metadata
    return out


def raw_output(state: ExecutionState) -> dict[str, Any]:
    """The execution as n8n's `--rawOutput` prints it (our metadata rides along in `metadata`)."""
    ordered = sorted(
        ((task.start_time, node, run) for node, runs in state.run_data.items() for run, task in enumerate(runs)),
        key=lambda entry: entry[0],
    )
    order = {(node, run): i for i, (_t, node, run) in enumerate(ordered)}
    run_data = {
        node: [task_json(task, order[(node, run)]) for run, task in enumerate(runs)]
        for node, runs in state.run_data.items()
    }
    result: dict[str, Any] = {"runData": run_data, "pinData": state.workflow.pinData or {}}
    if state.last_node is not None:
        result["lastNodeExecuted"] = state.last_node
    if state.error is not None:
        result["error"] = error_json(state.error)
    return {
        "data": {
            "version": 1,
            "startData": {},
            "resultData": result,
            "executionData": {"contextData": {}, "nodeExecutionStack": [], "metadata": {}, "waitingExecution": {},
                              "waitingExecutionSource": {}},
        },
        "mode": state.mode,
        "startedAt": iso_time(state.started_at),
        "stoppedAt": iso_time(state.stopped_at),
        "status": n8n_status(state),
        "finished": state.status == "success",
        **({"waitTill": wait_till(state)} if wait_till(state) is not None else {}),
    }
