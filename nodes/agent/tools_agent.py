"""AI Agent (Tools Agent): the function-calling loop of n8n's Agent V3.

The Agent never runs a tool itself: when the model asks for tools it returns an EngineRequest,
the engine runs the tool nodes and calls the Agent again with an EngineResponse. All state
between rounds is in the request metadata: previousRequests, iterationCount, finishedItems.
"""

import asyncio
import json
from typing import Any, Literal

from pydantic import Field

from engine.chat import ChatMemory, ChatModel, ToolSpec
from engine.connection_types import AI_LANGUAGE_MODEL, AI_MEMORY, AI_OUTPUT_PARSER, AI_TOOL, MAIN, PortSpec
from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.observation import compact_json
from engine.requests import Action, EngineRequest, EngineResponse
from engine.run_data import Item
from engine.tool_schema import schema_problems
from nodes.ignored_parameters import note_ignored

from . import fallback, output_parser, streaming
from .batching import batching
from .binary_input import binary_messages
from .memory_context import remember
from .steps import build_steps, cached_message, intermediate_steps, make_step, n8n_v3_intermediate_steps, scratchpad_messages
from .versions import VERSIONS, agent_kind, check_agent_kind, legacy_prompt, system_message

DEFAULT_SYSTEM_MESSAGE = "You are a helpful assistant"


class BatchingOptions(NodeParams):
    batchSize: int = Field(1, ge=1, title="Batch Size", description="How many items run before the next pause")
    delayBetweenBatches: int = Field(0, ge=0, title="Delay Between Batches", description="Milliseconds")


class AgentOptions(NodeParams):
    systemMessage: str = Field(DEFAULT_SYSTEM_MESSAGE, title="System Message", json_schema_extra={"multiline": True})
    maxIterations: int = Field(10, ge=1, le=100_000, title="Max Iterations")
    returnIntermediateSteps: bool = Field(False, title="Return Intermediate Steps")
    enableStreaming: bool = Field(True, title="Enable Streaming", description=(
        "Stream the answer as it is generated when the Chat Trigger's response mode is Streaming (Agent v2.1+)"),
        json_schema_extra={"displayOptions": {"hide": {"@version": [{"_cnd": {"lt": 2}}]}}})  # as n8n: from v2
    passthroughBinaryImages: bool = Field(
        True, title="Automatically Passthrough Binary Images",
        description="Images and text files of the input item go to the model after the prompt")
    batching: BatchingOptions = Field(default_factory=BatchingOptions, title="Batch Processing", json_schema_extra={
        "displayOptions": {"show": {"@version": [{"_cnd": {"gte": 2}}]}}})


FALLBACK_PORT = PortSpec(AI_LANGUAGE_MODEL, "Fallback Model", max_connections=1)


class AgentParams(NodeParams):
    promptType: Literal["auto", "define"] = Field(
        "auto", title="Source for Prompt (User Message)",
        description="auto: the chatInput field of the input item (from a Chat Trigger); define: the text below",
        json_schema_extra={"displayOptions": {"hide": {"@version": [{"_cnd": {"lte": 1.2}}]}}},
    )
    text: str | None = Field("", title="Prompt (User Message)", json_schema_extra={
        "multiline": True,  # up to v1.2 the prompt is always shown: n8n declares it once per version range
        "displayOptions": [{"show": {"promptType": ["define"]}}, {"show": {"@version": [{"_cnd": {"lte": 1.2}}]}}]})
    hasOutputParser: bool = Field(False, title="Require Specific Output Format", json_schema_extra={
        "displayOptions": {"hide": {"@version": [{"_cnd": {"lte": 1.2}}]}}})
    needsFallback: bool = Field(False, title="Enable Fallback Model",
                                description="Connect a second model to the Fallback Model input: it answers when the Chat Model fails")
    options: AgentOptions = Field(default_factory=AgentOptions, title="Options")


def check_max_iterations(response: EngineResponse | None, max_iterations: int, node: str) -> None:
    if response is not None and int(response.metadata.get("iterationCount", 0)) >= max_iterations:
        raise NodeOperationError(
            f"Max iterations ({max_iterations}) reached. The agent could not complete the task "
            "within the allowed number of iterations.",
            node=node,
        )


