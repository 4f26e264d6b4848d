"""The Agent's scratchpad: steps rebuilt from an EngineResponse, and steps turned into messages.

All state between rounds is in the request metadata (plain JSON), keyed by item index as a
string so that a JSON round trip gives back the same dict.
"""

from __future__ import annotations

import operator
from operator import itemgetter
from typing import Any

from engine.chat import ChatMessage, ToolCall
from engine.observation import observation
from engine.requests import EngineResponse


def make_step(tool_call_id: str, tool: str, tool_input: Any, observed: str, log: str = "", error: bool = False) -> dict[str, Any]:
    """One finished tool call: what the model asked for and what came back (mini-n8n ToolCallStep)."""
    step = {"toolCallId": tool_call_id, "tool": tool, "toolInput": tool_input, "observation": observed, "log": log}
    if error:
        step["error"] = True
    return step


def build_steps(response: EngineResponse | None, item_index: int) -> list[dict[str, Any]]:
    """Steps of earlier rounds from the metadata, plus the tool results that just arrived."""
    if response is None:
        return []
    key = str(item_index)
    steps = list((response.metadata.get("previousRequests") or {}).get(key, []))
    known = set(map(itemgetter("toolCallId"), steps))
    for answer in response.action_responses:
        action = answer.action
        if action.metadata.get("itemIndex") != item_index or action.id in known:
            continue
        text, failed = observation(answer.data)
        tool_input = {k: v for k, v in action.input.items() if not (k == "tool" and action.metadata.get("isFromToolkit"))}
        steps.append(
            make_step(action.id, str(action.metadata.get("toolName", action.node_name)), tool_input, text,
                      action.metadata.get("log", ""), failed)
        )
        known.add(action.id)
    return steps


def _pairs(steps: list[dict[str, Any]]) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for step in steps:
        key = step["toolCallId"]
        out.append(ChatMessage(role="assistant", content="", toolCalls=[ToolCall(id=key, name=step["tool"], args=step["toolInput"])]))
        out.append(ChatMessage(role="tool", content=step["observation"], toolCallId=key))
    return out


def steps_to_messages(steps: list[dict[str, Any]], memo: dict[str, Any] | None = None) -> list[ChatMessage]:
    """Each step becomes an assistant message with the call and a tool message with the result.

    The scratchpad is rebuilt every round from the metadata, so `memo` (an execution-wide cache
    of derived data) keeps the last round's messages: when this round's steps extend that
    round's (the same step objects), only the new steps are built.
    """
    if memo is None:
        return _pairs(steps)
    last_steps, last_messages = memo.get("last", ((), []))
    n = len(last_steps)
    if n and len(steps) >= n and all(map(operator.is_, steps, last_steps)):
        out = last_messages + _pairs(steps[n:])
    else:
        out = _pairs(steps)
    memo["last"] = (list(steps), out)
    return out


def cached_message(memo: dict[str, Any], role: str, content: str) -> ChatMessage:
    """The same message object as last round when its text is the same (keeps runs' JSON shared)."""
    found = memo.get(role)
    if found is None or found.content != content:
        found = memo[role] = ChatMessage(role=role, content=content)  # type: ignore[arg-type]
    return found


def intermediate_steps(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """n8n's `intermediateSteps` shape: {action: {tool, toolInput, toolCallId, log}, observation}."""
    return [
        {
            "action": {"tool": s["tool"], "toolInput": s["toolInput"], "toolCallId": s["toolCallId"], "log": s.get("log", "")},
            "observation": s["observation"],
        }
        for s in steps
    ]
