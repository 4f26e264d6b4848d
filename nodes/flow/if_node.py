"""IF: routes each item to the "true" or the "false" output, as n8n's If node does.

v1: lists of boolean/dateTime/number/string conditions combined by `combineOperation` (all/any).
v2–v2.3: n8n's filter conditions (every operator, strict or loose type validation). Each item is
paired with its input position.
"""

from typing import Any

from pydantic import ConfigDict, Field

from engine.connection_types import MAIN, PortSpec
from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

from .conditions import ENABLE_LESS_STRICT, execute_filter
from .js_values import JsValues
from .legacy_compare import LegacyComparer, legacy_conditions
from .params import parameter, plain


class IfParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    conditions: Any = Field(default_factory=dict, title="Conditions")
    looseTypeValidation: bool = Field(False, title="Convert types where required")
    options: Any = Field(default_factory=dict, title="Options")


def loose_validation(ctx: NodeContext, item_index: int, options: dict[str, Any], since: float) -> bool:
    """n8n's getTypeValidationParameter: the option before `since`, the top-level parameter after."""
    if float(ctx.node.typeVersion) < since:
        return bool(options.get("looseTypeValidation"))
    return bool(plain(parameter(ctx, "looseTypeValidation", item_index, False)))


def run_filter(ctx: NodeContext, item_index: int, js: JsValues, loose_since: float) -> bool:
    """One item's filter conditions (the `conditions` parameter); a failure gets n8n's hint."""
    options = plain(parameter(ctx, "options", item_index, {})) or {}
    conditions = parameter(ctx, "conditions", item_index, {})
    try:
        return execute_filter(conditions, item_index, js, ctx.node.name)
    except NodeOperationError as exc:
        if not loose_validation(ctx, item_index, options, loose_since) and not exc.description:
            exc.description = ENABLE_LESS_STRICT
        exc.node = ctx.node.name
        raise


def paired(item: Item, index: int, input_index: int = 0) -> Item:
    """An input item passed on as n8n passes it: n8n gives every input item of a node run the
    pairedItem of its own position (and input, from the second on) before the node sees it."""
    pair: dict[str, int] = {"item": index}
    if input_index:
        pair["input"] = input_index
    return {**item, "pairedItem": pair}


class IfNode(NodeType):
    type = "n8n-nodes-base.if"
    version = 2.3
    versions = (1, 2, 2.1, 2.2, 2.3)
    display_name = "If"
    description = "Routes items to different branches (true/false)"
    group = "Core"
    icon = "if"
    outputs = (PortSpec(MAIN, "true"), PortSpec(MAIN, "false"))
    Params = IfParams
    implemented_parameters = frozenset({"conditions", "combineOperation", "looseTypeValidation", "options",
                                        "options.ignoreCase", "options.looseTypeValidation"})

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        js = JsValues(ctx.expression_scope().state)
        true_items: list[Item] = []
        false_items: list[Item] = []
        v1 = float(ctx.node.typeVersion) < 2
        comparer = LegacyComparer(js, ctx.node.name) if v1 else None
        for index, item in enumerate(ctx.items):
            if comparer is not None:
                passed = _v1_passes(ctx, index, comparer)
                (true_items if passed else false_items).append(paired(item, index))
                continue
            try:
                passed = run_filter(ctx, index, js, loose_since=2.1)
            except NodeOperationError:
                if not ctx.continue_on_fail():
                    raise
                passed = False  # n8n's continueOnFail: an item that fails goes to the false output
            (true_items if passed else false_items).append(paired(item, index))
        return [true_items, false_items]


def _v1_passes(ctx: NodeContext, index: int, comparer: LegacyComparer) -> bool:
    combine = plain(parameter(ctx, "combineOperation", index, "all"))
    conditions = parameter(ctx, "conditions", index, {})
    for data_type, condition in legacy_conditions(conditions):
        result = comparer.passes(data_type, condition)
        if result and combine == "any":
            return True
        if not result and combine == "all":
            return False
    return combine == "all"
