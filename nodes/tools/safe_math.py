"""Arithmetic by walking the AST: numbers, + - * / // % ** and ^, parentheses, unary minus, a
few math functions and constants. No `eval`; work is bounded so that no expression can hang or
exhaust memory, and every refusal is a sentence, never a Python exception's text.

`^` is power as in mathjs (n8n's Calculator): above * and /, right-associative, above unary
minus on its left (2*3^2 = 18, 2^3^2 = 512, -2^2 = -4). It is read as `**`, which Python
parses with exactly these rules.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Any, Callable

MAX_LENGTH = 2000
MAX_DEPTH = 60
MAX_RESULT_DIGITS = 4300  # Python's own int-to-str limit


class MathError(ValueError):
    """An expression the calculator refuses or cannot compute; the message says why."""


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt, "abs": abs, "round": round, "floor": math.floor, "ceil": math.ceil,
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos,
    "atan": math.atan, "exp": math.exp, "log": math.log, "log10": math.log10, "log2": math.log2,
    "min": min, "max": max, "factorial": math.factorial,
}
CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}


MAX_RESULT_BITS = int(MAX_RESULT_DIGITS * math.log2(10)) - 1  # any int this wide has < 4300 digits


_UNSUPPORTED: dict[type, str] = {
    ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^", ast.MatMult: "@",
}


def _shown(args: list[Any]) -> str:
    return ", ".join(format_number(a) for a in args)


def _check_size(value: Any) -> Any:
    if isinstance(value, int) and value.bit_length() > MAX_RESULT_BITS:
        raise MathError("the result is too large")
    if isinstance(value, float) and math.isinf(value):
        raise MathError("the result is too large")
    return value


def _power(base: Any, exponent: Any) -> Any:
    if isinstance(base, (int, float)) and isinstance(exponent, (int, float)):
        if abs(base) > 1 and exponent > 0 and exponent * math.log10(abs(base)) > MAX_RESULT_DIGITS:
            raise MathError("the result is too large")
    try:
        result = operator.pow(base, exponent)
    except OverflowError:
        raise MathError("the result is too large") from None
    except ZeroDivisionError:
        raise MathError("division by zero: 0 cannot be raised to a negative power") from None
    if isinstance(result, complex):
        raise MathError("the result is not a real number")
    return result


def _eval(node: ast.AST, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise MathError("the expression is nested too deeply")
    if isinstance(node, ast.Expression):
        return _eval(node.body, depth + 1)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise MathError(f"'{node.value!r}' is not a number")
        return _check_size(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand, depth + 1)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp):
        left = _eval(node.left, depth + 1)
        right = _eval(node.right, depth + 1)
        if isinstance(node.op, ast.Pow):
            return _check_size(_power(left, right))
        op = _BINARY.get(type(node.op))
        if op is None:
            symbol = _UNSUPPORTED.get(type(node.op), type(node.op).__name__)
            raise MathError(f"the operator '{symbol}' is not supported")
        if isinstance(node.op, ast.Mult) and isinstance(left, int) and isinstance(right, int):
            if left.bit_length() + right.bit_length() > MAX_RESULT_DIGITS * 3.33:
                raise MathError("the result is too large")
        try:
            return _check_size(op(left, right))
        except ZeroDivisionError:
            raise MathError("division by zero") from None
        except OverflowError:
            raise MathError("the result is too large") from None
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        raise MathError(f"unknown name '{node.id}'")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        func = FUNCTIONS.get(node.func.id)
        if func is None:
            raise MathError(f"unknown function '{node.func.id}'")
        args = [_eval(a, depth + 1) for a in node.args]
        if func is math.factorial and args and isinstance(args[0], (int, float)) and args[0] > 1000:
            raise MathError("the result is too large")
        try:
            return _check_size(func(*args))
        except OverflowError:
            raise MathError(f"{node.func.id}(): the number is too large") from None
        except TypeError:
            raise MathError(f"{node.func.id}() cannot be applied to ({_shown(args)})") from None
        except ValueError:
            raise MathError(f"{node.func.id}() is not defined for {_shown(args)}") from None
    raise MathError(f"'{ast.unparse(node)}' is not arithmetic")


def evaluate(expression: str) -> int | float:
    """The value of an arithmetic expression, or a MathError that says what is wrong."""
    text = expression.strip()
    if not text:
        raise MathError("the expression is empty")
    if len(text) > MAX_LENGTH:
        raise MathError(f"the expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text.replace("×", "*").replace("÷", "/").replace("^", "**"), mode="eval")
    except (SyntaxError, ValueError) as exc:
        raise MathError(f"'{text}' is not a valid expression ({exc.msg if isinstance(exc, SyntaxError) else exc})") from None
    except RecursionError:
        raise MathError("the expression is nested too deeply") from None
    return _eval(tree, 0)


def format_number(value: int | float) -> str:
    """425, 0.5, 1e+20: integers without a trailing .0, floats as Python prints them."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)
