"""Switch: routes each item to one output (or several), as n8n's Switch node v3–v3.4 does.

Rules mode: one output per rule (n8n's filter conditions); an item goes to the first rule it
meets (every rule it meets with `allMatchingOutputs`), else to the fallback output (`extra`, or a
rule's output), else nowhere. Expression mode: `output` names the output index of each item.
Every output item is paired with its input position. v1–v2 (another form) are in switch_legacy.
"""

from typing import Any

from pydantic import ConfigDict, Field

from engine.connection_types import MAIN, PortSpec
from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item
from nodes.core.set_values import describe_value, is_nan, js_number

from .conditions import ENABLE_LESS_STRICT, execute_filter, js_to_string
from .if_node import loose_validation, paired
from .js_values import JsValues
from .params import parameter, plain
from .switch_legacy import switch_legacy

# the rules a Switch gets when the file leaves `rules` out (n8n's default: one empty rule)
DEFAULT_RULES = {"values": [{"conditions": {
    "options": {"caseSensitive": True, "leftValue": "", "typeValidation": "strict"},
    "conditions": [{"leftValue": "", "rightValue": "", "operator": {"type": "string", "operation": "equals"}}],
    "combinator": "and"}}]}


class SwitchParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    mode: str = Field("rules", title="Mode")
    numberOutputs: Any = Field(4, title="Number of Outputs")
    output: Any = Field("={{}}", title="Output Index")
    rules: Any = Field(default_factory=lambda: DEFAULT_RULES, title="Routing Rules")
    looseTypeValidation: bool = Field(False, title="Convert types where required")
    options: Any = Field(default_factory=dict, title="Options")


def _index_text(index: Any) -> str:
    return js_to_string(index)


def check_index(length: int, index: Any, node: str) -> None:
    """n8n's checkIndexRange (its messages, "ouput" included)."""
    number = js_number(index)
    if number == length and not is_nan(number):
        raise NodeOperationError(f"The ouput {_index_text(index)} is not allowed. ", node=node,
                                 description=f"Output indexes are zero based, if you want to use the extra output use "
                                             f"{js_to_string(number - 1)}")
    if isinstance(index, (int, float)) and not isinstance(index, bool) and (index < 0 or index > length):
        raise NodeOperationError(f"The ouput {_index_text(index)} is not allowed", node=node,
                                 description=f"It has to be between 0 and {length - 1}")


def _slot(outputs: list[list[Item]], index: Any, node: str) -> list[Item]:
    """The output list at a JavaScript index (a non-integer index has none: n8n fails there)."""
    if isinstance(index, bool) or not isinstance(index, (int, float)) or index != int(index) or not 0 <= index < len(outputs):
        raise NodeOperationError(f"Cannot read properties of undefined (reading 'push')", node=node)
    return outputs[int(index)]


class SwitchNode(NodeType):
    type = "n8n-nodes-base.switch"
    version = 3.4
    versions = (1, 2, 3, 3.1, 3.2, 3.3, 3.4)
    display_name = "Switch"
    description = "Routes items to different outputs by rules or an expression"
    group = "Core"
    icon = "switch"
    Params = SwitchParams
    implemented_parameters = frozenset({
        "mode", "rules", "dataType", "value1", "fallbackOutput", "output", "outputsAmount", "numberOutputs",
        "looseTypeValidation", "options", "options.allMatchingOutputs", "options.fallbackOutput", "options.ignoreCase",
        "options.looseTypeValidation", "options.renameFallbackOutput"})

    def ports_for(self, parameters: dict[str, Any], version: float) -> tuple[tuple[PortSpec, ...], tuple[PortSpec, ...]]:
        """n8n's configured outputs: one per rule (named by its output key), the fallback output,
        or the number an expression-mode Switch names; v1 always has four."""
        def count(value: Any, default: int) -> int:
            return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 64 else default

        if version < 2:
            labels = ["0", "1", "2", "3"]
        elif parameters.get("mode") == "expression":
            labels = [str(i) for i in range(count(parameters.get("numberOutputs" if version >= 3 else "outputsAmount"), 4))]
        else:
            rules = parameters.get("rules", DEFAULT_RULES if version >= 3 else {})
            rules = rules if isinstance(rules, dict) else {}
            entries = rules.get("values" if version >= 3 else "rules") or []
            labels = [str(r.get("outputKey") or i) if isinstance(r, dict) else str(i) for i, r in enumerate(entries)]
            options = parameters.get("options") if isinstance(parameters.get("options"), dict) else {}
            if version >= 3 and options.get("fallbackOutput") == "extra":
                labels.append(str(options.get("renameFallbackOutput") or "Fallback"))
        return self.inputs, tuple(PortSpec(MAIN, label) for label in labels) or (PortSpec(MAIN),)

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        node = ctx.node.name
        if float(ctx.node.typeVersion) < 3:
            return switch_legacy(ctx)
        mode = plain(parameter(ctx, "mode", 0, "rules"))
        js = JsValues(ctx.expression_scope().state)
        outputs: list[list[Item]] = []
        for index, item in enumerate(ctx.items):
            try:
                item = paired(item, index)
                if mode == "expression":
                    if index == 0:
                        count = js_number(plain(parameter(ctx, "numberOutputs", index, 4)))
                        outputs = [[] for _ in range(int(count) if not is_nan(count) and count > 0 else 0)]
                    target = self._output_index(ctx, index)
                    check_index(len(outputs), target, node)
                    _slot(outputs, target, node).append(item)
                    continue
                rules = parameter(ctx, "rules", index, DEFAULT_RULES)
                values = (rules.get("values") if isinstance(rules, dict) else None) or []
                if not values:
                    continue
                options = plain(parameter(ctx, "options", index, {})) or {}
                fallback = options.get("fallbackOutput")
                if index == 0:
                    outputs = [[] for _ in values]
                    if fallback == "extra":
                        outputs.append([])
                matched = False
                for rule_index, rule in enumerate(values):
                    rule = rule if isinstance(rule, dict) else {}
                    try:
                        passed = execute_filter(rule.get("conditions", {}), index, js, node)
                    except NodeOperationError as exc:
                        if not loose_validation(ctx, index, options, 3.1) and not exc.description:
                            exc.description = ENABLE_LESS_STRICT
                        exc.node = node
                        raise
                    if passed:
                        matched = True
                        check_index(len(outputs), rule.get("output"), node)
                        _slot(outputs, rule_index, node).append(item)
                        if not options.get("allMatchingOutputs"):
                            break
                if matched or fallback is None or fallback == "none":
                    continue
                if fallback == "extra":
                    outputs[-1].append(item)
                    continue
                check_index(len(outputs), fallback, node)
                _slot(outputs, fallback, node).append(item)
            except NodeOperationError as exc:  # n8n's continueOnFail: the error as an item of the first output
                if not outputs or not ctx.continue_on_fail():
                    raise
                outputs[0].append({"json": {"error": exc.message}})
        return outputs or [[]]

    @staticmethod
    def _output_index(ctx: NodeContext, index: int) -> Any:
        """The `output` parameter as n8n validates it (validateType number)."""
        value = plain(parameter(ctx, "output", index, "={{}}"))
        if value is None:
            return value
        if isinstance(value, bool):
            number = int(value)
        else:
            number = js_number(value) if not isinstance(value, (dict,)) else float("nan")
        if is_nan(number):
            raise NodeOperationError(f"Invalid input for 'Output Index' [item {index}]", node=ctx.node.name,
                                     description=f"'output' expects a number but we got {describe_value(value)}")
        return number
