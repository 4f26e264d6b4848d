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
from typing import Any, Sequence

from engine.chat import ChatMessage, ToolSpec
from engine.observation import readable  # a small model reads a tool's answer, not n8n's items JSON

CALL_FORMAT = '{"tool": "<tool name>", "arguments": {<arguments>}}'


def call_text(name: str, args: dict[str, Any] | str) -> str:
    """A tool call as the bundled model writes it under the decision grammar, blanks inside braces
    included (`{ "tool": ... }`): the next prompt then holds the tokens the model already
    evaluated, and llama.cpp's cache covers them. Another spacing would read the same, uncached."""
    return _spaced({"tool": name, "arguments": args})


def _spaced(value: Any) -> str:
    if isinstance(value, dict) and value:
        return "{ " + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: {_spaced(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_spaced(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


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
    if tools:  # first: the user's own instructions stay next to the conversation they steer
        system.insert(0, tools_text(tools))
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

    def tokens(self, turns: list[dict[str, str]], evaluated: Sequence[int] = ()) -> list[int]:
        """The prompt's tokens with exactly one BOS, whether or not the template wrote it.

        Where `evaluated` (the tokens llama.cpp holds) spells the prompt's start, its tokens are
        kept: a call the model wrote as `{` `"` reads back as the same text, but the tokenizer
        may write `{"`, and llama.cpp's cache reuses only an equal run of tokens."""
        text = self.prompt(turns)
        add_bos = not (self.bos and text.startswith(self.bos))
        data = text.encode("utf-8")
        fresh = self.llama.tokenize(data, add_bos=add_bos, special=True)
        head = fresh[:1] if add_bos else []
        if list(evaluated[: len(head)]) != head:
            return fresh
        body = list(evaluated[len(head):])
        kept = self._spelled_prefix(body, data)
        if kept == 0:
            return fresh
        spelled = self.llama.detokenize(body[:kept], special=True)
        reused = head + body[:kept] + self.llama.tokenize(data[len(spelled):], add_bos=False, special=True)
        if self.llama.detokenize(reused[len(head):], special=True) != data:
            return fresh  # a tokenizer that spells a piece differently alone: no reuse
        return reused if shared_prefix(reused, evaluated) > shared_prefix(fresh, evaluated) else fresh

    def _spelled_prefix(self, tokens: list[int], data: bytes) -> int:
        """The largest k such that tokens[:k] spell a prefix of `data` (binary search: a longer
        run spells a prefix only if every shorter one does)."""
        low, high = 0, len(tokens)
        while low < high:
            mid = (low + high + 1) // 2
            if data.startswith(self.llama.detokenize(tokens[:mid], special=True)):
                low = mid
            else:
                high = mid - 1
        return low


def shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many tokens two sequences share from the start."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


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
