"""The Agent's scratchpad: steps rebuilt from an EngineResponse, and steps turned into messages.

All state between rounds is in the request metadata (plain JSON), keyed by item index as a
string so that a JSON round trip gives back the same dict.
"""

from __future__ import annotations

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
    known = {s["toolCallId"] for s in steps}
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


def steps_to_messages(steps: list[dict[str, Any]], memo: dict[str, Any] | None = None) -> list[ChatMessage]:
    """Each step becomes an assistant message with the call and a tool message with the result.

    The scratchpad is rebuilt every round, so `memo` (an execution-wide cache, derived data only)
    keeps the messages of steps already seen; a step whose content changed is built again.
    """
    out: list[ChatMessage] = []
    for step in steps:
        key = step["toolCallId"]
        cached = memo.get(key) if memo is not None else None
        if cached is not None and cached[0] is step:
            out.extend(cached[1])
            continue
        pair = (
            ChatMessage(role="assistant", content="", toolCalls=[ToolCall(id=key, name=step["tool"], args=step["toolInput"])]),
            ChatMessage(role="tool", content=step["observation"], toolCallId=key),
        )
        if memo is not None:
            memo[key] = (step, pair)
        out.extend(pair)
    return out


def intermediate_steps(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """n8n's `intermediateSteps` shape: {action: {tool, toolInput, toolCallId, log}, observation}."""
    return [
        {
            "action": {"tool": s["tool"], "toolInput": s["toolInput"], "toolCallId": s["toolCallId"], "log": s.get("log", "")},
            "observation": s["observation"],
        }
        for s in steps
    ]
