"""The Structured Output Parser and the Agent's "Require Specific Output Format": schema from an
example, Zod's parsing rules, the schema shown to the model, and the Agent end to end (the
recorded n8n behaviour is checked by tests/parity/test_sub_node_parity.py)."""

from __future__ import annotations

import json

import pytest

from engine.executor import Engine
from engine.workflow import Workflow, parse_workflow
from nodes.parsers.json_schema_check import SchemaViolation, parse_with_schema, unsupported_keywords
from nodes.parsers.model_schema import model_schema
from nodes.parsers.schema_from_example import schema_from_example
from nodes.parsers.structured_output import FORMAT_ERROR, StructuredOutputParser
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, link, node, tool_call

PARSER = "@n8n/n8n-nodes-langchain.outputParserStructured"


def test_schema_from_example_as_generate_schema_makes_it() -> None:
    schema = schema_from_example('{"a": 1, "b": [{"x": "s"}, {"x": "t", "y": true}], "c": null}', every_field_required=False)
    assert schema == {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {
            "a": {"type": "number"},
            "b": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "boolean"}},
                                            "required": ["x"]}},
            "c": {"type": "null"},
        },
    }
    required = schema_from_example('{"a": 1, "b": [{"x": "s"}, {"x": "t", "y": true}]}', every_field_required=True)
    assert required["required"] == ["a", "b"]
    assert required["properties"]["b"]["items"]["required"] == ["x", "y"]


def test_mixed_arrays_get_one_of_as_generate_schema_writes_it() -> None:
    schema = schema_from_example('{"m": [1, "a"], "c": [[1], [2]]}', every_field_required=False)
    # generate-schema 2.6 lists the first element's type twice (its output, checked with node)
    assert schema["properties"]["m"] == {"type": "array", "items": {"oneOf": [{"type": "number"}, {"type": "number"}, {"type": "string"}]}}
    assert schema["properties"]["c"] == {"type": "array", "items": {"type": "array"}}


def test_parsing_drops_unknown_keys_fills_defaults_and_keeps_schema_order() -> None:
    schema = {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "string", "default": "x"}}, "required": ["b"]}
    assert list(parse_with_schema(schema, {"z": 1, "b": "y"}).items()) == [("b", "y"), ("a", "x")]
    strict = {**schema, "additionalProperties": False}
    with pytest.raises(SchemaViolation, match="Unrecognized key\\(s\\) in object: 'z'"):
        parse_with_schema(strict, {"z": 1, "b": "y"})


@pytest.mark.parametrize(("schema", "value", "message"), [
    ({"type": "string"}, 5, "Expected string, received number"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, {}, "a: Required"),
    ({"type": "integer"}, 2.5, "Expected integer, received float"),
    ({"type": "number", "minimum": 3}, 1, "Number must be greater than or equal to 3"),
    ({"type": "number", "exclusiveMaximum": 3}, 3, "Number must be less than 3"),
    ({"type": "string", "minLength": 2}, "a", "String must contain at least 2 character(s)"),
    ({"type": "string", "enum": ["low", "high"]}, "mid", "Invalid enum value. Expected 'low' | 'high', received 'mid'"),
    ({"type": "array", "items": {"type": "number"}, "minItems": 1}, [], "Array must contain at least 1 element(s)"),
    ({"type": "array", "items": {"type": "number"}}, [1, "x"], "1: Expected number, received string"),
    ({"type": "string", "format": "email"}, "nope", "Invalid email"),
    ({"type": ["string", "null"]}, 3, "Invalid input"),
])
def test_violations_read_as_zod_says_them(schema: dict, value: object, message: str) -> None:
    with pytest.raises(SchemaViolation) as caught:
        parse_with_schema(schema, value)
    assert str(caught.value) == message


def test_keywords_we_do_not_check_are_named() -> None:
    schema = {"type": "object", "properties": {"a": {"allOf": [{}]}, "b": {"type": "string", "format": "hostname"}}}
    assert unsupported_keywords(schema) == ["properties.a.allOf", "properties.b.format (hostname)"]


def test_model_schema_is_the_zod_round_trip() -> None:
    schema = {"type": "object", "description": "d", "properties": {
        "n": {"type": "string", "nullable": True}, "e": {"type": "string", "enum": ["a"], "default": "a"},
        "u": {"anyOf": [{"type": "string"}, {"type": "number"}]}, "r": {"type": "object", "additionalProperties": {"type": "number"}},
    }, "required": ["n", "e"]}
    assert model_schema(schema) == {
        "type": "object",
        "properties": {
            "n": {"type": ["string", "null"]},
            "e": {"type": "string", "enum": ["a"], "default": "a"},
            "u": {"type": ["string", "number"]},
            "r": {"type": "object", "additionalProperties": {"type": "number"}},
        },
        "required": ["n"],
        "additionalProperties": False,
        "description": "d",
        "$schema": "http://json-schema.org/draft-07/schema#",
    }


async def test_parser_reads_code_fences_and_names_the_violation() -> None:
    parser = StructuredOutputParser("Parser", 1.3, {"type": "object", "properties": {"state": {"type": "string"}}, "required": ["state"]})
    assert await parser.parse('Here:\n```json\n{"output": {"state": "Ohio"}}\n```') == {"output": {"state": "Ohio"}}
    with pytest.raises(Exception) as caught:
        await parser.parse('{"output": {"state": 5}}')
    assert caught.value.message == FORMAT_ERROR
    assert caught.value.description.startswith("Model output does not match the expected schema: output.state: Expected string, received number.")
    with pytest.raises(Exception) as caught:
        await parser.parse("{}")
    assert caught.value.description.startswith("Model output wrapper is an empty object: output: Required.")


