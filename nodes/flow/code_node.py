"""Code: runs JavaScript over the items, as n8n's Code node does (v1–v2), in the embedded engine
expressions use: `$input.all()`, `items`, `$json`, `$('Node')`, Luxon..., the code a function body
whose `return` gives the output, run once for all items or once for each item. n8n's rules for
what may be returned (and its messages) apply; the code has a time limit
(MINI_N8N_CODE_TIMEOUT_MS, default 60 s) and the engine's memory limit. Python runs in the Code
Tool's sandboxed process (python_code.py).
"""

import dataclasses
import json
import os
import re
from typing import Any, Literal

from pydantic import ConfigDict, Field

from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.expressions import Interrupted, Scope, run_code
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

from .conditions import js_to_string
from .params import parameter, plain

TIME_LIMIT_S = float(os.environ.get("MINI_N8N_CODE_TIMEOUT_MS", "60000")) / 1000.0
DEFAULT_ALL = """// Loop over input items and add a new field called 'myNewField' to the JSON of each one
for (const item of $input.all()) {
  item.json.myNewField = 1;
}

return $input.all();"""
DEFAULT_EACH = """// Add a new field called 'myNewField' to the JSON of the item
$input.item.json.myNewField = 1;

return $input.item;"""
DEFAULT_PYTHON = """# Loop over input items and add a new field called 'myNewField' to the JSON of each one
for item in _input.all():
  item.json.myNewField = 1
return _input.all()"""
ITEM_KEYS = ("json", "binary", "pairedItem", "error", "index")
_QUICKJS_READ = re.compile(r"^cannot read property '(?P<key>[^']*)' of (?P<what>undefined|null)$")


class CodeParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    mode: Literal["runOnceForAllItems", "runOnceForEachItem"] = Field("runOnceForAllItems", title="Mode")
    language: Literal["javaScript", "python", "pythonNative"] = Field("javaScript", title="Language")
    jsCode: str = Field(DEFAULT_ALL, title="JavaScript", json_schema_extra={
        "multiline": True, "displayOptions": {"show": {"language": ["javaScript"]}}})
    pythonCode: str = Field(DEFAULT_PYTHON, title="Python", json_schema_extra={
        "multiline": True, "code": "python", "displayOptions": {"show": {"language": ["python", "pythonNative"]}}})


class ValidationFailed(NodeOperationError):
    """What the code returned is not items (n8n's ValidationError)."""


def _validation(node: str, message: str, description: str, item_index: int | None = None,
                line: int | None = None) -> ValidationFailed:
    if line is not None and item_index is not None:
        message = f"{message} [line {line}, for item {item_index}]"
    elif line is not None:
        message = f"{message} [line {line}]"
    elif item_index is not None:
        message = f"{message} [item {item_index}]"
    return ValidationFailed(message, node=node, description=description)


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _top_level_keys(node: str, item: dict[str, Any], index: int) -> None:
    """n8n's validateTopLevelKeys: an item with n8n keys has no others."""
    reserved = next((k for k in item if k in ITEM_KEYS), None)
    unknown = [k for k in item if k not in ITEM_KEYS]
    if unknown:
        if reserved is not None:
            raise _validation(node, "Invalid output format",
                              f"An output item contains the reserved key <code>{reserved}</code>. To get around this, "
                              "please wrap each item in an object, under a key called <code>json</code>. "
                              '<a href="https://docs.n8n.io/data/data-structure/#data-structure" target="_blank">'
                              "Example</a>", index)
        raise _validation(node, f"Unknown top-level item key: {unknown[0]}",
                          "Access the properties of an item under `.json`, e.g. `item.json`", index)


def normalize_items(node: str, data: Any) -> list[dict[str, Any]]:
    """n8n's normalizeItems: an object or a list of them as items (`json` added where missing)."""
    if isinstance(data, dict):
        data = [data] if data.get("json") else [{"json": data}]
    if all(isinstance(i, dict) and "json" in i for i in data):
        return data
    if any(isinstance(i, dict) and "json" in i for i in data):
        raise NodeOperationError("Inconsistent item format", node=node)
    if data and all(isinstance(i, dict) and "binary" in i for i in data):
        return [{"json": {k: v for k, v in i.items() if k != "binary"}, "binary": i["binary"]} for i in data]
    if any(isinstance(i, dict) and "binary" in i for i in data):
        raise NodeOperationError("Inconsistent item format", node=node)
    return [{"json": i} for i in data]


