"""Execute Workflow (v1–v1.3) and Execute Workflow Trigger (v1–v1.1): a workflow runs another (or
itself) with items and outputs what the other's last node output, as n8n's sub-workflows do.

The workflow to run: this workflow (its id), a workflow file found by id in the folders named by
MINI_N8N_WORKFLOWS (os.pathsep-separated), a file path (source "Local File"), or JSON in the
node ("Define Below"). n8n's workflow database and URL sources are refused with a clear error.
"""

import json
import os
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from engine.context import NodeContext
from engine.errors import MiniN8nError, NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import ExecutionState, Item
from engine.workflow import Workflow, load_workflow, parse_workflow
from nodes.core.set_values import describe_value

from .conditions import _INVALID, js_to_string, validate_type
from .if_node import paired
from .js_values import JsValues
from .params import parameter, plain

TRIGGER_TYPE = "n8n-nodes-base.executeWorkflowTrigger"
# n8n's STARTING_NODES: what a sub-workflow without an Execute Workflow Trigger may start from
STARTING_TYPES = ("n8n-nodes-base.manualTrigger", "n8n-nodes-base.start")


class ExecuteWorkflowParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    source: str = Field("database", title="Source")
    workflowId: Any = Field("", title="Workflow")
    workflowJson: Any = Field("\n\n\n", title="Workflow JSON", json_schema_extra={"multiline": True})
    mode: str = Field("once", title="Mode")
    options: Any = Field(default_factory=dict, title="Options")


class ExecuteWorkflowTriggerParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    inputSource: str = Field("passthrough", title="Input data mode")


def workflow_folders() -> list[Path]:
    return [Path(p) for p in os.environ.get("MINI_N8N_WORKFLOWS", "").split(os.pathsep) if p]


def find_by_id(workflow_id: str) -> Workflow | None:
    """The workflow file with this id in the MINI_N8N_WORKFLOWS folders."""
    for folder in workflow_folders():
        for path in sorted(folder.glob("*.json")):
            try:
                head = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(head, dict) and str(head.get("id", "")) == workflow_id:
                return load_workflow(path)
    return None


def start_of(workflow: Workflow, node: str) -> str:
    """n8n's findWorkflowStart: the Execute Workflow Trigger, else a starting node."""
    for types in ((TRIGGER_TYPE,), STARTING_TYPES):
        found = next((n for n in workflow.nodes if n.type in types), None)
        if found is not None:
            return found.name
    raise NodeOperationError("Missing node to start execution", node=node,
                             description="Please make sure the workflow you're calling contains an Execute Workflow "
                                         "Trigger node")


def last_output(state: ExecutionState) -> list[list[Item]]:
    """What n8n hands back from a sub-execution: the last run of its last node, every output."""
    runs = state.run_data.get(state.last_node or "", [])
    return [list(out) for out in runs[-1].data.get("main", [])] if runs else [[]]


def paired_back(state: ExecutionState, item: Item, index: int) -> Any:
    """n8n's findPairedItemThroughWorkflowData: an output item's pairedItem followed back to the
    sub-workflow's first node run (its items' pairing with the caller's items)."""
    runs = state.run_data
    last = runs.get(state.last_node or "", [])
    if not last:
        return None

    def previous(task: Any) -> Any:
        if not task.source:
            return None
        ref = task.source[0]
        earlier = runs.get(ref.previous_node, [])
        return earlier[ref.previous_node_run] if ref.previous_node_run < len(earlier) else None

    task = previous(last[-1])
    pair = item.get("pairedItem")
    while task is not None:
        branch, position = 0, index
        if isinstance(pair, dict):
            branch, position = int(pair.get("input", 0) or 0), int(pair.get("item", index))
        elif isinstance(pair, int) and not isinstance(pair, bool):
            position = pair
        outputs = task.data.get("main") or []
        found = outputs[branch][position] if branch < len(outputs) and 0 <= position < len(outputs[branch]) else None
        pair = found.get("pairedItem") if isinstance(found, dict) else None
        task = previous(task)
    return pair


