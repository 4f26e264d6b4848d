"""n8n's per-node settings (a node's Settings tab, stored on the node), run as n8n 1.123 runs them:
"Execute Once", "Always Output Data", "On Error" (with the legacy "Continue On Fail") and
"Retry On Fail"."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .connection_types import MAIN, PortSpec
from .run_data import Item
from .workflow import Node

if TYPE_CHECKING:
    from .node_type import NodeType

STOP = "stopWorkflow"
CONTINUE_REGULAR = "continueRegularOutput"
CONTINUE_ERROR_OUTPUT = "continueErrorOutput"
ERROR_OUTPUT_LABEL = "Error"


def _settings(node: Node) -> dict[str, Any]:
    return node.model_extra or {}


def executes_once(node: Node) -> bool:
    return _settings(node).get("executeOnce") is True


def always_outputs(node: Node) -> bool:
    return _settings(node).get("alwaysOutputData") is True


def empty_output(inputs: list[list[Item] | None]) -> Item:
    """n8n's item for "Always Output Data": empty, paired with every input item."""
    pairs = [{"item": index, "input": input_index}
             for input_index, items in enumerate(inputs) if items for index in range(len(items))]
    return {"json": {}, "pairedItem": pairs}


def on_error(node: Node) -> str | None:
    value = _settings(node).get("onError")
    return value if isinstance(value, str) else None


def continues_on_error(node: Node) -> bool:
    """Whether the engine goes on after this node throws (n8n's `continuesOnError`): the legacy
    `continueOnFail` or either "continue" choice of On Error."""
    return _settings(node).get("continueOnFail") is True or on_error(node) in (CONTINUE_REGULAR, CONTINUE_ERROR_OUTPUT)


def node_continues_on_fail(node: Node) -> bool:
    """What a node's own `this.continueOnFail()` answers: On Error when it is set, else the legacy
    `continueOnFail` (nodes that catch their errors then output `{"json": {"error": message}}`)."""
    mode = on_error(node)
    if mode is None:
        return _settings(node).get("continueOnFail") is True
    return mode in (CONTINUE_REGULAR, CONTINUE_ERROR_OUTPUT)


def has_error_output(node: Node) -> bool:
    return on_error(node) == CONTINUE_ERROR_OUTPUT


def retries(node: Node) -> tuple[int, int]:
    """n8n's retry budget: (tries, milliseconds between them). Retry On Fail off: one try.
    On: `maxTries` (default 3) kept within 2..5, `waitBetweenTries` (default 1000) within 0..5000."""
    settings = _settings(node)
    if settings.get("retryOnFail") is not True:
        return 1, 0
    tries = _number(settings.get("maxTries")) or 3
    wait = _number(settings.get("waitBetweenTries")) or 1000
    return int(min(5, max(2, tries))), int(min(5000, max(0, wait)))


def _number(value: Any) -> float:
    """JavaScript's `value || default` on a stored number: 0, missing or not a number fall back."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return float(value)


def has_error_settings(node: Node) -> bool:
    """Whether the node's runs need the error handling of this module (most nodes' do not)."""
    return continues_on_error(node) or has_error_output(node) or retries(node)[0] > 1


def outputs_with_error(node: Node, outputs: tuple[PortSpec, ...]) -> tuple[PortSpec, ...]:
    """The node's output ports with n8n's error output when On Error is "continue (using error
    output)": one more main output after the others, labelled "Error" (a lone main output then
    reads "Success")."""
    if not has_error_output(node):
        return outputs
    mains = [spec for spec in outputs if spec.type == MAIN]
    if len(mains) == 1 and not mains[0].label:
        outputs = tuple(PortSpec(MAIN, "Success") if spec is mains[0] else spec for spec in outputs)
    return (*outputs, PortSpec(MAIN, ERROR_OUTPUT_LABEL))


def ports_of(node_type: "NodeType", node: Node) -> tuple[tuple[PortSpec, ...], tuple[PortSpec, ...]]:
    """The (inputs, outputs) a node shows: its type's ports for its parameters, and the error
    output its On Error setting adds."""
    inputs, outputs = node_type.ports_for(node.parameters, float(node.typeVersion))
    return inputs, outputs_with_error(node, outputs)


def is_error_item(item: Item) -> bool:
    """An item a node made of an error (n8n's test when it routes items to the error output)."""
    if item.get("error"):
        return True
    data = item.get("json")
    return isinstance(data, dict) and bool(data.get("error")) and all(k in ("error", "message", "details") for k in data)


def route_errors(result: list[list[Item]], inputs: list[list[Item] | None], main_outputs: int) -> list[list[Item]]:
    """n8n's error output: the items of the regular outputs made of an error move to the last
    output, each merged over the input item it is paired with; the error output is always there."""
    outputs = [list(items) for items in result]
    while len(outputs) < main_outputs - 1:
        outputs.append([])
    errors: list[Item] = []
    for index in range(main_outputs - 1):
        kept = []
        for item in outputs[index]:
            if not is_error_item(item):
                kept.append(item)
                continue
            paired = item.get("pairedItem")
            if isinstance(paired, list):
                paired = paired[0] if paired else None
            source = None
            if isinstance(paired, dict) and isinstance(paired.get("item"), int):
                which = paired.get("input") or 0
                items = inputs[which] if 0 <= which < len(inputs) else None
                if items and 0 <= paired["item"] < len(items):
                    source = items[paired["item"]]
            if source is not None:
                item = {**item, "json": {**source.get("json", {}), **item.get("json", {})}}
            errors.append(item)
        outputs[index] = kept
    outputs = outputs[: main_outputs - 1]
    outputs.append(errors)
    return outputs


def passed_through(inputs: list[list[Item] | None]) -> list[list[Item]]:
    """What n8n's engine outputs for a node that threw and continues: its first input's items,
    each paired with its position."""
    first = inputs[0] if inputs else None
    if first is None:
        return []
    return [[{**item, "pairedItem": {"item": index}} for index, item in enumerate(first)]]


def retry_note(node: Node, attempt: int, tries: int, message: str, wait_ms: int) -> str:
    return f'Retry On Fail: try {attempt} of {tries} of "{node.name}" failed ({message}); trying again in {wait_ms} ms'