def check_unique_tool_names(tools: list[ToolSpec], node: str) -> None:
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise NodeOperationError(
                f"You have multiple tools with the same name: '{tool.name}', please rename them to avoid conflicts",
                node=node,
            )
        seen.add(tool.name)


def prompt_of(ctx: NodeContext, params: AgentParams, item: Item) -> str:
    value = legacy_prompt(ctx, params.text, item)
    if value is not None or float(ctx.node.typeVersion) <= 1.2:
        pass
    elif params.promptType == "auto":
        value = item.get("json", {}).get("chatInput")
    else:
        value = params.text
    if value is None or (isinstance(value, str) and not value.strip()):
        raise NodeOperationError('The "text" parameter is empty.', node=ctx.node.name)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def tool_call_log(name: str, args: Any, content: str) -> str:
    """The `log` of n8n's intermediate steps: `Invoking "tool" with {...}` and the model's text."""
    rendered = args if isinstance(args, str) else compact_json(args)
    return f'Invoking "{name}" with {rendered}\n{content}'


class ToolsAgent(NodeType):
    type = "@n8n/n8n-nodes-langchain.agent"
    version = 3
    versions = VERSIONS
    display_name = "AI Agent"
    description = "Runs a tool-calling loop: asks its Chat Model, lets the engine run the tools it picks"
    group = "AI"
    icon = "agent"
    inputs = (
        PortSpec(MAIN),
        PortSpec(AI_LANGUAGE_MODEL, "Chat Model", required=True, max_connections=1),
        FALLBACK_PORT,  # input 1: used with needsFallback
        PortSpec(AI_MEMORY, "Memory", max_connections=1),
        PortSpec(AI_TOOL, "Tool"),
        PortSpec(AI_OUTPUT_PARSER, "Output Parser", max_connections=1),
    )
    outputs = (PortSpec(MAIN),)
    Params = AgentParams
    implemented_parameters = frozenset({
        "agent", "promptType", "text", "hasOutputParser", "needsFallback", "options", "options.systemMessage",
        "options.maxIterations", "options.returnIntermediateSteps", "options.enableStreaming",
        "options.passthroughBinaryImages", "options.batching"})
    unsupported_parameters = {
        **dict.fromkeys(("dataSource", "credentials", "binaryPropertyName", "input", "options.includedTables",
                         "options.ignoredTables", "options.includedSampleRows", "options.topK", "options.prefixPrompt",
                         "options.suffixPrompt"),
                        "a parameter of the SQL Agent (agent: sqlAgent), which is refused with an error naming it"),
        **dict.fromkeys(("options.prefix", "options.suffix", "options.suffixChat"),
                        "a parameter of the ReAct Agent (agent: reActAgent), which is refused with an error naming it"),
        "options.humanMessageTemplate": ("a parameter of the ReAct and Plan and Execute Agents, which are refused "
                                         "with an error naming them"),
        "options.humanMessage": ("the Conversational Agent runs as the Tools Agent, which does not use its human "
                                 "message (a run-log note names it)"),
        "options.maxTokensFromMemory": "memory is read whole, not cut to this many tokens (a run-log note names it)",
    }

    @classmethod
    def shown_inputs(cls, parameters: dict[str, Any], version: float) -> tuple[PortSpec, ...]:
        """As n8n's Agent: the Output Parser port only while "Require Specific Output Format" is on
        (from v1.3; before, the switch is not shown and the port always is), the Fallback Model
        port only while "Enable Fallback Model" is on."""
        parser = version <= 1.2 or parameters.get("hasOutputParser") is True
        fallback = parameters.get("needsFallback") is True
        return tuple(spec for spec in cls.inputs
                     if (parser or spec.type != AI_OUTPUT_PARSER) and (fallback or spec != FALLBACK_PORT))

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]] | EngineRequest:
        name = ctx.node.name
        first: AgentParams = ctx.params(0)
        if response is None:
            check_agent_kind(ctx)
            noted = ["options.maxTokensFromMemory"]
            if agent_kind(float(ctx.node.typeVersion), ctx.node.parameters) == "conversationalAgent":
                noted.append("options.humanMessage")
            note_ignored(ctx, self.unsupported_parameters, [n for n in noted if n in self.unsupported_parameters],
                         {"options.maxTokensFromMemory": 0})
        check_max_iterations(response, first.options.maxIterations, name)
        model: ChatModel | None = await fallback.agent_model(ctx)
        if model is None:
            raise NodeOperationError(f'Node "{name}" needs a Chat Model connected', node=name)
        memory: ChatMemory | None = await ctx.get_input_connection_data(AI_MEMORY, 0)
        batch_size, delay_ms = batching(ctx)
        if self.runs_tools_as_nodes(ctx):
            return await self._execute_v3(ctx, response, model, memory, batch_size, delay_ms)

        meta = response.metadata if response is not None else {}
        finished: dict[str, Any] = dict(meta.get("finishedItems") or {})
        texts: dict[str, str] = dict(meta.get("streamedText") or {})  # streaming: each item's text so far
        previous: dict[str, Any] = dict(meta.get("previousRequests") or {})
        actions: list[Action] = []
        waiting = False
        # n8n's v1/v2 agents run each item to its end before the next batch starts (after the delay)
        batches = [range(start, min(start + batch_size, len(ctx.items))) for start in range(0, len(ctx.items), batch_size)]
        for number, batch in enumerate(batches):
            if all(str(i) in finished for i in batch):
                continue
            for i in batch:
                key = str(i)
                if key in finished:
                    continue
                # v2 streams one begin for all of an item's rounds
                begin = key not in (meta.get("previousRequests") or {})
                turn = await self._item_turn(ctx, i, build_steps(response, i), model, memory, v3=False,
                                             texts=texts, begin=begin)
                if isinstance(turn, dict):
                    finished[key] = turn
                    continue
                steps, item_actions = turn
                actions += item_actions
                previous[key] = steps
                waiting = True
            if waiting:
                break
            if number + 1 < len(batches) and delay_ms > 0:
                await asyncio.sleep(delay_ms / 1000)

        if waiting:
            metadata = {
                "previousRequests": previous,
                "itemIndex": 0,
                "iterationCount": int(meta.get("iterationCount", 0)) + 1,
                "finishedItems": finished,
            }
            if texts:
                metadata["streamedText"] = texts
            return EngineRequest(actions=actions, metadata=metadata)
        return [[{"json": finished[str(i)]} for i in range(len(ctx.items))]]

    async def _execute_v3(self, ctx: NodeContext, response: EngineResponse | None, model: ChatModel,
                          memory: ChatMemory | None, batch_size: int, delay_ms: float) -> list[list[Item]] | EngineRequest:
        """n8n's Agent V3: every round runs every item again, in batches (the delay between them);
        an item's steps are the steps the last request carried (those of the item that asked
        first) plus its own tool results; answers of a round that also asks for tools are
        remembered, then dropped, and given again next round."""
        meta = response.metadata if response is not None else {}
        outputs: list[dict[str, Any]] = []
        actions: list[Action] = []
        metadata: dict[str, Any] | None = None
        count = len(ctx.items)
        for start in range(0, count, batch_size):
            for i in range(start, min(start + batch_size, count)):
                turn = await self._item_turn(ctx, i, build_steps(response, i, n8n_v3=True), model, memory, v3=True)
                if isinstance(turn, dict):
                    outputs.append(turn)
                    continue
                steps, item_actions = turn
                actions += item_actions
                if metadata is None:
                    metadata = {"previousRequests": steps, "itemIndex": i,
                                "iterationCount": int(meta.get("iterationCount", 0)) + 1}
            if start + batch_size < count and delay_ms > 0:
                await asyncio.sleep(delay_ms / 1000)
        if metadata is not None:
            return EngineRequest(actions=actions, metadata=metadata)
        return [[{"json": output} for output in outputs]]

    async def _item_turn(self, ctx: NodeContext, i: int, steps: Any, model: ChatModel, memory: ChatMemory | None,
                         v3: bool, texts: dict[str, str] | None = None,
                         begin: bool = True) -> dict[str, Any] | tuple[Any, list[Action]]:
        """One model call for item `i`: its output item when the model answered, else its steps
        (with refused calls added) and the tool runs it asks for. When the execution streams, the
        answer's tokens go out as they come (v3: begin/end per call; v2: per item, its text
        gathered in `texts` across rounds)."""
        name = ctx.node.name
        item = ctx.items[i]
        params: AgentParams = ctx.params(i)
        prompt = self.prompt(ctx, params, item)
        tools: list[ToolSpec] = await ctx.get_input_connection_data(AI_TOOL, i)
        check_unique_tool_names(tools, name)
        by_name = {t.name: t for t in tools}
        parser = await output_parser.connected_parser(ctx, i)
        if parser is not None:
            tools = [*tools, output_parser.format_tool(parser)]
        history = await memory.load_messages() if memory is not None else []
        fixed = ctx.memo(f"messages:{i}")
        system = output_parser.with_instructions(
            system_message(ctx, params.options.systemMessage, DEFAULT_SYSTEM_MESSAGE), parser)
        head = [
            *([cached_message(fixed, "system", system)] if system else []),
            *history,
            cached_message(fixed, "user", prompt),
            *binary_messages(ctx, item, params),
        ]
        messages = scratchpad_messages(head, steps, ctx.memo(f"scratchpad:{i}"))
        key = str(i)
        streamed: list[str] | None = None
        if streaming.streams(ctx, params.options.enableStreaming):
            streamed = []
            if v3 or begin:
                ctx.send_chunk("begin", i)
        answer = await model.invoke(messages, tools, ctx.signal,
                                    streaming.token_sender(ctx, i, streamed) if streamed is not None else None)
        if streamed is not None and not v3 and texts is not None:
            texts[key] = texts.get(key, "") + "".join(streamed)

        final = output_parser.final_call(answer, parser)
        calls = [c for c in answer.tool_calls if c.name in by_name] if final is None else []
        if streamed is not None and (v3 or not calls):
            ctx.send_chunk("end", i)
        if calls:
            actions: list[Action] = []
            for call in calls:
                tool = by_name[call.name]
                log = (streaming.tool_call_log(call.name, call.args, answer.content) if streamed is not None
                       else tool_call_log(call.name, call.args, answer.content))
                problem = self._argument_problem(call.args, tool)
                if problem is not None:
                    # Never sent to the tool: the model reads the error on its next round.
                    steps = steps.extended([make_step(call.id, call.name, call.args, f"Error: {problem}", log, True)])
                    continue
                args = dict(call.args)  # type: ignore[arg-type]
                actions.append(
                    Action(
                        nodeName=tool.source_node_name,
                        input={**args, "tool": call.name} if tool.is_from_toolkit else args,
                        type=AI_TOOL,
                        id=call.id,
                        metadata={"itemIndex": i, "toolName": call.name, "log": log, "isFromToolkit": tool.is_from_toolkit},
                    )
                )
            return steps, actions

        output: dict[str, Any]
        if parser is not None:
            output = await output_parser.structured_output(parser, answer, final, memory, prompt, steps, v3)
        else:
            await remember(memory, prompt, answer.content, steps, v3)
            streamed_text = texts.pop(key, None) if streamed is not None and not v3 and texts is not None else None
            output = {"output": streamed_text if streamed_text is not None else answer.content}
        if params.options.returnIntermediateSteps:
            if not v3:
                output["intermediateSteps"] = intermediate_steps(steps)
            elif steps:
                output["intermediateSteps"] = n8n_v3_intermediate_steps(steps)
        return output

    @staticmethod
    def runs_tools_as_nodes(ctx: NodeContext) -> bool:
        """n8n's Agent v3 runs each tool as a node run and hands the model the tool's output items
        as JSON; its v1/v2 agents (and the Agent Tool, v2.2) call LangChain tools in-process and
        hand over the tool's own answer."""
        return ctx.node.type == ToolsAgent.type and float(ctx.node.typeVersion) >= 3

    def prompt(self, ctx: NodeContext, params: AgentParams, item: Item) -> str:
        """The user message for one item (an Agent used as a tool overrides where it comes from)."""
        return prompt_of(ctx, params, item)

    @staticmethod
    def _argument_problem(args: Any, tool: ToolSpec) -> str | None:
        if isinstance(args, str):
            return f"the arguments for tool '{tool.name}' are not valid JSON: {args}"
        problems = schema_problems(tool.parameters, args)
        if problems:
            return f"the arguments for tool '{tool.name}' do not fit its schema: " + "; ".join(problems)
        return None
