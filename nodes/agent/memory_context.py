"""What the Agent saves to its memory after a final answer. n8n's v3 agent (saveToMemory) saves
only a non-empty answer, prefixed with the tool calls of this run when there were any
(`[Used tools: Tool: <name>, Input: <JSON input>, Result: <observation>; ...] <answer>`), so the
next turn knows what the tools said; its v1/v2 agents (LangChain's executor) save every answer as
it is."""

from __future__ import annotations

from typing import Any, Iterable

from engine.chat import ChatMemory

from .steps import used_tools


async def remember(memory: ChatMemory | None, prompt: str, output: str, steps: Iterable[dict[str, Any]],
                   v3: bool = True) -> None:
    if memory is None:
        return
    if not v3:
        await memory.save_context(prompt, output)
        return
    if not output:
        return
    steps = list(steps)
    await memory.save_context(prompt, f"[Used tools: {used_tools(steps)}] {output}" if steps else output)
