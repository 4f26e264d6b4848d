"""The calculator's evaluator: arithmetic only, bounded work, clear refusals."""

from __future__ import annotations

import re
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
        ("sqrt(-1)", "sqrt() is not defined for -1"),
        ("1 if 1 else 2", "is not arithmetic"),
        ("1 << 5", "the operator '<<' is not supported"),
        ("10**4300", "the result is too large"),
        ("10^4300", "the result is too large"),
        ("0**-1", "division by zero: 0 cannot be raised to a negative power"),
        ("0^-1.5", "division by zero: 0 cannot be raised to a negative power"),
        ("10**4000 / 3", "the result is too large"),
        ("10**400 * 1.0", "the result is too large"),
        ("1e308 * 10", "the result is too large"),
        ("sqrt(10**400)", "sqrt(): the number is too large"),
        ("log(0)", "log() is not defined for 0"),
        ("factorial(2.5)", "factorial() cannot be applied to (2.5)"),
        ("abs(1, 2)", "abs() cannot be applied to (1, 2)"),
        ("(-8)^(1/3)", "the result is not a real number"),
        ("2 ^", "'2 ^' is not a valid expression"),
    ],
)
def test_refusals_say_why(expression: str, message: str) -> None:
    with pytest.raises(MathError, match=re.escape(message)):
        evaluate(expression)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("2*3^2", "18"),  # ^ binds tighter than *
        ("2^3^2", "512"),  # and to the right: 2^(3^2)
        ("-2^2", "-4"),  # and tighter than a unary minus on its left, as in mathjs
        ("2^-2", "0.25"),  # a unary minus on its right is the exponent's
        ("(2^3)^2", "64"),
        ("2 ** 3 ** 2", "512"),
        ("1 + 2 ^ 2 * 3", "13"),
        ("10^4299 // 10^4298", "10"),
    ],
)
def test_power_has_mathjs_precedence_and_associativity(expression: str, expected: str) -> None:
    assert format_number(evaluate(expression)) == expected


@pytest.mark.parametrize(
    "expression",
    [
        "10**4300", "0**-1", "0.0**-1", "(-1)**0.5", "1e400", "10**400 / 1e-300", "2.0**2000", "factorial(-3)",
        "factorial(1e10)", "round(1, 10**30)", "round(1e308, -400)", "log(-1, 2)", "exp(1000)", "acos(2)",
        "min()", "max(1)", "sqrt()", "sqrt(1, 2)", "1 % 0", "1 // 0.0", "tan(1e308)", "10**4000 - 0.5",
        "7 ^ 0.5 ^ -1e400", "2 ^^ 3", "(", "1e", "0x", "3 +* 4", "log(0, 0)",
    ],
)
def test_every_failure_is_a_sentence_not_a_python_exception(expression: str) -> None:
    try:
        format_number(evaluate(expression))
    except MathError as exc:
        assert "Error" not in str(exc) and "Traceback" not in str(exc)
        for python_text in ("math domain error", "Exceeds the limit", "cannot be raised to a negative power (", "object", "Numerical result"):
            assert python_text not in str(exc)


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
    wf = agent_workflow([{"toolCalls": [tool_call("Calculator", {"input": "9 ** 9 ** 9"})]}, {"text": "too big"}])
    state = await engine.run(wf, items=[chat_item("big", "s")])
    assert state.status == "success"
    assert state.run_data["Calculator"][0].error.message == "the result is too large"
