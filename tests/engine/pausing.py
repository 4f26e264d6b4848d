"""Run an execution under the debugger until it pauses, then leave it stored paused there (as
`mini-n8n run --break` does), so a test can copy its state and continue it elsewhere."""

from __future__ import annotations

import asyncio
from typing import Any

from engine.debugger import Breakpoints, Debugger
from engine.executor import Execution
from engine.hooks import ExecutionPaused
from engine.run_data import ExecutionState


async def run_to_pause(execution: Execution, breakpoints: Breakpoints,
                       seen: list[dict[str, Any]] | None = None) -> ExecutionState:
    """Run until the first pause point `breakpoints` stop at (status "paused"), or the end."""
    execution.debugger = Debugger(breakpoints)
    loop = asyncio.get_running_loop()

    def on_event(event: object) -> None:
        if isinstance(event, ExecutionPaused):
            if seen is not None:
                seen.append(dict(event.where))
            loop.call_soon(execution.detach)

    execution.hooks.add(on_event)
    return await execution.run()


async def hold_at_pause(execution: Execution, breakpoints: Breakpoints) -> asyncio.Task[ExecutionState]:
    """Run until the first pause point `breakpoints` stop at and stay paused there, in this
    process (as the editor's debugger does); returns the run's task, which still owns the execution."""
    execution.debugger = Debugger(breakpoints)
    paused = asyncio.Event()
    execution.hooks.add(lambda event: paused.set() if isinstance(event, ExecutionPaused) else None)
    task = asyncio.create_task(execution.run())
    await paused.wait()
    return task


def at_boundaries(*main_nodes: str) -> Breakpoints:
    """Every pause point where the execution stack is exact: before each of `main_nodes`, before
    each tool runs and after each tool result or error."""
    return Breakpoints(nodes=list(main_nodes), before_tool=True, after_tool_result=True, on_tool_error=True)
