"""The Agent's scratchpad: steps rebuilt from an EngineResponse, and steps turned into messages.

All state between rounds is in the request metadata (plain JSON), keyed by item index as a
string so that a JSON round trip gives back the same dict. Within a process the steps of one
item are a window on an append-only log (engine.shared_log): a round adds its new steps and
their messages without copying or rebuilding the earlier ones, and every earlier request keeps
the window it was made with; the steps n8n's v3 agent gives an item after the first (the first
item's, then its own) are on a log that stands on the first item's. After a resume the stored
list becomes a new log once.
"""

from __future__ import annotations

import weakref
from typing import Any, Iterable

from engine.chat import ChatMessage, ToolCall
from engine.observation import items_observation, js_json, observation
from engine.requests import Action, EngineResponse
from engine.shared_log import LogWindow, SharedLog
from nodes.tools.naming import node_name_to_tool_name

# per steps log: how many of its steps are indexed, and the first position of each toolCallId
_CALL_IDS: "weakref.WeakKeyDictionary[SharedLog, tuple[int, dict[str, int]]]" = weakref.WeakKeyDictionary()


def make_step(tool_call_id: str, tool: str, tool_input: Any, observed: str, log: str = "", error: bool = False) -> dict[str, Any]:
    """One finished tool call: what the model asked for and what came back (mini-n8n ToolCallStep)."""
    step = {"toolCallId": tool_call_id, "tool": tool, "toolInput": tool_input, "observation": observed, "log": log}
    if error:
        step["error"] = True
    return step


def _has_call(steps: LogWindow, tool_call_id: str) -> bool:
    """Whether `steps` holds a step for `tool_call_id` (an index per log of its own steps, kept up
    to date; a log that starts with another's first steps asks that one for those)."""
    log: SharedLog | None = steps.log
    end = steps.length
    while log is not None and end > 0:
        if end > log.start:
            indexed, ids = _CALL_IDS.get(log, (0, {}))
            items = log.items
            if indexed < len(items):
                for position in range(indexed, len(items)):
                    ids.setdefault(items[position]["toolCallId"], log.start + position)
                _CALL_IDS[log] = (len(items), ids)
            if ids.get(tool_call_id, end) < end:
                return True
            end = log.start
        log = log.base
    return False


def earlier_steps(response: EngineResponse | None, item_index: int) -> LogWindow:
    """The steps of earlier rounds as the last request carried them (a window, or a stored list):
    per item (keyed by its index), or, as n8n's v3 agent carries them, one list every item reads."""
    if response is None:
        return LogWindow.of(())
    carried = response.metadata.get("previousRequests")
    found = carried.get(str(item_index), ()) if isinstance(carried, dict) else carried if carried is not None else ()
    return found if isinstance(found, LogWindow) else LogWindow.of(found)


def n8n_v3_step(action: Action, data: dict[str, Any]) -> dict[str, Any]:
    """A finished tool call as n8n's v3 agent rebuilds it (its buildSteps): the call the model
    reads next is `{...input, id}` under the tool node's name, after a message `Calling <node> with
    input: …`; the observation is the tool's output items as JSON."""
    args = {**action.input, "id": action.id}
    content = f"Calling {action.node_name} with input: {js_json(args)}"
    given = args.get("input")
    tool_input = given if isinstance(given, str) and given else {k: v for k, v in args.items() if k not in ("id", "log", "type")}
    text, failed = items_observation(data)
    step = make_step(action.id, node_name_to_tool_name(action.node_name), tool_input, text, args.get("log") or content, failed)
    step.update(args=args, content=content, type=args.get("type") or "tool_call")
    return step


def build_steps(response: EngineResponse | None, item_index: int, n8n_v3: bool = False) -> LogWindow:
    """Steps of earlier rounds from the metadata, plus the tool results that just arrived (as
    n8n's v3 agent makes them with `n8n_v3`, else as its LangChain agents of v1/v2 do)."""
    steps = earlier_steps(response, item_index)
    if response is None:
        return steps
    new: list[dict[str, Any]] = []
    seen: set[str] = set()
    for answer in response.action_responses:
        action = answer.action
        if action.metadata.get("itemIndex") != item_index or action.id in seen or _has_call(steps, action.id):
            continue
        seen.add(action.id)
        if n8n_v3:
            new.append(n8n_v3_step(action, answer.data))
            continue
        text, failed = observation(answer.data)
        tool_input = {k: v for k, v in action.input.items() if not (k == "tool" and action.metadata.get("isFromToolkit"))}
        new.append(
            make_step(action.id, str(action.metadata.get("toolName", action.node_name)), tool_input, text,
                      action.metadata.get("log", ""), failed)
        )
    return steps.extended(new) if new else steps


