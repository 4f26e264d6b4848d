"""n8n expressions: JavaScript inside `{{ }}` with n8n's globals, run in an embedded engine.

A parameter value starting with `=` is an expression. `={{ code }}` alone keeps the value's
type; text around the segments makes a string (null/undefined segments render empty, other
values as JavaScript's String() does, so objects read "[object Object]" as in n8n). An error that
is n8n's own (a missing node, a syntax error, an extension function's misuse) fails its node with
n8n's kind of message, naming the node, parameter and expression; any other error (a TypeError,
an Error the code throws) leaves its segment empty, as n8n's engine does (js/runtime.js).
Plain `$json.a.b` reads of existing fields are answered without entering the engine: same value.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from ..errors import ExpressionError
from .sandbox import MEMORY_MESSAGE, Interrupted, runtime
from .scope import Scope
from .template import Path, Template, parse

__all__ = ["ExpressionError", "Interrupted", "Scope", "evaluate", "has_expressions", "resolve_parameters", "run_code"]

_MISS = object()
_SAFE_INT = 2**53
# names every object has in the engine (Object.prototype and n8n's object functions): a missing
# field of that name is not `undefined` there, so such reads go to the engine
_PROTOTYPE_NAMES = frozenset((
    "constructor toString toLocaleString valueOf hasOwnProperty isPrototypeOf propertyIsEnumerable __proto__ "
    "__defineGetter__ __defineSetter__ __lookupGetter__ __lookupSetter__ isEmpty isNotEmpty hasField removeField "
    "removeFieldsContaining keepFieldsContaining compact merge toJsonString urlEncode keys values"
).split())


def has_expressions(value: Any) -> bool:
    """True when a parameter value (nested dicts and lists included) holds any expression.
    A node's parameters can be long (a scripted model's replies, a large JSON body): when their
    JSON text has no string starting with "=" (`"=`), none is an expression, found in C; only
    otherwise (or for what is not JSON) are they walked."""
    if isinstance(value, str):
        return value.startswith("=")
    if isinstance(value, (dict, list)):
        try:
            if b'"=' not in orjson.dumps(value):
                return False
        except TypeError:
            pass
    return _walk_for_expressions(value)


def _walk_for_expressions(value: Any) -> bool:
    """has_expressions by walking the value, with exact type checks first."""
    if isinstance(value, str):
        return value.startswith("=")
    if isinstance(value, dict):
        values: Any = value.values()
    elif isinstance(value, list):
        values = value
    else:
        return False
    for item in values:
        kind = type(item)
        if kind is str:
            if item.startswith("="):
                return True
        elif kind is int or kind is float or kind is bool or item is None:
            continue
        elif _walk_for_expressions(item):
            return True
    return False


def _walk(value: Any, path: Path) -> Any:
    """A `$json` path read where every step exists; _MISS where the engine must decide."""
    for step in path:
        if isinstance(step, int) and isinstance(value, list):
            if step >= len(value):
                return _MISS
            value = value[step]
        elif isinstance(value, dict) and str(step) in value:
            value = value[str(step)]
        else:
            return _MISS
    return value


def _as_text(value: Any) -> str | object:
    """A value's text in a template, where it is certain to equal JavaScript's String()."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and -_SAFE_INT < value < _SAFE_INT:
        return str(value)
    return _MISS


def _fast(template: Template, item: dict[str, Any], undefined: Any = None) -> Any:
    """The value of a template made of text and plain `$json` reads only, else _MISS."""
    data = item.get("json")
    if template.single:
        path = template.paths[0]
        if path is None:
            return _MISS
        if not path:
            return data if isinstance(data, dict) else _MISS
        if not isinstance(data, dict):
            return _MISS
        parent = _walk(data, path[:-1])
        last = path[-1]
        if isinstance(parent, dict) and isinstance(last, str) and (last in parent or last not in _PROTOTYPE_NAMES):
            return parent.get(last, undefined)  # a missing last key reads as undefined
        return _walk(data, path)
    out = []
    for (is_code, text), path in zip(template.parts, template.paths):
        if not is_code:
            out.append(text)
            continue
        if not path or not isinstance(data, dict):
            return _MISS
        piece = _as_text(_walk(data, path))
        if piece is _MISS:
            return _MISS
        out.append(piece)  # type: ignore[arg-type]
    return "".join(out)