@dataclasses.dataclass(frozen=True)
class Noun:
    """What n8n's messages call an item's object: "object" (JavaScript) or "dictionary" (Python)."""

    singular: str = "object"
    plural: str = "objects"

    @property
    def article(self) -> str:
        return f"{'an' if self.singular[0] in 'aeiou' else 'a'} {self.singular}"


OBJECT = Noun()
DICTIONARY = Noun("dictionary", "dictionaries")


def _check_item(node: str, item: dict[str, Any], index: int, noun: Noun = OBJECT) -> None:
    """n8n's validateItem: `json` (and `binary`, when given) are objects."""
    if not _is_object(item.get("json")):
        raise _validation(node, f"A 'json' property isn't {noun.article}",
                          f"In the returned data, every key named 'json' must point to {noun.article}.", index)
    if "binary" in item and not _is_object(item["binary"]):
        raise _validation(node, f"A 'binary' property isn't {noun.article}",
                          f"In the returned data, every key named 'binary' must point to {noun.article}.", index)


def validate_all(node: str, result: Any, noun: Noun = OBJECT) -> list[Item]:
    """n8n's validateRunCodeAllItems."""
    improper = f"Please return an array of {noun.plural}, one for each item you would like to output."
    if not isinstance(result, (dict, list)):
        raise _validation(node, "Code doesn't return items properly", improper)
    if isinstance(result, list):
        if not all(_is_object(item) for item in result):
            raise _validation(node, "Code doesn't return items properly", improper)
        if any(any(k in ITEM_KEYS for k in item) for item in result):
            for index, item in enumerate(result):
                _top_level_keys(node, item, index)
    items = normalize_items(node, result)
    for index, item in enumerate(items):
        _check_item(node, item, index, noun)
    return items


_UNDEFINED = object()  # the code returned `undefined`


def _js_text(value: Any) -> str:
    return "undefined" if value is _UNDEFINED else js_to_string(value)


def validate_each(node: str, result: Any, index: int, noun: Noun = OBJECT) -> dict[str, Any]:
    """n8n's validateRunCodeEachItem."""
    if result is _UNDEFINED or not isinstance(result, (dict, list)):
        raise _validation(node, f"Code doesn't return {noun.article}",
                          f"Please return {noun.article} representing the output item. ('{_js_text(result)}' was "
                          "returned instead.)", index)
    if isinstance(result, list):
        first = (f"An array of {_typeof(result[0])}s was returned." if result else "An empty array was returned.")
        raise _validation(node, f"Code doesn't return a single {noun.singular}",
                          f"{first} If you need to output multiple items, please use the 'Run Once for All Items' "
                          "mode instead.", index)
    [item] = normalize_items(node, result)
    _check_item(node, item, index, noun)
    _top_level_keys(node, item, index)
    return item