def _pairs(steps: Iterable[dict[str, Any]]) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for step in steps:
        key = step["toolCallId"]
        args = step.get("args", step["toolInput"])
        # n8n's v3 agent replays a call as an AIMessage whose text is `Calling <node> with input: …`
        out.append(ChatMessage(role="assistant", content=step.get("content", ""),
                               toolCalls=[ToolCall(id=key, name=step["tool"], args=args)]))
        out.append(ChatMessage(role="tool", content=step["observation"], toolCallId=key))
    return out


def _same_head(a: list[ChatMessage], b: list[ChatMessage]) -> bool:
    return len(a) == len(b) and all(x is y or x == y for x, y in zip(a, b))


def scratchpad_messages(head: list[ChatMessage], steps: LogWindow, memo: dict[str, Any]) -> LogWindow:
    """`head` (system, history, user) then each step as an assistant message with the call and a
    tool message with the result: a window on a log of messages kept in `memo` (an execution-wide
    cache), so a round builds the messages of its new steps only. Steps on a log that starts with
    another log's steps (n8n's v3 agent gives each item after the first the first item's steps
    plus its own) get messages on a log that starts with that log's messages."""
    if "logs" not in memo or not _same_head(memo["head"], head):
        memo["head"], memo["logs"] = list(head), {}
    made: dict[SharedLog, tuple[SharedLog, int]] = memo["logs"]
    messages = _messages_for(steps.log, steps.length, memo["head"], made)
    memo["logs"] = {log: made[log] for log, _, _ in steps.segments() if log in made} or made
    return LogWindow(messages, len(head) + 2 * steps.length)


def _messages_for(steps: SharedLog, upto: int, head: list[ChatMessage],
                  made: dict[SharedLog, tuple[SharedLog, int]]) -> SharedLog:
    """The message log of the steps log `steps`, holding the messages of its first `upto` steps at
    least; `made` holds each steps log's message log and how many of its steps that has."""
    found = made.get(steps)
    if found is None:
        if steps.base is not None and steps.start > 0:
            messages = _messages_for(steps.base, steps.start, head, made).after(len(head) + 2 * steps.start)
        else:
            messages = SharedLog(head)
        found = (messages, steps.start)
    messages, count = found
    if count < upto:
        messages.items.extend(_pairs(steps.items[count - steps.start:upto - steps.start]))
        count = upto
    made[steps] = (messages, count)
    return messages


def cached_message(memo: dict[str, Any], role: str, content: str) -> ChatMessage:
    """The same message object as last round when its text is the same (keeps runs' JSON shared)."""
    found = memo.get(role)
    if found is None or found.content != content:
        found = memo[role] = ChatMessage(role=role, content=content)  # type: ignore[arg-type]
    return found


def _ai_message(content: str, tool_call: dict[str, Any]) -> dict[str, Any]:
    """An AIMessage with one tool call, as LangChain serialises it (n8n's `messageLog`)."""
    return {
        "lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "AIMessage"],
        "kwargs": {"content": content, "tool_calls": [tool_call], "invalid_tool_calls": [],
                   "additional_kwargs": {}, "response_metadata": {}},
    }


def n8n_v3_intermediate_steps(steps: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """n8n's v3 `intermediateSteps`: {action: {tool, toolInput, log, messageLog, toolCallId, type}, observation}."""
    out = []
    for s in steps:
        args = s.get("args")
        if args is None:  # a call refused before it ran (arguments not fitting the schema)
            args = {**(s["toolInput"] if isinstance(s["toolInput"], dict) else {"input": s["toolInput"]}), "id": s["toolCallId"]}
        content = s.get("content") or s.get("log", "")
        call = {"id": s["toolCallId"], "name": s["tool"], "args": args, "type": "tool_call", "additional_kwargs": {}}
        out.append({
            "action": {"tool": s["tool"], "toolInput": s["toolInput"], "log": s.get("log") or content,
                       "messageLog": [_ai_message(content, call)], "toolCallId": s["toolCallId"],
                       "type": s.get("type", "tool_call")},
            "observation": s["observation"],
        })
    return out


def used_tools(steps: Iterable[dict[str, Any]]) -> str:
    """What n8n's v3 agent saves to memory about the tools it used, before its answer."""
    return "; ".join(f"Tool: {s['tool']}, Input: {js_json(s['toolInput'])}, Result: {s['observation']}" for s in steps)


def intermediate_steps(steps: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """n8n's v1/v2 `intermediateSteps` shape: {action: {tool, toolInput, toolCallId, log}, observation}."""
    return [
        {
            "action": {"tool": s["tool"], "toolInput": s["toolInput"], "toolCallId": s["toolCallId"], "log": s.get("log", "")},
            "observation": s["observation"],
        }
        for s in steps
    ]
