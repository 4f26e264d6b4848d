"""n8n's streamed responses: the chunks a node sends while it runs (n8n's `sendChunk`), as the
HTTP client of a streaming Chat Trigger receives them, one JSON object a line.

`{"type": "begin"|"item"|"end", "content": ..., "metadata": {"nodeId", "nodeName", "itemIndex",
"runIndex", "timestamp"}}` from a node; `{"type": "error", "content": <the error's description>,
"metadata": {"nodeId", "nodeName", "runIndex", "itemIndex": 0}}` (no timestamp) when a node
fails. Keys in n8n's order; a chunk without content has no "content" key (JSON.stringify drops
undefined).
"""

from __future__ import annotations

import json
import time
from typing import Any

from .workflow import Node

# n8n's executionModeSupportsStreaming: other executions (a re-run, a replay) never stream
STREAMING_MODES = ("manual", "webhook", "integrated", "chat")


def node_chunk(kind: str, node: Node, item_index: int, run_index: int, content: Any = None) -> dict[str, Any]:
    chunk: dict[str, Any] = {"type": kind}
    if content is not None:
        chunk["content"] = content if isinstance(content, str) else json.dumps(content, separators=(",", ":"))
    chunk["metadata"] = {"nodeId": node.id, "nodeName": node.name, "itemIndex": item_index, "runIndex": run_index,
                         "timestamp": int(time.time() * 1000)}
    return chunk


def error_chunk(node: Node, run_index: int, description: str | None) -> dict[str, Any]:
    chunk: dict[str, Any] = {"type": "error"}
    if description is not None:
        chunk["content"] = description
    chunk["metadata"] = {"nodeId": node.id, "nodeName": node.name, "runIndex": run_index, "itemIndex": 0}
    return chunk


def chunk_line(chunk: dict[str, Any]) -> bytes:
    """A chunk as n8n writes it: JSON.stringify and a line feed."""
    return (json.dumps(chunk, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
