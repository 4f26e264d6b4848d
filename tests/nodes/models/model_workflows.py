"""Agent workflows whose Chat Model is a real model node (OpenAI, Ollama, Local) instead of the Scripted one."""

from __future__ import annotations

from typing import Any

from engine.executor import Engine
from engine.hooks import Hooks, TokenEvent
from engine.run_data import ExecutionState
from engine.workflow import Workflow, parse_workflow
from nodes.triggers.chat_trigger import chat_item
from tests.builders import SCRIPTED, agent_workflow

OPENAI = "@n8n/n8n-nodes-langchain.lmChatOpenAi"
OLLAMA = "@n8n/n8n-nodes-langchain.lmChatOllama"
LOCAL = "mini-n8n.lmChatLocal"


def with_model(
    model_type: str,
    params: dict[str, Any],
    *,
    credentials: dict[str, Any] | None = None,
    tools: list[tuple[str, str, dict[str, Any]]] | None = None,
    memory: bool = False,
    agent_options: dict[str, Any] | None = None,
) -> Workflow:
    """Chat Trigger -> AI Agent (Calculator by default) with the model node "Model" of `model_type`."""
    doc = agent_workflow([], tools=tools, memory=memory, agent_options=agent_options).model_dump(mode="json", by_alias=True)
    for node in doc["nodes"]:
        if node["type"] == SCRIPTED:
            node["type"] = model_type
            node["parameters"] = params
            if credentials:
                node["credentials"] = credentials
    return parse_workflow(doc)


class TokenLog:
    """Collects the token events of one execution, per node."""

    def __init__(self) -> None:
        self.tokens: list[tuple[str, str]] = []

    def __call__(self, event: Any) -> None:
        if isinstance(event, TokenEvent):
            self.tokens.append((event.node, event.text))

    def text(self, node: str = "Model") -> str:
        return "".join(t for n, t in self.tokens if n == node)


async def chat(engine: Engine, workflow: Workflow, message: str, tokens: TokenLog | None = None) -> ExecutionState:
    hooks = Hooks(tokens) if tokens is not None else None
    return await engine.run(workflow, start="Chat", items=[chat_item(message, "s1")], hooks=hooks)


def model_runs(state: ExecutionState, node: str = "Model") -> list[Any]:
    return state.run_data.get(node, [])