def _with_parser(replies: list[dict], parser_params: dict, *, memory: bool = False, agent_params: dict | None = None) -> Workflow:
    wf = agent_workflow(replies, memory=memory, tools=[], agent_params={"hasOutputParser": True, **(agent_params or {})})
    doc = json.loads(wf.to_json())
    doc["nodes"].append(node("Parser", PARSER, parser_params))
    link(doc["connections"], "Parser", "AI Agent", "ai_outputParser")
    return parse_workflow(doc)


EXAMPLE = {"jsonSchemaExample": '{"state": "California", "cities": ["Los Angeles"]}'}


async def test_agent_answers_through_the_final_response_tool(engine: Engine) -> None:
    wf = _with_parser([{"toolCalls": [tool_call("format_final_json_response", {"output": {"cities": ["Austin"], "state": "Texas", "x": 1}})]}], EXAMPLE)
    state = await engine.run(wf, items=[chat_item("cities of Texas", "s1")])
    assert state.status == "success", state.error
    assert state.result[0]["json"] == {"output": {"state": "Texas", "cities": ["Austin"]}}
    model_in = state.run_data["Model"][0].input["ai_languageModel"][0][0]["json"]
    assert model_in["tools"] == ["format_final_json_response"]
    assert model_in["messages"][0]["content"].startswith("You are a helpful assistant\n\nIMPORTANT: For your response to user, you MUST use")
    parser_run = state.run_data["Parser"][0]
    assert parser_run.input["ai_outputParser"][0][0]["json"] == {"action": "parse", "text": '{"output":{"cities":["Austin"],"state":"Texas","x":1}}'}
    assert parser_run.data["ai_outputParser"][0][0]["json"] == {"action": "parse", "response": {"output": {"state": "Texas", "cities": ["Austin"]}}}


async def test_a_violation_fails_the_agent_naming_the_field(engine: Engine) -> None:
    wf = _with_parser([{"toolCalls": [tool_call("format_final_json_response", {"output": {"state": "Texas", "cities": "Austin"}})]}], EXAMPLE)
    state = await engine.run(wf, items=[chat_item("cities of Texas", "s1")])
    assert state.status == "error"
    assert state.error.message == FORMAT_ERROR
    assert state.error.node == "Parser"
    assert "output.cities: Expected array, received string" in state.error.description
    assert state.run_data["Parser"][0].execution_status == "error"


async def test_with_memory_the_answer_is_remembered_as_json_text(engine: Engine) -> None:
    wf = _with_parser([{"text": '{"state": "Ohio", "cities": []}'}], EXAMPLE, memory=True)
    state = await engine.run(wf, items=[chat_item("Ohio?", "s1")])
    assert state.status == "success", state.error
    assert state.result[0]["json"] == {"output": {"state": "Ohio", "cities": []}}
    saved = [t for t in state.run_data["Memory"] if t.input["ai_memory"][0][0]["json"]["action"] == "saveContext"]
    assert saved[0].input["ai_memory"][0][0]["json"]["output"] == '{"output":{"state":"Ohio","cities":[]}}'


async def test_a_parser_with_the_switch_off_is_not_used_and_noted(engine: Engine) -> None:
    wf = _with_parser([{"text": "plain words"}], EXAMPLE, agent_params={"hasOutputParser": False})
    state = await engine.run(wf, items=[chat_item("hi", "s1")])
    assert state.result[0]["json"] == {"output": "plain words"}
    assert "Parser" not in state.run_data
    assert any("Require Specific Output Format" in n for n in state.run_data["AI Agent"][0].metadata["notes"])


async def test_an_unchecked_schema_keyword_is_an_error_not_ignored(engine: Engine) -> None:
    wf = _with_parser([{"text": "{}"}], {"schemaType": "manual", "inputSchema": '{"type": "object", "not": {}}'})
    state = await engine.run(wf, items=[chat_item("hi", "s1")])
    assert state.status == "error"
    assert state.error.message == "Error in sub-node Parser"  # as n8n words a sub-node failing to set up
    assert "uses not, which mini-n8n does not check" in state.error.description


def test_fix_prompt_template_fills_variables_and_keeps_doubled_braces() -> None:
    from nodes.parsers.autofixing import fill

    assert fill("{{x}} {error} {unknown}", {"error": "E"}) == "{x} E {unknown}"


async def test_the_autofixing_parser_refuses_a_prompt_without_error(engine: Engine) -> None:
    wf = agent_workflow([{"text": "x"}], tools=[], agent_params={"hasOutputParser": True})
    doc = json.loads(wf.to_json())
    doc["nodes"].append(node("Fixer", "@n8n/n8n-nodes-langchain.outputParserAutofixing", {"options": {"prompt": "no placeholder"}}))
    link(doc["connections"], "Fixer", "AI Agent", "ai_outputParser")
    state = await engine.run(parse_workflow(doc), items=[chat_item("hi", "s1")])
    assert state.status == "error"
    assert state.error.message == "Error in sub-node Fixer"
    assert "Auto-fixing parser prompt has to contain {error} placeholder" in state.error.description
