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
    """The keep-alive connections of a loop's model client are closed when the loop ends or the
    client is collected: no "unclosed transport" warning, whether the loop was closed or left
    open, and a loop that asyncio.run closed is not kept alive by its client."""
    done = subprocess.run([sys.executable, "-W", "default", "-c", textwrap.dedent("""
        import asyncio, gc, weakref
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
            runner = asyncio.Runner()
            runner.run(calls())
            ended = weakref.ref(runner.get_loop())
            runner.close()
            del runner
            gc.collect()
            print("loop kept", ended() is not None)
            left_open = asyncio.new_event_loop()  # open when its client goes
            left_open.run_until_complete(calls())
            print("calls made", peer.connections)
        from nodes.models import _client
        _client._clients.clear()  # as when the loops are collected
        gc.collect()
        left_open.close()  # only now: its client was collected while it was open
    """)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["loop kept False", "calls made 3"]  # one keep-alive connection per loop
    assert "unclosed" not in done.stderr.lower() and "destroyed" not in done.stderr, done.stderr
