"""What the Agent saves to its memory after a final answer, as n8n's saveToMemory does: the
answer, prefixed with the tool calls of this run when there were any
(`[Used tools: Tool: <name>, Input: <JSON input>, Result: <observation>; ...] <answer>`), so the
next turn knows what the tools said. An empty answer is not saved."""

from __future__ import annotations

from typing import Any, Iterable

from engine.chat import ChatMemory

from .output_parser import js_stringify


def with_tool_context(output: str, steps: Iterable[dict[str, Any]]) -> str:
    used = [f"Tool: {s['tool']}, Input: {js_stringify(s['toolInput'])}, Result: {s['observation']}" for s in steps]
    return f"[Used tools: {'; '.join(used)}] {output}" if used else output


async def remember(memory: ChatMemory | None, prompt: str, output: str, steps: Iterable[dict[str, Any]]) -> None:
    if memory is None or not output:
        return
    await memory.save_context(prompt, with_tool_context(output, steps))
