"""The node types mini-n8n ships, grouped by role. Imports engine only, never Qt.

Each type is named here by its n8n type id and where its class lives, so a registry can know
every type while importing only the modules a workflow uses (a run of a scripted agent never
loads the HTTP client, the MCP SDK or llama.cpp).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.node_type import NodeType

# type id -> "module:Class", in palette order
BUILTIN_NODE_CLASSES: dict[str, str] = {
    "n8n-nodes-base.manualTrigger": "nodes.triggers.manual_trigger:ManualTrigger",
    "@n8n/n8n-nodes-langchain.chatTrigger": "nodes.triggers.chat_trigger:ChatTrigger",
    "n8n-nodes-base.webhook": "nodes.triggers.webhook:WebhookTrigger",
    "n8n-nodes-base.formTrigger": "nodes.triggers.form_trigger:FormTrigger",
    "n8n-nodes-base.scheduleTrigger": "nodes.triggers.schedule_trigger:ScheduleTrigger",
    "@n8n/n8n-nodes-langchain.agent": "nodes.agent.tools_agent:ToolsAgent",
    "@n8n/n8n-nodes-langchain.agentTool": "nodes.agent.agent_tool:AgentTool",
    "@n8n/n8n-nodes-langchain.chainLlm": "nodes.chains.chain_llm:ChainLlm",
    "mini-n8n.lmChatScripted": "nodes.models.scripted:ScriptedChatModel",
    "@n8n/n8n-nodes-langchain.lmChatOpenAi": "nodes.models.openai_chat:OpenAIChatModel",
    "@n8n/n8n-nodes-langchain.lmChatOllama": "nodes.models.ollama_chat:OllamaChatModel",
    "@n8n/n8n-nodes-langchain.lmChatAnthropic": "nodes.models.anthropic_chat:AnthropicChatModel",
    "@n8n/n8n-nodes-langchain.lmChatOpenRouter": "nodes.models.openai_compatible:OpenRouterChatModel",
    "@n8n/n8n-nodes-langchain.lmChatDeepSeek": "nodes.models.openai_compatible:DeepSeekChatModel",
    "@n8n/n8n-nodes-langchain.lmChatGroq": "nodes.models.openai_compatible:GroqChatModel",
    "@n8n/n8n-nodes-langchain.lmChatGoogleGemini": "nodes.models.gemini_chat:GoogleGeminiChatModel",
    "@n8n/n8n-nodes-langchain.lmChatMistralCloud": "nodes.models.mistral_chat:MistralCloudChatModel",
    "mini-n8n.lmChatLocal": "nodes.models.local_model:LocalChatModel",
    "@n8n/n8n-nodes-langchain.memoryBufferWindow": "nodes.memory.buffer_window:BufferWindowMemory",
    "@n8n/n8n-nodes-langchain.memoryPostgresChat": "nodes.memory.postgres_chat:PostgresChatMemory",
    "@n8n/n8n-nodes-langchain.memoryRedisChat": "nodes.memory.redis_chat:RedisChatMemory",
    "mini-n8n.memorySqliteChat": "nodes.memory.sqlite_chat:SqliteChatMemory",
    "@n8n/n8n-nodes-langchain.toolCalculator": "nodes.tools.calculator:Calculator",
    "@n8n/n8n-nodes-langchain.toolThink": "nodes.tools.think:ThinkTool",
    "@n8n/n8n-nodes-langchain.toolHttpRequest": "nodes.tools.http_request:HttpRequestTool",
    "@n8n/n8n-nodes-langchain.toolCode": "nodes.tools.code_tool:CodeTool",
    "@n8n/n8n-nodes-langchain.mcpClientTool": "nodes.tools.mcp_client:McpClientTool",
    "@n8n/n8n-nodes-langchain.outputParserStructured": "nodes.parsers.structured_output:StructuredOutputParserNode",
    "@n8n/n8n-nodes-langchain.outputParserAutofixing": "nodes.parsers.autofixing:AutoFixingOutputParser",
    "n8n-nodes-base.set": "nodes.core.set_fields:SetFields",
    "n8n-nodes-base.if": "nodes.flow.if_node:IfNode",
    "n8n-nodes-base.switch": "nodes.flow.switch_node:SwitchNode",
    "n8n-nodes-base.filter": "nodes.flow.filter_node:FilterNode",
    "n8n-nodes-base.merge": "nodes.flow.merge_node:MergeNode",
    "n8n-nodes-base.splitInBatches": "nodes.flow.loop_over_items:LoopOverItemsNode",
    "n8n-nodes-base.limit": "nodes.flow.limit:LimitNode",
    "n8n-nodes-base.splitOut": "nodes.flow.split_out:SplitOutNode",
    "n8n-nodes-base.aggregate": "nodes.flow.aggregate:AggregateNode",
    "n8n-nodes-base.code": "nodes.flow.code_node:CodeNode",
    "n8n-nodes-base.executeWorkflow": "nodes.flow.execute_workflow:ExecuteWorkflowNode",
    "n8n-nodes-base.executeWorkflowTrigger": "nodes.flow.execute_workflow:ExecuteWorkflowTrigger",
    "n8n-nodes-base.noOp": "nodes.flow.no_op:NoOpNode",
    "n8n-nodes-base.stopAndError": "nodes.flow.stop_and_error:StopAndErrorNode",
    "n8n-nodes-base.wait": "nodes.flow.wait_node:WaitNode",
    "n8n-nodes-base.httpRequest": "nodes.http.node:HttpRequestNode",
    "n8n-nodes-base.httpRequestTool": "nodes.http.node:HttpRequestToolNode",
    "n8n-nodes-base.respondToWebhook": "nodes.triggers.respond_to_webhook:RespondToWebhook",
    "n8n-nodes-base.stickyNote": "nodes.core.sticky_note:StickyNote",
}


def load_class(where: str) -> type[NodeType]:
    """The class named by a "module:Class" entry of BUILTIN_NODE_CLASSES (imports its module)."""
    module, _, name = where.partition(":")
    return vars(importlib.import_module(module))[name]


def __getattr__(name: str) -> list[type[NodeType]]:
    """`nodes.BUILTIN_NODE_TYPES`: every class, imported when first asked for."""
    if name == "BUILTIN_NODE_TYPES":
        return [load_class(where) for where in BUILTIN_NODE_CLASSES.values()]
    raise AttributeError(f"module 'nodes' has no attribute {name!r}")
