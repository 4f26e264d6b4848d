"""Small builders for workflow documents used across the test suite."""

from __future__ import annotations

import functools
from typing import Any

from engine.workflow import Workflow, parse_workflow

AGENT = "@n8n/n8n-nodes-langchain.agent"
CHAT_TRIGGER = "@n8n/n8n-nodes-langchain.chatTrigger"
MANUAL_TRIGGER = "n8n-nodes-base.manualTrigger"
SCRIPTED = "mini-n8n.lmChatScripted"
MEMORY = "@n8n/n8n-nodes-langchain.memoryBufferWindow"
CALCULATOR = "@n8n/n8n-nodes-langchain.toolCalculator"
SET = "n8n-nodes-base.set"


@functools.lru_cache(maxsize=None)
def newest_version(type_: str) -> float:
    """The typeVersion the editor gives a new node of this type (1 for types we do not know)."""
    from engine.registry import builtin_registry

    registry = builtin_registry()
    return registry.get(type_).version if registry.knows(type_) else 1


def node(name: str, type_: str, parameters: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A node as a new file has it: the type's newest typeVersion unless `typeVersion=` says otherwise."""
    return {"id": f"id-{name}", "name": name, "type": type_, "typeVersion": newest_version(type_), "position": [0, 0],
            "parameters": parameters or {}, **extra}


def link(connections: dict[str, Any], source: str, target: str, conn_type: str = "main") -> None:
    outputs = connections.setdefault(source, {}).setdefault(conn_type, [[]])
    outputs[0].append({"node": target, "type": conn_type, "index": 0})


def tool_call(name: str, args: dict[str, Any] | str, id_: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "args": args}
    if id_ is not None:
        call["id"] = id_
    return call


def agent_workflow(
    replies: list[dict[str, Any]],
    *,
    tools: list[tuple[str, str, dict[str, Any]]] | None = None,
    memory: bool = False,
    agent_options: dict[str, Any] | None = None,
    agent_params: dict[str, Any] | None = None,
    trigger: str = "chat",
    model_options: dict[str, Any] | None = None,
) -> Workflow:
    """Trigger -> AI Agent with a Scripted model, optional Simple Memory and tools (name, type, params)."""
    nodes = []
    connections: dict[str, Any] = {}
    if trigger == "chat":
        nodes.append(node("Chat", CHAT_TRIGGER))
        link(connections, "Chat", "AI Agent")
    else:
        nodes.append(node("Start", MANUAL_TRIGGER))
        link(connections, "Start", "AI Agent")
    # the system message the editor writes into a new agent (n8n sends none when options lack it)
    params = {"promptType": "auto", "options": {"systemMessage": "You are a helpful assistant", **(agent_options or {})}}
    params.update(agent_params or {})
    nodes.append(node("AI Agent", AGENT, params))
    model_params: dict[str, Any] = {"replies": replies}
    if model_options:
        model_params["options"] = model_options
    nodes.append(node("Model", SCRIPTED, model_params))
    link(connections, "Model", "AI Agent", "ai_languageModel")
    if memory:
        nodes.append(node("Memory", MEMORY, {"contextWindowLength": 5}))
        link(connections, "Memory", "AI Agent", "ai_memory")
    for name, type_, tool_params in tools if tools is not None else [("Calculator", CALCULATOR, {})]:
        nodes.append(node(name, type_, tool_params))
        link(connections, name, "AI Agent", "ai_tool")
    _lay_out(nodes)
    return parse_workflow({"name": "test agent", "nodes": nodes, "connections": connections})


def items_agent_workflow(items: int, rounds: int) -> Workflow:
    """Manual Trigger with `items` pinned items -> AI Agent, `rounds` Calculator rounds for each item
    then an answer each: the Agent holds the items' conversations side by side, calling its model
    for each in turn."""
    replies = [{"toolCalls": [tool_call("Calculator", {"input": f"{i} * 2"})], "usage": {"promptTokens": 10, "completionTokens": 5}}
               for i in range(items * rounds)]
    replies += [{"text": "done", "usage": {"promptTokens": 10, "completionTokens": 1}}] * items
    workflow = agent_workflow(replies, trigger="manual", agent_params={"promptType": "define", "text": "Double it"},
                              agent_options={"maxIterations": rounds + 5})
    workflow.pinData["Start"] = [{"json": {"n": i}} for i in range(items)]
    return workflow


def _lay_out(nodes: list[dict[str, Any]]) -> None:
    """Trigger and Agent in a row, sub-nodes in a row below (as the editor would place them)."""
    below = 0
    for n in nodes:
        if n["name"] in ("Chat", "Start"):
            n["position"] = [0, 0]
        elif n["name"] == "AI Agent":
            n["position"] = [280, 0]
        else:
            n["position"] = [180 + 160 * below, 240]
            below += 1
