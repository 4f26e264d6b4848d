"""Tool names derived from node names, as n8n does: characters models reject become `_`."""

from __future__ import annotations

import re
from functools import lru_cache

_REJECTED = re.compile(r"[^a-zA-Z0-9_-]")


@lru_cache(maxsize=4096)  # a pure function of the name, asked for at every agent round
def node_name_to_tool_name(name: str) -> str:
    return _REJECTED.sub("_", name.strip()) or "tool"
