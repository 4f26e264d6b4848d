"""The node types mini-n8n ships, grouped by role. Imports engine only, never Qt."""

from __future__ import annotations

from engine.node_type import NodeType

from .agent.agent_tool import AgentTool
from .agent.tools_agent import ToolsAgent
from .core.set_fields import SetFields
from .core.sticky_note import StickyNote
from .memory.buffer_window import BufferWindowMemory
from .models.local_model import LocalChatModel
from .models.ollama_chat import OllamaChatModel
from .models.openai_chat import OpenAIChatModel
from .models.scripted import ScriptedChatModel
from .tools.calculator import Calculator
from .tools.code_tool import CodeTool
from .tools.http_request import HttpRequestTool
from .tools.mcp_client import McpClientTool
from .tools.think import ThinkTool
from .triggers.chat_trigger import ChatTrigger
from .triggers.manual_trigger import ManualTrigger

BUILTIN_NODE_TYPES: list[type[NodeType]] = [
    ManualTrigger,
    ChatTrigger,
    ToolsAgent,
    AgentTool,
    ScriptedChatModel,
    OpenAIChatModel,
    OllamaChatModel,
    LocalChatModel,
    BufferWindowMemory,
    Calculator,
    ThinkTool,
    HttpRequestTool,
    CodeTool,
    McpClientTool,
    SetFields,
    StickyNote,
]
