"""Engine cost per agent iteration, next to LangGraph's prebuilt ReAct agent doing the same work.

One iteration: a model call answered instantly (scripted), one calculator tool run, the Agent
resumed with the result, run data recorded. Both sides run N tool rounds then a final answer;
the figure is wall time per model call, best of several repeats.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from typing import Any, Callable

from engine.executor import Engine
from engine.registry import builtin_registry
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call

ROUNDS = 50
REPEATS = 15
TARGET_RATIO = 0.1  # ours at most a tenth of LangGraph's figure


def best_per_call(run_once: Callable[[], Any], calls: int) -> tuple[float, float]:
    """(best, median) milliseconds per model call over REPEATS runs."""
    times = []
    for _ in range(REPEATS):
        gc.collect()
        started = time.perf_counter()
        run_once()
        times.append((time.perf_counter() - started) * 1000.0 / calls)
    return min(times), statistics.median(times)


def ours() -> tuple[float, float]:
    replies = [{"toolCalls": [tool_call("Calculator", {"expression": f"{i} * 2"})], "usage": {"promptTokens": 10, "completionTokens": 5}} for i in range(ROUNDS)]
    replies.append({"text": "done", "usage": {"promptTokens": 10, "completionTokens": 1}})
    workflow = agent_workflow(replies, agent_options={"maxIterations": ROUNDS + 5})
    engine = Engine(builtin_registry())
    loop = asyncio.new_event_loop()

    def run_once() -> None:
        state = loop.run_until_complete(engine.run(workflow, items=[chat_item("go", "bench")]))
        assert state.status == "success", state.error
        assert len(state.run_data["Calculator"]) == ROUNDS

    try:
        run_once()  # warm up
        return best_per_call(run_once, ROUNDS + 1)
    finally:
        loop.close()


def langgraph() -> tuple[float, float] | None:
    try:
        from langchain_core.language_models.chat_models import BaseChatModel
        from langchain_core.messages import AIMessage
        from langchain_core.outputs import ChatGeneration, ChatResult
        from langchain_core.tools import tool
        from langgraph.prebuilt import create_react_agent
    except ImportError as exc:
        print(f"LangGraph not installed ({exc}); `make bench` installs the bench extra")
        return None

    from nodes.tools.safe_math import evaluate, format_number

    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression."""
        return format_number(evaluate(expression))

    class Scripted(BaseChatModel):
        """Answers instantly: ROUNDS tool calls, then a final answer."""

        calls: int = 0

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> "Scripted":
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            n = self.calls
            self.calls += 1
            if n < ROUNDS:
                message = AIMessage(content="", tool_calls=[{"name": "calculator", "args": {"expression": f"{n} * 2"}, "id": f"call_{n}"}],
                                    usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15})
            else:
                message = AIMessage(content="done", usage_metadata={"input_tokens": 10, "output_tokens": 1, "total_tokens": 11})
            return ChatResult(generations=[ChatGeneration(message=message)])

    def run_once() -> None:
        model = Scripted()
        agent = create_react_agent(model, [calculator])
        result = agent.invoke({"messages": [("user", "go")]}, {"recursion_limit": 2 * ROUNDS + 10})
        assert result["messages"][-1].content == "done"

    run_once()
    return best_per_call(run_once, ROUNDS + 1)


def main() -> None:
    best, median = ours()
    print(f"mini-n8n engine : {best:.3f} ms per agent iteration (median {median:.3f}), {ROUNDS} tool rounds, best of {REPEATS}")
    peer = langgraph()
    if peer is None:
        return
    lg_best, lg_median = peer
    print(f"LangGraph ReAct : {lg_best:.3f} ms per model call (median {lg_median:.3f}), same work, same run")
    ratio = best / lg_best
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    print(f"ratio mini-n8n / LangGraph = {ratio:.3f} (target <= {TARGET_RATIO}: {verdict})")


if __name__ == "__main__":
    main()
