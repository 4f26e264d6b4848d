"""The connection types of n8n's AI nodes and the port specs nodes declare."""

from typing import NamedTuple

MAIN = "main"
AI_LANGUAGE_MODEL = "ai_languageModel"
AI_MEMORY = "ai_memory"
AI_TOOL = "ai_tool"
AI_OUTPUT_PARSER = "ai_outputParser"

SUB_NODE_TYPES = (AI_LANGUAGE_MODEL, AI_MEMORY, AI_TOOL, AI_OUTPUT_PARSER)
ALL_TYPES = (MAIN, *SUB_NODE_TYPES)


class PortSpec(NamedTuple):
    """One input or output port: its connection type, label, and how many links it takes."""

    type: str = MAIN
    label: str = ""
    required: bool = False
    max_connections: int | None = None  # None: any number
