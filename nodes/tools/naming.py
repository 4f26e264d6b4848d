"""Tool names derived from node names, as n8n does: characters models reject become `_`."""

from __future__ import annotations

import re


def node_name_to_tool_name(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name.strip()) or "tool"
