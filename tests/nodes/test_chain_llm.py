"""Basic LLM Chain with a scripted model: prompt and messages, parser, refusals (its n8n
behaviour, request bodies included, is compared in the parity corpus: chain-*.json)."""

from __future__ import annotations

from engine.executor import Engine
from engine.workflow import parse_workflow
from nodes.chains.chain_llm import format_response
from tests.builders import MANUAL_TRIGGER, SCRIPTED, link, node

CHAIN = "@n8n/n8n-nodes-langchain.chainLlm"
PARSER = "@n8n/n8n-nodes-langchain.outputParserStructured"


def _chain(params: dict, replies: list, parser: bool = False):
    connections: dict = {}
    nodes = [node("Start", MANUAL_TRIGGER), node("Chain", CHAIN, params), node("Model", SCRIPTED, {"replies": replies})]
    link(connections, "Start", "Chain")
    link(connections, "Model", "Chain", "ai_languageModel")
    if parser:
        nodes.append(node("Parser", PARSER, {"jsonSchemaExample": '{"a": 1}'}))
        link(connections, "Parser", "Chain", "ai_outputParser")
    return parse_workflow({"name": "chain", "nodes": nodes, "connections": connections})


async def test_messages_then_the_prompt_and_a_trimmed_answer(engine: Engine) -> None:
    params = {"promptType": "define", "text": "={{ $json.q }}?",
              "messages": {"messageValues": [{"message": "Be brief."}, {"type": "AIMessagePromptTemplate", "message": "ok"}]}}
    state = await engine.run(_chain(params, [{"text": "  yes \n"}]), items=[{"json": {"q": "really"}}])
    assert state.status == "success", state.error
    assert state.result[0]["json"] == {"text": "yes"}
    sent = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]
    assert [(m["role"], m["content"]) for m in sent["messages"]] == [("system", "Be brief."), ("assistant", "ok"), ("user", "really?")]
    assert sent["tools"] == []


async def test_a_parser_adds_format_instructions_and_parses_the_answer(engine: Engine) -> None:
    state = await engine.run(_chain({"promptType": "define", "text": "give a", "hasOutputParser": True},
                                    [{"text": '```json\n{"output": {"a": 2}}\n```'}], parser=True), items=[{"json": {}}])
    assert state.status == "success", state.error
    assert state.result[0]["json"] == {"output": {"a": 2}}
    prompt = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]["messages"][-1]["content"]
    assert prompt.startswith("give a\nYou must format your output as a JSON value")
    assert '"required":["output"]' in prompt


async def test_image_messages_are_refused(engine: Engine) -> None:
    params = {"promptType": "define", "text": "x",
              "messages": {"messageValues": [{"type": "HumanMessagePromptTemplate", "messageType": "imageUrl"}]}}
    state = await engine.run(_chain(params, [{"text": "no"}]), items=[{"json": {}}])
    assert state.status == "error"
    assert "image messages (imageUrl) are not supported" in state.error.message


def test_responses_are_formatted_as_n8n_does() -> None:
    assert format_response({"a": 1}, unwrap=False) == {"text": '{"a":1}'}
    assert format_response({"a": 1}, unwrap=True) == {"a": 1}
    assert format_response([1], unwrap=True) == {"data": [1]}
