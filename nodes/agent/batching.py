"""The Agent's Batch Processing option (n8n's Agent V2 and V3: `options.batching`): how many
items a batch holds (default 1) and the pause between batches in milliseconds (default 0).
n8n starts a batch's items together; here they run one after another, so only the order of
their sub-node runs can differ. Agents before v2 and the Agent Tool have no batches."""

from __future__ import annotations

from engine.context import NodeContext


def batching(ctx: NodeContext) -> tuple[int, float]:
    """(batch size, delay in ms) for this run of the node."""
    if ctx.node.type != "@n8n/n8n-nodes-langchain.agent" or float(ctx.node.typeVersion) < 2:
        return max(len(ctx.items), 1), 0.0
    options = ctx.params(0).options
    return options.batching.batchSize, float(options.batching.delayBetweenBatches)
