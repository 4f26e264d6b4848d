"""The scripted model both n8n and mini-n8n talk to in the parity corpus: replies are a pure
function of the request, so a recording made against real n8n is reproducible here.

- the last message is a tool result: "The result is <result>."
- the last user message holds `CALC(<expression>)` and tools are offered: a call of the first
  tool with the expression as its first parameter (n8n's Calculator calls it `input`)
- otherwise: "Echo: <last user message> [messages=<count>]" (the count shows what memory loaded)

When the Agent offers its `format_final_json_response` tool (an output parser is connected) and
no CALC is pending, the last user message may ask for the final answer:
- `STRUCT(<json>)`: a call of that tool with <json> as its arguments, as they are
- `SHOWREQ`: a call of that tool with `{"output": {"request": <text>}}`, the text being the
  request's system messages and tools as JSON with sorted keys (what n8n sent, recorded)
- `TEXT(<text>)`: <text> as a plain reply, without the tool
A prompt of the Auto-fixing Output Parser (it holds FIX_MARK) is answered with
`{"output": {"request": <the prompt>}}`, so the recorded answer shows the exact prompt n8n sent.
`REPLY(<text>)` in the last user message: <text> as the reply, whatever is offered (a chain's answer).
A request for a model other than MODELS is refused with OpenAI's 404 (a failing primary model).
`SHOWBODY` in the last user message (after the tool result when there is a CALC): the reply is the
request body as JSON with sorted keys (what n8n's OpenAI Chat Model sent, recorded), without
`stream` and `stream_options`: mini-n8n streams a reply to show its tokens as they come, n8n's CLI
does not (the one difference kept on purpose). Requests to the Responses API (/v1/responses)
are read the same way: their `input` items as messages, their tools as Chat Completions tools.

Paths under `/api/` are the REST API of tests/peers/rest_api.py (the HTTP Request node's peer).
A corpus workflow names that server `http://parity-peer.invalid` (PEER_ORIGIN): the recording and
the comparison put the running peer's origin there, and the recording writes it back as that name.

Run as a module it serves until stdin closes and prints its base URL first:
`python -m tests.parity.peer`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from typing import Any

from tests.peers.anthropic_peer import respond_messages
from tests.peers import rest_api
from tests.peers.gemini_peer import respond_generate_content
from tests.peers.http_peer import Connection, Request, Step
from tests.peers.openai_peer import OpenAIPeer

PEER_ORIGIN = "http://parity-peer.invalid"  # what corpus workflows call the peer's origin

MODEL = "gpt-4o-mini"
ANTHROPIC_MODELS = ("claude-3-5-sonnet-20240620", "claude-sonnet-4-20250514")
GEMINI_MODELS = ("gemini-2.5-flash", "gemini-pro")
MODELS = (MODEL, "o3-mini", "gpt-5-mini", "llama3-8b-8192", "llama-3.3-70b-versatile", "openai/gpt-4.1-mini", "openai/o3-mini", "deepseek-chat", "deepseek-reasoner")
_CALC = re.compile(r"CALC\((.*?)\)")
_STRUCT = re.compile(r"STRUCT\((.*)\)", re.S)
_TEXT = re.compile(r"TEXT\((.*)\)", re.S)
_REPLY = re.compile(r"REPLY\((.*?)\)(?:\n|$)", re.S)
FORMAT_TOOL = "format_final_json_response"
FIX_MARK = "Above, the Completion did not satisfy the constraints given in the Instructions."


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _anthropic_as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A Messages API body as chat messages (tool results as tool messages) and chat tools."""
    system = body.get("system")
    messages: list[dict[str, Any]] = [{"role": "system", "content": _text(system)}] if system else []
    for m in body.get("messages", []):
        content = m.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        results = [p for p in parts if isinstance(p, dict) and p.get("type") == "tool_result"]
        if results:
            messages.extend({"role": "tool", "content": _text(p.get("content"))} for p in results)
        else:
            messages.append({"role": m.get("role"), "content": _text([p for p in parts if p.get("type") == "text"])})
    tools = [{"type": "function", "function": {"name": t.get("name"), "description": t.get("description"),
                                               "parameters": t.get("input_schema")}} for t in body.get("tools") or []]
    return {**body, "messages": messages, "tools": tools}


def _gemini_as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A generateContent body as chat messages (function responses as tool messages) and chat tools."""
    system = body.get("systemInstruction") or {}
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": "".join(p.get("text", "") for p in system.get("parts", []))})
    for content in body.get("contents", []):
        parts = content.get("parts", [])
        results = [p["functionResponse"] for p in parts if "functionResponse" in p]
        if results:
            messages.extend({"role": "tool", "content": _text(r.get("response", {}).get("result"))} for r in results)
        else:
            role = "assistant" if content.get("role") == "model" else "user"
            messages.append({"role": role, "content": "".join(p.get("text", "") for p in parts if "text" in p)})
    tools = [{"type": "function", "function": {"name": d.get("name"), "description": d.get("description"),
                                               "parameters": d.get("parameters") or {}}}
             for t in body.get("tools") or [] for d in t.get("functionDeclarations", [])]
    return {**body, "messages": messages, "tools": tools}


def _as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses API body with its input items as chat messages and its tools in chat form."""
    if "input" not in body:
        return body
    messages: list[dict[str, Any]] = []
    for item in body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]:
        if item.get("type") == "function_call_output":
            messages.append({"role": "tool", "content": item.get("output")})
        elif item.get("type") == "function_call":
            messages.append({"role": "assistant", "content": ""})
        elif "role" in item:
            content = item.get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
            messages.append({"role": "system" if item["role"] == "developer" else item["role"], "content": content})
    tools = [{"type": "function", "function": {k: v for k, v in t.items() if k != "type"}} for t in body.get("tools") or []]
    return {**body, "messages": messages, "tools": tools}


