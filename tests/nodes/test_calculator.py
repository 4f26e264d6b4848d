"""The calculator's evaluator: arithmetic only, bounded work, clear refusals."""

from __future__ import annotations

import time

import pytest

from engine.executor import Engine
from nodes.tools.safe_math import MathError, evaluate, format_number
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("17 * 25", "425"),
        ("1234 * 5678", "7006652"),
        ("(2 + 3) * -4", "-20"),
        ("7 // 2 + 7 % 2", "4"),
        ("2 ** 10", "1024"),
        ("2 ^ 10", "1024"),
        ("10 / 4", "2.5"),
        ("sqrt(16) + abs(-2)", "6"),
        ("round(pi, 2)", "3.14"),
        ("-(-3)", "3"),
        ("3 × 4 ÷ 2", "6"),
    ],
)
def test_arithmetic(expression: str, expected: str) -> None:
    assert format_number(evaluate(expression)) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os').system('echo hi')", "is not arithmetic"),
        ("__import__('os')", "unknown function '__import__'"),
        ("open('/etc/passwd')", "unknown function 'open'"),
        ("x + 1", "unknown name 'x'"),
        ("'a' * 3", "is not a number"),
        ("[1, 2]", "is not arithmetic"),
        ("2 +", "is not a valid expression"),
        ("1 / 0", "division by zero"),
        ("", "the expression is empty"),
        ("(1).real", "is not arithmetic"),
        ("sqrt(-1)", "sqrt: math domain error"),
        ("1 if 1 else 2", "is not arithmetic"),
        ("1 << 5", "the operator 'LShift' is not supported"),
    ],
)
def test_refusals_say_why(expression: str, message: str) -> None:
    with pytest.raises(MathError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        evaluate(expression)


@pytest.mark.parametrize("expression", ["9 ** 9 ** 9 ** 9", "10 ** 100000", "2.5 ** 1e10", "factorial(100000)", "(10**4000) * (10**4000)"])
def test_huge_results_are_refused_quickly(expression: str) -> None:
    started = time.perf_counter()
    with pytest.raises(MathError, match="too large"):
        evaluate(expression)
    assert time.perf_counter() - started < 1.0, "the refusal must come before the work"


def test_deep_nesting_and_long_input_are_refused() -> None:
    with pytest.raises(MathError, match="nested too deeply"):
        evaluate("-" * 200 + "1")
    with pytest.raises(MathError, match="longer than"):
        evaluate("1+" * 2000 + "1")


async def test_a_huge_exponent_is_a_tool_error_in_an_agent_run(engine: Engine) -> None:
    wf = agent_workflow([{"toolCalls": [tool_call("Calculator", {"expression": "9 ** 9 ** 9"})]}, {"text": "too big"}])
    state = await engine.run(wf, items=[chat_item("big", "s")])
    assert state.status == "success"
    assert state.run_data["Calculator"][0].error.message == "the result is too large"