class ExecuteWorkflowNode(NodeType):
    type = "n8n-nodes-base.executeWorkflow"
    version = 1.3
    versions = (1, 1.1, 1.2, 1.3)
    display_name = "Execute Workflow"
    default_name = "Execute Workflow"
    description = "Runs another workflow (or this one) and outputs its result"
    group = "Core"
    icon = "execute-workflow"
    Params = ExecuteWorkflowParams
    implemented_parameters = frozenset({"source", "workflowId", "workflowPath", "workflowJson", "workflowInputs", "mode",
                                        "options", "options.waitForSubWorkflow"})
    unsupported_parameters = {"workflowUrl": "the URL source is refused with an error naming it"}

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        node = ctx.node.name
        source = plain(parameter(ctx, "source", 0, "database"))
        mode = plain(parameter(ctx, "mode", 0, "once"))
        items = self._input_items(ctx)
        if mode == "each":
            out: list[list[Item]] = []
            for index, item in enumerate(items):
                try:
                    workflow = self._workflow(ctx, source, index)
                    state = await ctx.run_sub_workflow(workflow, start_of(workflow, node), [item])
                    result = self._result(state, node)
                except NodeOperationError as exc:
                    if ctx.continue_on_fail():  # n8n: an error item; before v1.3 on the output of the item's index
                        branch = 0 if float(ctx.node.typeVersion) >= 1.3 else index
                        while len(out) <= branch:
                            out.append([])
                        out[branch].append({"json": {"error": exc.message}, "pairedItem": {"item": index}})
                        continue
                    raise NodeOperationError(f"Error executing workflow with item at index {index}", node=node,
                                             description=exc.message) from None
                if not self._waits(ctx, index):
                    out = out or [[]]
                    out[0].append(item)
                    continue
                for branch, output in enumerate(result):
                    while len(out) <= branch:
                        out.append([])
                    out[branch].extend({**i, "pairedItem": {"item": index}} for i in output)
            return out
        try:
            workflow = self._workflow(ctx, source, 0)
            state = await ctx.run_sub_workflow(workflow, start_of(workflow, node), items)
            result = self._result(state, node)
        except NodeOperationError as exc:
            if not ctx.continue_on_fail():
                raise
            return [[{"json": {"error": exc.message}, "pairedItem": [{"item": i} for i in range(len(items))]}]]
        if not self._waits(ctx, 0):
            return [items]
        every = [{"item": i} for i in range(len(items))]
        outputs = []
        for output in result:
            same_length = len(output) == len(items)
            fixed = []
            for position, item in enumerate(output):
                if "pairedItem" in item:
                    pair = paired_back(state, item, position)
                    fixed.append({**item, "pairedItem": pair} if pair is not None else item)
                else:
                    fixed.append({**item, "pairedItem": {"item": position} if same_length else every})
            outputs.append(fixed)
        return outputs

    @staticmethod
    def _waits(ctx: NodeContext, index: int) -> bool:
        options = plain(parameter(ctx, "options", index, {})) or {}
        return options.get("waitForSubWorkflow", True) is not False

    @staticmethod
    def _result(state: ExecutionState, node: str) -> list[list[Item]]:
        if state.status == "paused" and (state.pause or {}).get("kind") == "wait":
            raise NodeOperationError(f'The sub-workflow waits at its Wait node "{state.pause.get("node")}" for a webhook '
                                     "call, which mini-n8n does not support in a sub-workflow", node=node)
        if state.status != "success":
            error = state.error
            raise NodeOperationError(error.message if error else f"The sub-workflow ended {state.status}", node=node,
                                     description=error.description if error else None)
        return last_output(state)

    @staticmethod
    def _input_items(ctx: NodeContext) -> list[Item]:
        """n8n's getCurrentWorkflowInputData: each item with the mapped workflow inputs (v1.2+)
        written over its fields, checked against their types, removed fields left out."""
        node = ctx.node.name
        inputs = ctx.node.parameters.get("workflowInputs")
        if not isinstance(inputs, dict):
            return [paired({**item, "json": dict(item.get("json", {}))}, i) for i, item in enumerate(ctx.items)]
        schema = inputs.get("schema") or []
        types = {str(f.get("id")): f.get("type") for f in schema if isinstance(f, dict)}
        strict = not inputs.get("attemptToConvertTypes", False)
        js = JsValues(ctx.expression_scope().state)
        out = []
        for index, item in enumerate(ctx.items):
            values = plain(parameter(ctx, "workflowInputs", index, {})).get("value") or {}
            for key, value in list(values.items()):
                kind = types.get(key)
                if kind and kind != "any":
                    converted = validate_type(value, kind, strict, js)
                    if converted is _INVALID:
                        raise NodeOperationError(f"Invalid input for '{key}' [item {index}]", node=node,
                                                 description=f"'{key}' expects a {kind} but we got {describe_value(value)}")
                    values[key] = converted
            out.append({**item, "json": {**item.get("json", {}), **values}, "pairedItem": {"item": index}})
        removed = {str(f.get("displayName")) for f in schema if isinstance(f, dict) and f.get("removed")}
        if schema:
            out = [{**i, "json": {k: v for k, v in i["json"].items() if k not in removed}} for i in out]
        return out

    @staticmethod
    def _workflow(ctx: NodeContext, source: Any, index: int) -> Workflow:
        node = ctx.node.name
        if source == "database":
            chosen = plain(parameter(ctx, "workflowId", index, "" if float(ctx.node.typeVersion) == 1 else {}))
            wanted = js_to_string(chosen.get("value", "") if isinstance(chosen, dict) else chosen)
            own = str((ctx.workflow.model_extra or {}).get("id") or "")
            if wanted and wanted == own:
                return ctx.workflow
            found = find_by_id(wanted) if wanted else None
            if found is None:
                raise NodeOperationError(
                    f'Node "{node}" calls workflow "{wanted}", which is neither this workflow nor a file in the '
                    "MINI_N8N_WORKFLOWS folders", node=node,
                    description="Put the sub-workflow's file (with that id) in a folder named by MINI_N8N_WORKFLOWS, "
                                "or use the source \"Define Below\" with the workflow's JSON")
            return found
        try:
            if source == "localFile":
                path = js_to_string(plain(parameter(ctx, "workflowPath", index, "")))
                if not Path(path).is_file():
                    raise NodeOperationError(f'The file "{path}" could not be found, [item {index}]', node=node)
                return load_workflow(path)
            if source == "parameter":
                text = plain(parameter(ctx, "workflowJson", index, "\n\n\n"))
                data = json.loads(text) if isinstance(text, str) else text
                return parse_workflow(data, f'the Workflow JSON of node "{node}"')
        except MiniN8nError as exc:
            if isinstance(exc, NodeOperationError):
                raise
            raise NodeOperationError(str(exc), node=node) from None
        except ValueError as exc:
            raise NodeOperationError(f"The Workflow JSON of node \"{node}\" is not valid JSON: {exc}", node=node) from None
        raise NodeOperationError(f'Node "{node}" takes its workflow from "{source}", which mini-n8n does not support',
                                 node=node, description="Use this workflow, a workflow file, or \"Define Below\"")


