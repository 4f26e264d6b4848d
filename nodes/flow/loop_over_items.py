"""Loop Over Items (Split in Batches) v3: hands its input out in batches on the "loop" output; each
time the loop brings items back it hands out the next batch; when none are left it outputs every
item that came back on "done", as n8n's SplitInBatches v3 does. What it keeps between its runs
lives in the execution's node context (resumable). v1–v2 are refused with a clear error.
"""

import math
from typing import Any

from pydantic import ConfigDict, Field

from engine.connection_types import MAIN, PortSpec
from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item
from nodes.core.set_values import is_nan, js_number

from .if_node import paired
from .params import parameter, plain


class LoopParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    batchSize: float = Field(1, title="Batch Size", ge=1)
    options: Any = Field(default_factory=dict, title="Options")


def source_data(ctx: NodeContext) -> dict[str, Any] | None:
    """n8n's getInputSourceData: where the input came from (zero output and run left out)."""
    sources = ctx.entry.source if ctx.entry is not None else []
    if not sources:
        return None
    ref = sources[0]
    out: dict[str, Any] = {"previousNode": ref.previous_node}
    if ref.previous_node_output:
        out["previousNodeOutput"] = ref.previous_node_output
    if ref.previous_node_run:
        out["previousNodeRun"] = ref.previous_node_run
    return out


def _with_overwrite(pair: Any, source: Any) -> Any:
    if isinstance(pair, (int, float)) and not isinstance(pair, bool):
        return {"item": pair, "sourceOverwrite": source}
    return {**pair, "sourceOverwrite": source}


class LoopOverItemsNode(NodeType):
    type = "n8n-nodes-base.splitInBatches"
    version = 3
    versions = (1, 2, 3)
    display_name = "Loop Over Items (Split in Batches)"
    default_name = "Loop Over Items"
    description = "Splits the items into batches and loops over them"
    group = "Core"
    icon = "loop"
    outputs = (PortSpec(MAIN, "done"), PortSpec(MAIN, "loop"))
    Params = LoopParams
    implemented_parameters = frozenset({"batchSize", "options", "options.reset"})

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        node = ctx.node.name
        if float(ctx.node.typeVersion) < 3:
            raise NodeOperationError(
                f'Node "{node}" is a Split in Batches of typeVersion {ctx.node.typeVersion}, which mini-n8n does not '
                "run (it supports version 3, Loop Over Items)", node=node,
                description="Open the workflow in n8n and replace the node with a new Loop Over Items node")
        items = [paired(item, index) for index, item in enumerate(ctx.items)]
        context = ctx.node_context()
        size = js_number(plain(parameter(ctx, "batchSize", 0, 1)))
        batch = max(int(size), 0) if not is_nan(size) and not math.isinf(size) else 0
        options = plain(parameter(ctx, "options", 0, {})) or {}
        if "items" not in context or options.get("reset") is True:
            context["currentRunIndex"] = 0
            context["maxRunIndex"] = math.ceil(len(items) / size) if size else 0
            context["sourceData"] = source_data(ctx)
            returned, context["items"] = items[:batch], items[batch:]
            context["processedItems"] = []
        else:
            context["currentRunIndex"] += 1
            returned, context["items"] = context["items"][:batch], context["items"][batch:]
            first_source = context["sourceData"]
            came_back = source_data(ctx)
            context["processedItems"] = context["processedItems"] + [
                {**item, "pairedItem": {"sourceOverwrite": came_back, "item": index}} for index, item in enumerate(items)]
            returned = [{**item, "pairedItem": self._pairing(item, first_source)} for item in returned]
        context["noItemsLeft"] = not context["items"]
        if not returned:
            context["done"] = True
            return [list(context["processedItems"]), []]
        context["done"] = False
        return [[], returned]

    @staticmethod
    def _pairing(item: Item, source: Any) -> Any:
        pair = item.get("pairedItem")
        if pair is None:
            return {"item": 0, "sourceOverwrite": source}
        if isinstance(pair, list):
            return [_with_overwrite(p, source) for p in pair]
        return _with_overwrite(pair, source)
