"""What an AI Agent streams when its execution answers a streaming Chat Trigger, as n8n 1.123's
Tools Agent does (Agent v2.1+, option "Enable Streaming", on by default):

- v3 runs each model call of an item between `begin` and `end` chunks, the model's text pieces
  as `item` chunks; a tool call's step log is the model's text, else "Calling <tool> with input:
  <arguments as JSON>".
- v2.1/v2.2 runs a whole item (all its tool rounds) between one `begin` and one `end`, and its
  output is all the text the model streamed for it, every round's, joined.
A failing model call ends the item without `end` (the engine sends n8n's `error` chunk).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from engine.context import NodeContext

MIN_VERSION = 2.1


def streams(ctx: NodeContext, enabled: bool) -> bool:
    """Whether this run streams; an Agent run as another agent's tool does not (not recorded from n8n)."""
    return enabled and ctx.action is None and float(ctx.node.typeVersion) >= MIN_VERSION and ctx.is_streaming()


def token_sender(ctx: NodeContext, item_index: int, sink: list[str]) -> Callable[[str], None]:
    """The model's text pieces as `item` chunks (empty pieces are not sent, as n8n's), kept in `sink`."""

    def send(text: str) -> None:
        if text:
            sink.append(text)
            ctx.send_chunk("item", item_index, text)

    return send


def tool_call_log(name: str, args: Any, content: str) -> str:
    """n8n's step log of a tool call made while streaming."""
    return content or f"Calling {name} with input: {json.dumps(args, ensure_ascii=False, separators=(',', ':'))}"
