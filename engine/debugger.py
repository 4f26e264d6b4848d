"""Breakpoints and stepping: where an execution may pause, and the debugger that holds it there.

Pause points: before a main-path node runs ("node"), before a model call ("before_model"),
after the model replied ("after_model"), before a tool runs ("before_tool"), after a tool
result ("tool_result") or a tool error ("tool_error"). While paused the execution's task waits
on the debugger; Continue, Step or an edit lets it go on. A node may also leave the execution
stored "paused" at its own start until it is resumed from outside ("wait": a Wait node on a
webhook call, engine.errors.PutToWait).
"""

import asyncio
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .defaults import new_list

PauseKind = Literal["node", "before_model", "after_model", "before_tool", "tool_result", "tool_error", "wait"]
# where the debugger may stop a run ("wait" is a node's own, not a breakpoint's)
PAUSE_KINDS: tuple[str, ...] = ("node", "before_model", "after_model", "before_tool", "tool_result", "tool_error")
# points at which the execution stack is consistent, so a stored copy resumes exactly there
BOUNDARY_KINDS = frozenset({"node", "before_tool", "tool_result", "tool_error", "wait"})


class PausePoint(BaseModel):
    """Where an execution stands when it pauses, and what is pending there (`payload`)."""

    model_config = ConfigDict(populate_by_name=True, defer_build=True)  # built at the first pause, not at import

    kind: PauseKind
    node: str
    agent: str | None = None
    iteration: int | None = None
    item_index: int | None = Field(None, alias="itemIndex")
    tool_call_id: str | None = Field(None, alias="toolCallId")
    tool_name: str | None = Field(None, alias="toolName")
    payload: dict[str, Any] = Field(default_factory=dict)

    @property
    def key(self) -> str:
        """Identity of the point within its execution (the same place when a run is resumed)."""
        return "|".join(str(v) for v in (self.kind, self.node, self.agent, self.iteration, self.item_index, self.tool_call_id))

    @property
    def is_boundary(self) -> bool:
        return self.kind in BOUNDARY_KINDS

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Breakpoints(BaseModel):
    """Which pause points stop a debug run. Node breakpoints also stop a tool or model node."""

    model_config = ConfigDict(populate_by_name=True, defer_build=True)  # built at the first pause, not at import

    nodes: list[str] = Field(default_factory=new_list)
    before_model: bool = Field(False, alias="beforeModel")
    after_model: bool = Field(False, alias="afterModel")
    before_tool: bool = Field(False, alias="beforeTool")
    tools: list[str] = Field(default_factory=new_list, description="only these tools (empty: all)")
    after_tool_result: bool = Field(False, alias="afterToolResult")
    on_tool_error: bool = Field(False, alias="onToolError")
    from_iteration: int = Field(1, ge=1, alias="fromIteration")

    def matches(self, point: PausePoint) -> bool:
        if point.node in self.nodes and point.kind in ("node", "before_tool", "before_model"):
            return True
        if point.iteration is not None and point.iteration < self.from_iteration:
            return False
        if point.kind == "before_model":
            return self.before_model
        if point.kind == "after_model":
            return self.after_model
        if point.kind == "before_tool":
            return self.before_tool and (not self.tools or point.tool_name in self.tools)
        if point.kind == "tool_result":
            return self.after_tool_result and (not self.tools or point.tool_name in self.tools)
        if point.kind == "tool_error":
            return (self.on_tool_error or self.after_tool_result) and (not self.tools or point.tool_name in self.tools)
        return False


class Debugger:
    """Decides where a debug run pauses and holds it there until Continue, Step or Stop."""

    def __init__(self, breakpoints: Breakpoints | None = None, *, stepping: bool = False) -> None:
        self.breakpoints = breakpoints or Breakpoints()
        self.stepping = stepping
        self.paused_at: PausePoint | None = None
        self._future: asyncio.Future[dict[str, Any] | None] | None = None

    def wants(self, point: PausePoint) -> bool:
        return self.stepping or self.breakpoints.matches(point)

    @property
    def is_paused(self) -> bool:
        return self._future is not None and not self._future.done()

    async def hold(self, point: PausePoint) -> dict[str, Any] | None:
        """Wait here until released; returns the user's edit of the pending payload, if any."""
        self.paused_at = point
        self._future = asyncio.get_running_loop().create_future()
        try:
            return await self._future
        finally:
            self._future = None
            self.paused_at = None

    def _release(self, edit: dict[str, Any] | None) -> None:
        if self._future is None or self._future.done():
            raise RuntimeError("the execution is not paused")
        self._future.set_result(edit)

    def continue_(self, edit: dict[str, Any] | None = None) -> None:
        """Go on to the next breakpoint (F5)."""
        self.stepping = False
        self._release(edit)

    def step(self, edit: dict[str, Any] | None = None) -> None:
        """Go on to the next pause point of any kind (F10)."""
        self.stepping = True
        self._release(edit)
