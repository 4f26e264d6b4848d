"""The Local Model's prompt: the conversation in the model's own chat template, tools described in text.

A GGUF file may carry its chat template (`tokenizer.chat_template`, Jinja); if it does not, as the
bundled Gemma 3 270M does not, llama.cpp's built-in template for the model's architecture is used
(`gemma3` -> llama.cpp's `gemma`), and ChatML, llama.cpp's own default, for an architecture it
does not know. Tool calls and tool results are written as plain turns (templates of small models
have no tool roles): a call is the JSON the grammar makes the model write, a result a user turn.
"""

from __future__ import annotations

import ctypes
import json
import re
from typing import Any

from engine.chat import ChatMessage, ToolSpec
from engine.observation import readable  # a small model reads a tool's answer, not n8n's items JSON

CALL_FORMAT = '{"tool": "<tool name>", "arguments": {<arguments>}}'


def call_text(name: str, args: dict[str, Any] | str) -> str:
    """A tool call as the model writes it under the decision grammar."""
    return json.dumps({"tool": name, "arguments": args}, ensure_ascii=False)


def tools_text(tools: list[ToolSpec]) -> str:
    """The tools and the reply protocol, added to the system turn."""
    lines = ["You can call these tools:"]
    for tool in tools:
        lines.append(f"- {tool.name}: {tool.description.strip()}")
        lines.append(f"  arguments (JSON schema): {json.dumps(tool.parameters, ensure_ascii=False)}")
    lines.append(f"To call a tool, reply with only this JSON: {CALL_FORMAT}")
    lines.append("Otherwise reply with your answer in plain text.")
    return "\n".join(lines)


def conversation_turns(messages: list[ChatMessage], tools: list[ToolSpec]) -> list[dict[str, str]]:
    """System, user and assistant turns only: calls as their JSON, results as user turns naming the
    tool; adjacent turns of one role are joined, since many templates require alternating roles."""
    names = {c.id: c.name for m in messages for c in (m.tool_calls or [])}
    system = [m.content for m in messages if m.role == "system" and m.content.strip()]
    if tools:
        system.append(tools_text(tools))
    turns: list[dict[str, str]] = [{"role": "system", "content": "\n\n".join(system)}] if system else []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            name = names.get(m.tool_call_id or "", "the")
            role, content = "user", f"The {name} tool returned: {readable(m.content)}\nNow answer my question."
        elif m.role == "assistant" and m.tool_calls:
            calls = "\n".join(call_text(c.name, c.args) for c in m.tool_calls)
            role, content = "assistant", "\n".join(part for part in (m.content.strip(), calls) if part)
        else:
            role, content = m.role, m.content
        if turns and turns[-1]["role"] == role and role != "system":
            turns[-1]["content"] += "\n\n" + content
        else:
            turns.append({"role": role, "content": content})
    return turns


class ChatTemplate:
    """Renders turns into a prompt the way the loaded model expects; `source` says which template."""

    def __init__(self, llama: Any) -> None:
        self.llama = llama
        self.bos = _token_text(llama, llama.token_bos())
        jinja = (llama.metadata or {}).get("tokenizer.chat_template")
        self._jinja: Any = None
        if jinja:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            self._jinja = Jinja2ChatFormatter(template=jinja, eos_token=_token_text(llama, llama.token_eos()),
                                              bos_token=self.bos, add_generation_prompt=True)
            self.source = "the model file's chat template"
            self._builtin = ""
        else:
            arch = str((llama.metadata or {}).get("general.architecture", ""))
            self._builtin = next((name for name in (arch, re.sub(r"\d+$", "", arch)) if name and _builtin_known(name)), "chatml")
            self.source = f"llama.cpp's built-in '{self._builtin}' template"

    def prompt(self, turns: list[dict[str, str]]) -> str:
        if self._jinja is not None:
            from jinja2 import TemplateError

            try:
                return self._jinja(messages=turns).prompt
            except TemplateError as exc:
                raise ValueError(f"the model file's chat template failed: {exc}") from None
        return _apply_builtin(self._builtin, turns)

    def tokens(self, turns: list[dict[str, str]]) -> list[int]:
        """The prompt's tokens with exactly one BOS, whether or not the template wrote it."""
        text = self.prompt(turns)
        add_bos = not (self.bos and text.startswith(self.bos))
        return self.llama.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)


def _token_text(llama: Any, token: int) -> str:
    if token < 0:
        return ""
    return llama.detokenize([token], special=True).decode("utf-8", "replace")


def _builtin_known(name: str) -> bool:
    try:
        _apply_builtin(name, [{"role": "user", "content": "x"}])
    except ValueError:
        return False
    return True


def _apply_builtin(name: str, turns: list[dict[str, str]]) -> str:
    import llama_cpp

    chat = (llama_cpp.llama_chat_message * len(turns))(
        *[llama_cpp.llama_chat_message(role=t["role"].encode(), content=t["content"].encode()) for t in turns]
    )
    size = 256 + 2 * sum(len(t["content"].encode()) for t in turns)
    for _ in range(2):
        buf = ctypes.create_string_buffer(size)
        n = llama_cpp.llama_chat_apply_template(name.encode(), chat, len(turns), True, buf, size)
        if n < 0:
            raise ValueError(f"llama.cpp has no built-in chat template '{name}'")
        if n <= size:
            return buf.raw[:n].decode("utf-8", "replace")
        size = n
    raise ValueError(f"llama.cpp's '{name}' template kept growing")
