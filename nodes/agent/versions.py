"""The AI Agent's typeVersions as n8n maps them: v1.x chose an agent kind with the `agent`
option (default Conversational Agent up to v1.5, Tools Agent from v1.6, only Tools Agent from
v1.8); v2 and v3 are the Tools Agent. Up to v1.2 the prompt is the `text` parameter, whose
default reads `input` (v1), `chat_input` (v1.1) or `chatInput` (v1.2)."""

from __future__ import annotations

from typing import Any

from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.run_data import Item

VERSIONS = (1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2, 2.1, 2.2, 3)

# agent kinds we run as the Tools Agent, and how n8n's own differs from it
RUN_AS_TOOLS_AGENT = {
    "toolsAgent": None,
    "conversationalAgent": (
        "n8n runs this node (agent: conversationalAgent) as its Conversational Agent, which asks the model to "
        "answer in a JSON format of its own instead of native tool calls; mini-n8n runs it as the Tools Agent, "
        "so prompts and replies can differ from n8n's"
    ),
    "openAiFunctionsAgent": (
        "n8n runs this node (agent: openAiFunctionsAgent) as its OpenAI Functions Agent; mini-n8n runs it as the "
        "Tools Agent, which calls tools the same way but words its prompt differently"
    ),
}
UNSUPPORTED = {"reActAgent": "ReAct Agent", "sqlAgent": "SQL Agent", "planAndExecuteAgent": "Plan and Execute Agent"}
_V1_PROMPT_FIELD = {1.0: "input", 1.1: "chat_input", 1.2: "chatInput"}


def agent_kind(version: float, parameters: dict[str, Any]) -> str:
    if version >= 1.8:
        return "toolsAgent"
    default = "conversationalAgent" if version <= 1.5 else "toolsAgent"
    return str(parameters.get("agent") or default)


def check_agent_kind(ctx: NodeContext) -> None:
    """Refuse the agent kinds we do not run; note where we run another kind as the Tools Agent."""
    kind = agent_kind(float(ctx.node.typeVersion), ctx.node.parameters)
    if kind in UNSUPPORTED:
        raise NodeOperationError(
            f'AI Agent "{ctx.node.name}" is set to the {UNSUPPORTED[kind]} (agent: {kind}), which mini-n8n does not '
            "support: choose the Tools Agent for it",
            node=ctx.node.name,
        )
    if kind not in RUN_AS_TOOLS_AGENT:
        raise NodeOperationError(f'The agent type "{kind}" is not supported', node=ctx.node.name)
    note = RUN_AS_TOOLS_AGENT[kind]
    if note is not None:
        ctx.note(note)


def legacy_prompt(ctx: NodeContext, text: Any, item: Item) -> Any | None:
    """Up to v1.2 the prompt is `text` whatever promptType says; None for later versions."""
    version = float(ctx.node.typeVersion)
    if version > 1.2:
        return None
    if "text" in ctx.node.parameters:
        return text
    return item.get("json", {}).get(_V1_PROMPT_FIELD.get(version, "chatInput"))


def system_message(ctx: NodeContext, given: str | None, default: str) -> str | None:
    """n8n's Tools Agent sends a system message only when the node's options set one, or, for
    typeVersions before 1.9, its default; an empty one is not sent."""
    if "systemMessage" in (ctx.node.parameters.get("options") or {}):
        return given or None
    return default if float(ctx.node.typeVersion) < 1.9 else None