class ExecuteWorkflowTrigger(NodeType):
    type = TRIGGER_TYPE
    version = 1.1
    versions = (1, 1.1)
    display_name = "Execute Workflow Trigger"
    default_name = "When Executed by Another Workflow"
    description = "Starts the workflow when another workflow runs it"
    group = "Triggers"
    icon = "execute-workflow"
    inputs = ()
    is_trigger = True
    Params = ExecuteWorkflowTriggerParams
    implemented_parameters = frozenset({"inputSource", "workflowInputs", "jsonExample"})

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        items = [paired(item, index) for index, item in enumerate(ctx.items)]
        source = plain(parameter(ctx, "inputSource", 0, "passthrough"))
        if source == "passthrough":
            return [items]
        names = self._field_names(ctx, source)
        return [[{**{k: v for k, v in item.items() if k != "json"},
                  "json": {**{name: None for name in names},
                           **{k: v for k, v in item.get("json", {}).items() if k in names}}}
                 for item in items]]

    @staticmethod
    def _field_names(ctx: NodeContext, source: Any) -> list[str]:
        node = ctx.node.name
        if source == "workflowInputs":
            fields = (plain(parameter(ctx, "workflowInputs", 0, {})) or {}).get("values") or []
            return [js_to_string(f.get("name", "")) for f in fields if isinstance(f, dict)]
        if source == "jsonExample":
            example = plain(parameter(ctx, "jsonExample", 0, "{}"))
            try:
                data = json.loads(example) if isinstance(example, str) else example
            except ValueError:
                raise NodeOperationError(f'The JSON Example of node "{node}" is not valid JSON', node=node) from None
            if not isinstance(data, dict):
                raise NodeOperationError(f'The JSON Example of node "{node}" is not an object', node=node)
            return list(data)
        raise NodeOperationError("Internal Error: Invalid input source", node=node)


__all__ = ["ExecuteWorkflowNode", "ExecuteWorkflowTrigger"]
