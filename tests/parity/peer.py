"""The scripted model both n8n and mini-n8n talk to in the parity corpus: replies are a pure
function of the request, so a recording made against real n8n is reproducible here.

- the last message is a tool result: "The result is <result>."
- the last user message holds `CALC(<expression>)` and tools are offered: a call of the first
  tool with the expression as its first parameter (n8n's Calculator calls it `input`)
- otherwise: "Echo: <last user message> [messages=<count>]" (the count shows what memory loaded)

Run as a module it serves until stdin closes and prints its base URL first:
`python -m tests.parity.peer`.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from tests.peers.http_peer import Request, Step
from tests.peers.openai_peer import OpenAIPeer

MODEL = "gpt-4o-mini"
_CALC = re.compile(r"CALC\((.*?)\)")


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def reply(request: Request) -> Step:
    body = request.json
    messages = body.get("messages", [])
    last = messages[-1] if messages else {}
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


def parity_peer() -> OpenAIPeer:
    return OpenAIPeer(policy=reply, model=MODEL)


def main() -> None:
    with parity_peer() as peer:
        print(peer.base_url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