def _failure(message: str, description: str, template: Template, parameter: str, scope: Scope) -> ExpressionError:
    node = scope.node.name if scope.node is not None else None
    source = template.source if len(template.source) <= 300 else template.source[:300] + "…"
    where = f'parameter "{parameter}"' if parameter else "an expression"
    if node:
        where += f' of node "{node}"'
    return ExpressionError(f"ERROR: {message} [{where}: {source.strip()}]", node=node, description=description or None)


def _run(template: Template, item: dict[str, Any], item_index: int, scope: Scope, parameter: str,
         undefined: Any = None) -> Any:
    value = _fast(template, item, undefined)
    if value is not _MISS:
        return value
    rt = runtime()
    try:
        if rt.scope is not scope:
            rt.enter(scope, scope.meta_json(), scope.timezone)
        elif rt.generation != scope.generation:
            rt.forget(scope.generation)
        if rt.item_key is not item or rt.item_index != item_index:
            rt.set_item(item, json.dumps(item, ensure_ascii=False, default=str), item_index)
        reply = rt.run(template, scope.answer)
    except Interrupted as exc:
        rt.scope = None  # the runtime's state is unknown after an interruption: enter again
        raise _failure(str(exc), "", template, parameter, scope) from None
    tag, body = reply[0], reply[1:]
    if tag == "u":
        return undefined
    if tag == "s":
        return body
    if tag == "j":
        return json.loads(body)
    error = json.loads(body)
    name = error.get("name", "Error")
    message = error.get("message", "")
    if name == "InternalError" and message == "out of memory":
        rt.scope = None
        message, name = MEMORY_MESSAGE, "Error"
    if name not in ("Error", "ExpressionError") and not message.startswith(name):
        message = f"{name}: {message}"
    raise _failure(message, error.get("description", ""), template, parameter, scope)


def run_code(body: str, *, scope: Scope, item_index: int, per_item: bool, time_limit_s: float) -> str:
    """Run a Code node's JavaScript body in the expression engine for one item (`per_item`) or for
    all: "u" (undefined), or JSON text of {value, logs} or {error}. Raises Interrupted when it ran
    out of time or memory."""
    rt = runtime()
    item = _item_of(scope, item_index)
    try:
        if rt.scope is not scope:
            rt.enter(scope, scope.meta_json(), scope.timezone)
        elif rt.generation != scope.generation:
            rt.forget(scope.generation)
        if rt.item_key is not item or rt.item_index != item_index:
            rt.set_item(item, json.dumps(item, ensure_ascii=False, default=str), item_index)
        return rt.run_body(body, per_item, scope.answer, time_limit_s)
    except Interrupted:
        rt.scope = None  # the runtime's state is unknown after an interruption: enter again
        raise


def _item_of(scope: Scope, item_index: int) -> dict[str, Any]:
    items = scope.items
    return items[item_index] if 0 <= item_index < len(items) else {"json": {}}


def evaluate(
    value: str,
    item: dict[str, Any] | None = None,
    args: dict[str, Any] | None = None,
    *,
    scope: Scope | None = None,
    item_index: int = 0,
    parameter: str = "",
    undefined: Any = None,
) -> Any:
    """Evaluate one expression string (`=...`) for one item.

    Without `scope`, `item` is the item's json and `args` what `$fromAI` reads (a tool run).
    JavaScript's `undefined` comes back as `undefined` (None unless a caller must tell it from null).
    """
    if scope is None:
        scope = Scope(items=[{"json": item if item is not None else {}}], model_args=args)
        item_index = 0
    return _run(parse(value), _item_of(scope, item_index), item_index, scope, parameter, undefined)


def resolve_parameters(
    value: Any,
    item: dict[str, Any] | None = None,
    args: dict[str, Any] | None = None,
    *,
    scope: Scope | None = None,
    item_index: int = 0,
) -> Any:
    """Return `value` with every expression string evaluated (a copy; other values as they are)."""
    if scope is None:
        scope = Scope(items=[{"json": item if item is not None else {}}], model_args=args)
        item_index = 0
    full_item = _item_of(scope, item_index)

    def walk(v: Any, path: str) -> Any:
        if isinstance(v, str):
            return _run(parse(v), full_item, item_index, scope, path) if v.startswith("=") else v
        if isinstance(v, dict):
            return {k: walk(x, f"{path}.{k}" if path else str(k)) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x, f"{path}[{i}]") for i, x in enumerate(v)]
        return v

    return walk(value, "")
