"""Grammars (llama.cpp GBNF) that bound what the Local Model can write, and reading what it wrote.

A tool decision is either one JSON call of a declared tool whose `arguments` follow that tool's
JSON schema, or an answer; an answer starts with a character that is neither blank nor `{`, so
it is never empty and never mistaken for a call. The model can end its turn only where the
grammar is complete, so only a token limit can cut a call short, and that is reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine.chat import ToolSpec

ANSWER_RULE = 'answer ::= [^{ \\t\\r\\n] .*'
ANSWER_GRAMMAR = f"root ::= answer\n{ANSWER_RULE}"
ANY_OBJECT = {"type": "object", "additionalProperties": True}


def call_schema(tools: list[ToolSpec]) -> dict[str, Any]:
    """One JSON object per tool: {"tool": <its name>, "arguments": <its parameters' schema>}."""
    return {
        "oneOf": [
            {
                "type": "object",
                "properties": {"tool": {"const": tool.name}, "arguments": _arguments_schema(tool)},
                "required": ["tool", "arguments"],
                "additionalProperties": False,
            }
            for tool in tools
        ]
    }


def _arguments_schema(tool: ToolSpec) -> dict[str, Any]:
    schema = tool.parameters or {}
    return schema if schema.get("type", "object") == "object" else ANY_OBJECT


def decision_grammar(tools: list[ToolSpec], *, must_call: bool = False) -> str:
    """GBNF for a reply that calls one of `tools` or (unless `must_call`) answers in text."""
    from llama_cpp.llama_grammar import SchemaConverter

    converter = SchemaConverter(prop_order={"tool": 0, "arguments": 1}, allow_fetch=False, dotall=False, raw_pattern=False)
    converter.visit(converter.resolve_refs(call_schema(tools), "tools"), "call")
    root = "root ::= call" if must_call else f"root ::= call | answer\n{ANSWER_RULE}"
    return f"{root}\n{converter.format_grammar()}"



@dataclass(frozen=True)
class Decision:
    """What a reply under the decision grammar means: a call (tool and args) or an answer text."""

    answer: str = ""
    tool: str = ""
    args: dict[str, Any] | None = None


class UnfinishedCall(ValueError):
    """The reply began a tool call but the token limit ended it before the JSON was complete."""


def read_decision(text: str, tools: list[ToolSpec]) -> Decision:
    """The reply as a Decision; raises UnfinishedCall for a call the token limit cut short."""
    body = text.strip()
    if not body.startswith("{"):
        return Decision(answer=body)
    try:
        doc = json.loads(body)
    except ValueError:
        raise UnfinishedCall(body) from None
    names = {t.name for t in tools}
    if not isinstance(doc, dict) or doc.get("tool") not in names or not isinstance(doc.get("arguments"), dict):
        raise UnfinishedCall(body)  # the grammar allows nothing else; kept as a guard for other builds
    return Decision(tool=doc["tool"], args=doc["arguments"])