def reply(request: Request) -> Step:
    original = request.json
    body = (_anthropic_as_chat(original) if request.path == "/v1/messages"
            else _gemini_as_chat(original) if request.path.startswith("/v1beta/") else _as_chat(original))
    messages = body.get("messages", [])
    last = messages[-1] if messages else {}
    final = _final_answer(body)
    if final is not None:
        return final
    users = [m for m in messages if m.get("role") == "user"]
    fixing = _text(users[-1].get("content")) if users else ""
    if FIX_MARK in fixing:  # an Auto-fixing Output Parser's prompt: echoed as the answer its schema wants
        return Step(text=json.dumps({"output": {"request": fixing}}, ensure_ascii=False), usage=(10, 5))
    replied = _REPLY.search(_text(users[-1].get("content")) if users else "")
    if replied and last.get("role") != "tool":
        return Step(text=replied.group(1), usage=(10, 5))
    asked = _text(users[-1].get("content")) if users else ""
    if "SHOWBODY" in asked and (last.get("role") == "tool" or not _CALC.search(asked)):
        echoed = {k: v for k, v in original.items() if k not in ("stream", "stream_options")}
        return Step(text=json.dumps(echoed, sort_keys=True, ensure_ascii=False), usage=(10, 5))
    if last.get("role") == "tool":
        return Step(text=f"The result is {_text(last.get('content'))}.", usage=(10, 5))
    users = [m for m in messages if m.get("role") == "user"]
    prompt = _text(users[-1].get("content")) if users else ""
    calc = _CALC.search(prompt)
    tools = body.get("tools") or []
    if calc and tools:
        function = tools[0]["function"]
        field = next(iter((function.get("parameters") or {}).get("properties") or {"input": None}))
        return Step(tool_calls=[{"id": "call_parity_1", "name": function["name"], "arguments": {field: calc.group(1)}}],
                    usage=(10, 5))
    return Step(text=f"Echo: {prompt} [messages={len(messages)}]", usage=(10, 5))


def _final_answer(body: dict[str, Any]) -> Step | None:
    """The final answer asked for by STRUCT/SHOWREQ/TEXT when the format tool is offered."""
    messages = body.get("messages", [])
    tools = body.get("tools") or []
    if not any(t.get("function", {}).get("name") == FORMAT_TOOL for t in tools):
        return None
    users = [m for m in messages if m.get("role") == "user"]
    prompt = _text(users[-1].get("content")) if users else ""
    if _CALC.search(prompt) and messages and messages[-1].get("role") != "tool":
        return None
    call = {"id": "call_parity_final", "name": FORMAT_TOOL}
    struct = _STRUCT.search(prompt)
    if struct:
        return Step(tool_calls=[{**call, "arguments": struct.group(1)}], usage=(10, 5))
    if "SHOWREQ" in prompt:
        seen = {"system": [_text(m.get("content")) for m in messages if m.get("role") == "system"], "tools": tools}
        request = json.dumps(seen, sort_keys=True, ensure_ascii=False)
        return Step(tool_calls=[{**call, "arguments": {"output": {"request": request}}}], usage=(10, 5))
    text = _TEXT.search(prompt)
    if text:
        return Step(text=text.group(1), usage=(10, 5))
    return None


class ParityPeer(OpenAIPeer):
    """The OpenAI peer, which also answers Anthropic's /v1/messages (for the Anthropic Chat Model),
    Groq's /openai/v1/chat/completions, the Gemini API's /v1beta/models/<model>:generateContent and
    the REST API under /api/."""

    def next_step(self, request: Request) -> Step:
        if request.path.startswith("/api/"):
            return Step()  # the REST API answers for itself
        return super().next_step(request)

    def respond(self, conn: Connection, request: Request, step: Step) -> bool:
        if request.path.startswith("/api/"):
            return rest_api.respond(conn, request)
        if request.path == "/v1/messages":
            return respond_messages(conn, request, step, ANTHROPIC_MODELS, None, self.answering)
        if request.path.startswith("/v1beta/"):  # the Gemini API (Google Gemini Chat Model)
            return respond_generate_content(conn, request, step, GEMINI_MODELS, None, self.answering, call_ids=True)
        if request.path == "/openai/v1/chat/completions":  # Groq's path for the same API
            request = dataclasses.replace(request, path="/v1/chat/completions")
        return super().respond(conn, request, step)


def parity_peer() -> OpenAIPeer:
    return ParityPeer(policy=reply, model=MODELS)


def main() -> None:
    with parity_peer() as peer:
        print(peer.base_url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
