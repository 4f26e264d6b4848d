"""TLS is set up only for https URLs and once per process: a call to http://127.0.0.1 loads no certificates."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).parents[3]


def run_fresh(code: str) -> str:
    """Run `code` in a new interpreter (nothing loaded yet) and return what it printed."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_call_to_a_loopback_http_server_loads_no_certificates() -> None:
    out = run_fresh("""
        import asyncio, ssl
        loads = []
        original = ssl.SSLContext.load_verify_locations
        def counting(self, *args, **kwargs):  # counts certificate loads; the real method still runs
            loads.append(1)
            return original(self, *args, **kwargs)
        ssl.SSLContext.load_verify_locations = counting
        from engine.abort import AbortSignal
        from engine.chat import ChatMessage
        from nodes.models.openai_chat import OpenAIParams, chat_model
        from tests.peers.http_peer import Step
        from tests.peers.openai_peer import OpenAIPeer
        with OpenAIPeer([Step(text="hi"), Step(text="again")]) as peer:
            model = chat_model(OpenAIParams.model_validate({"model": peer.model, "options": {"baseURL": peer.base_url}}), {}, None, "M")
            async def calls():
                for _ in range(2):
                    await model.invoke([ChatMessage(role="user", content="x")], [], AbortSignal(), lambda t: None)
            asyncio.run(calls())
        print(len(loads))
    """)
    assert out == "0"


def test_https_builds_one_verifying_context_per_process() -> None:
    out = run_fresh("""
        import asyncio, ssl
        loads = []
        original = ssl.SSLContext.load_verify_locations
        def counting(self, *args, **kwargs):
            loads.append(1)
            return original(self, *args, **kwargs)
        ssl.SSLContext.load_verify_locations = counting
        import httpx
        from nodes.http_transport import LazyTLSTransport
        async def refused_https():
            async with LazyTLSTransport.client(httpx.Limits()) as client:
                try:
                    await client.get("https://127.0.0.1:9/")  # nothing listens on the discard port
                except httpx.ConnectError:
                    pass
        for _ in range(3):  # three loops, three clients
            asyncio.run(refused_https())
        print(len(loads))
    """)
    assert out == "1"


def test_model_calls_leave_no_unclosed_client_behind() -> None:
    """The client of a loop that is gone closes its session: no "Unclosed client session" or
    "Unclosed connector" reports when it is collected, whether its loop was closed or not."""
    done = subprocess.run([sys.executable, "-W", "default", "-c", textwrap.dedent("""
        import asyncio, gc
        from engine.abort import AbortSignal
        from engine.chat import ChatMessage
        from nodes.models.openai_chat import OpenAIParams, chat_model
        from tests.peers.http_peer import Step
        from tests.peers.openai_peer import OpenAIPeer
        with OpenAIPeer(policy=lambda request: Step(text="hi")) as peer:
            model = chat_model(OpenAIParams.model_validate({"model": peer.model, "options": {"baseURL": peer.base_url}}), {}, None, "M")
            async def calls():
                for _ in range(2):
                    assert (await model.invoke([ChatMessage(role="user", content="x")], [], AbortSignal())).content == "hi"
            asyncio.run(calls())
            asyncio.run(calls())
            gc.collect()
            left_open = asyncio.new_event_loop()  # never closed
            left_open.run_until_complete(calls())
            print("calls made", peer.connections)
        from nodes.models import _client
        _client._clients.clear()  # as when the loops are collected
        gc.collect()
    """)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "calls made 3"  # one keep-alive connection per loop
    assert "Unclosed" not in done.stderr and "destroyed" not in done.stderr, done.stderr