def _typeof(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def disallowed_in_each(node: str, code: str, index: int) -> None:
    """n8n's validateNoDisallowedMethodsInRunForEach: no `$input.all()` and kin per item."""
    match = re.search(r"\$input\.(first|last|all|itemMatching)", code)
    if match is None:
        return
    method = match.group(1)
    for number, line in enumerate(code.split("\n"), start=1):
        text = line.lstrip()
        if method in text and not text.startswith(("//", "/*", "*")):
            raise _validation(node, f"Can't use .{method}() here", "This is only available in 'Run Once for All Items' mode",
                              index, number)


def execution_error(node: str, error: dict[str, Any], item_index: int | None) -> NodeOperationError:
    """n8n's ExecutionError: the message with the code's line (and item), the error type as description."""
    if error.get("thrown"):
        return NodeOperationError("Unknown error", node=node)
    name = str(error.get("name") or "Error")
    message = str(error.get("message") or "")
    read = _QUICKJS_READ.match(message)
    if read is not None:  # the engine's wording of a property read of null/undefined, as V8 words it
        message = f"Cannot read properties of {read.group('what')} (reading '{read.group('key')}')"
    line = error.get("line")
    where = ""
    if isinstance(line, int) and line > 0:
        where = f"[line {line}]" if item_index is None else f"[line {line}, for item {item_index}]"
    if name == "SyntaxError" and line is None:
        where = ""
    return NodeOperationError(f"{message} {where}".strip() if message else f"Unknown error {where}".strip(), node=node,
                              description=None if name == "Error" else name)


class CodeNode(NodeType):
    type = "n8n-nodes-base.code"
    version = 2
    versions = (1, 2)
    display_name = "Code"
    description = "Runs JavaScript or Python over the items"
    group = "Core"
    icon = "code"
    Params = CodeParams
    implemented_parameters = frozenset({"mode", "language", "jsCode", "pythonCode"})

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        node = ctx.node.name
        language = plain(parameter(ctx, "language", 0, "javaScript")) if float(ctx.node.typeVersion) >= 2 else "javaScript"
        mode = plain(parameter(ctx, "mode", 0, "runOnceForAllItems"))
        per_item = mode == "runOnceForEachItem"
        if language in ("python", "pythonNative"):
            from .python_code import run_python  # the sandbox's modules only for Python nodes
            return await run_python(ctx, language, per_item, lambda i: plain(parameter(ctx, "pythonCode", i, "")))
        if language != "javaScript":
            raise NodeOperationError(f'Node "{node}" is set to the language "{language}", which n8n does not have',
                                     node=node)
        if not per_item:
            try:
                code = plain(parameter(ctx, "jsCode", 0, DEFAULT_ALL))
                value = self._run(ctx, code, 0, per_item=False)
                if value is None:
                    return [[]]
                return [validate_all(node, value)]
            except NodeOperationError as exc:  # n8n's Code node continues with the message as an item
                if not ctx.continue_on_fail():
                    raise
                return [[{"json": {"error": exc.message}}]]
        out: list[Item] = []
        for index in range(len(ctx.items)):
            try:
                code = plain(parameter(ctx, "jsCode", index, DEFAULT_EACH))
                disallowed_in_each(node, code, index)
                value = self._run(ctx, code, index, per_item=True)
                if value is None:
                    continue
                item = validate_each(node, value, index)
            except NodeOperationError as exc:
                if not ctx.continue_on_fail():
                    raise
                out.append({"json": {"error": exc.message}, "pairedItem": {"item": index}})
                continue
            new: Item = {"json": item["json"], "pairedItem": {"item": index}}
            if item.get("binary"):
                new["binary"] = item["binary"]
            out.append(new)
        return [out]

    @staticmethod
    def _run(ctx: NodeContext, code: Any, index: int, *, per_item: bool) -> Any:
        """The code's returned value (_UNDEFINED for undefined); its console lines go to the run log."""
        node = ctx.node.name
        try:
            reply = run_code(str(code), scope=_code_scope(ctx), item_index=index, per_item=per_item,
                             time_limit_s=TIME_LIMIT_S)
        except Interrupted as exc:
            raise NodeOperationError(f'Node "{node}": {exc}', node=node) from None
        if reply == "u":
            return _UNDEFINED
        data = json.loads(reply)
        if "error" in data:
            raise execution_error(node, data["error"], index if per_item else None)
        for line in data.get("logs") or []:
            ctx.note(f"console: {line}")
        return data.get("value", _UNDEFINED)


def _code_scope(ctx: NodeContext) -> Scope:
    """The node's expression scope, its input items as n8n hands them to code: each paired with
    its own position (so returning input items pairs them). Paired-item reads still walk back from
    the items as they came."""
    kept = ctx.memo("code-scope")
    scope = ctx.expression_scope()
    if kept.get("of") is not scope:
        items = [{**item, "pairedItem": {"item": index}} for index, item in enumerate(scope.items)]
        kept.update(of=scope, scope=dataclasses.replace(scope, items=items, pair_items=scope.items,
                                                        pair_source=scope.source, _meta=None))
    return kept["scope"]
