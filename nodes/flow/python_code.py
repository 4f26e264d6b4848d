"""Code node in Python: the code runs in the Code Tool's sandboxed child process, with the globals
n8n gives it.

Language "python" is n8n's Pyodide sandbox: `_input` (.all(), .first(), .last(), .item), `_json`,
`_binary`, `_('Node')` (.all(), .first(), .last(), .item), `_runIndex`, `_itemIndex`, `_prevNode`,
`_workflow`, `_execution`, and `items` (Run Once for All Items) or `item` (Run Once for Each
Item); items read as `item.json.name` or `item["json"]["name"]`. Language "pythonNative" is
n8n's native Python runner: `_items` (all items) or `_item` (each item), plain dictionaries;
n8n runs it only with task runners on, which the run log notes. Either way the returned value is
checked by n8n's rules worded for dictionaries, print() lines go to the run log, and an error
reads as n8n words it: `NameError: name 'x' is not defined`. The code's process has no network,
keys or user files; its limits are the Code node's time limit (MINI_N8N_CODE_TIMEOUT_MS) and
MINI_N8N_PYTHON_MEMORY_MB (default 512).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.run_data import Item
from nodes.tools.code_tool import CodeToolError, run_request, warn_missing

from .code_node import DICTIONARY, _UNDEFINED, validate_all, validate_each

TIME_LIMIT_S = float(os.environ.get("MINI_N8N_CODE_TIMEOUT_MS", "60000")) / 1000.0
MEMORY_MB = int(os.environ.get("MINI_N8N_PYTHON_MEMORY_MB", "512"))
MAX_ANSWER_BYTES = 256 * 1024 * 1024
NATIVE_NOTE = ("n8n runs native Python (pythonNative) only with task runners on (N8N_RUNNERS_ENABLED=true); "
               "mini-n8n runs it with the runner's globals (_items, _item), imports not limited to an allowlist")
_NODE_REFERENCE = re.compile(r"""(?<![\w$])_\(\s*(['"])(.+?)\1\s*\)""")


def _node_data(ctx: NodeContext, names: set[str], index: int, per_item: bool) -> dict[str, Any]:
    """What `_('Node')` reads, for the nodes the code names: their items and this item's pair."""
    scope = ctx.expression_scope()
    out: dict[str, Any] = {}
    for name in sorted(names):
        entry: dict[str, Any] = {}
        answer = scope.answer("node", [name, "all"])
        if answer.startswith("e"):
            error = json.loads(answer[1:])
            entry["problem"] = f"{error.get('message')}: {name}"
        else:
            entry["items"] = json.loads(answer[1:]) if answer.startswith("j") else []
            paired = scope.answer("node", [name, "item", index]) if per_item else "u"
            if paired.startswith("j"):
                entry["item"] = json.loads(paired[1:])
        out[name] = entry
    return out


def _context(ctx: NodeContext, code: str, index: int, per_item: bool) -> dict[str, Any]:
    scope = ctx.expression_scope()
    meta = json.loads(scope.meta_json())
    items = [{k: v for k, v in item.items() if k in ("json", "binary")} for item in ctx.items]
    return {
        "items": items, "itemIndex": index, "perItem": per_item, "runIndex": meta.get("runIndex", 0),
        "prevNode": meta.get("prevNode"), "workflow": meta.get("workflow"), "execution": meta.get("execution"),
        "nodes": _node_data(ctx, {m.group(2) for m in _NODE_REFERENCE.finditer(code)}, index, per_item),
    }


async def _run(ctx: NodeContext, code: str, index: int, per_item: bool, native: bool) -> Any:
    node = ctx.node.name
    request = {
        "kind": "items", "code": code, "context": {**_context(ctx, code, index, per_item), "native": native},
        "memoryLimitBytes": MEMORY_MB * 1024 * 1024, "cpuSeconds": int(TIME_LIMIT_S) + 2, "maxProcesses": 16,
    }
    try:
        answer, missing = await run_request(request, TIME_LIMIT_S, MAX_ANSWER_BYTES)
    except CodeToolError as exc:
        raise NodeOperationError(f"{str(exc)[0].upper()}{str(exc)[1:]}", node=node) from None
    if missing:
        ctx.note("ran without: " + "; ".join(missing))
        warn_missing(node, missing)
    for line in answer.get("logs") or []:
        ctx.note(f"print: {line}")
    if not answer.get("ok"):
        raise NodeOperationError(str(answer.get("error") or "Unknown error"), node=node)
    value = answer.get("value")
    return _UNDEFINED if value == {"__undefined__": True} else value


async def run_python(ctx: NodeContext, language: str, per_item: bool, code_of: Any) -> list[list[Item]]:
    """The node's output: the code once for all items, or once for each item (`code_of(index)`)."""
    node = ctx.node.name
    native = language == "pythonNative"
    if native:
        ctx.note(NATIVE_NOTE)
    if not per_item:
        return [validate_all(node, await _run(ctx, code_of(0), 0, False, native), DICTIONARY)]
    out: list[Item] = []
    for index in range(len(ctx.items)):
        value = await _run(ctx, code_of(index), index, True, native)
        item = validate_each(node, value, index, DICTIONARY)
        new: Item = {"json": item["json"], "pairedItem": {"item": index}}
        if item.get("binary"):
            new["binary"] = item["binary"]
        out.append(new)
    return [out]
