"""Filter: keeps the items that meet the conditions, as n8n's Filter node does. Its run data
holds the kept items and, as a second output no link can leave, the discarded ones.

v1: first-generation conditions combined by `combineConditions` (AND/OR); v2–v2.3: n8n's
filter conditions.
"""

from typing import Any

from pydantic import ConfigDict, Field

from engine.errors import NodeOperationError
from engine.context import NodeContext
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

from .if_node import paired, run_filter
from .js_values import JsValues
from .legacy_compare import LegacyComparer, legacy_conditions
from .params import parameter, plain


class FilterParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    conditions: Any = Field(default_factory=dict, title="Conditions")
    looseTypeValidation: bool = Field(False, title="Convert types where required")
    options: Any = Field(default_factory=dict, title="Options")


class FilterNode(NodeType):
    type = "n8n-nodes-base.filter"
    version = 2.3
    versions = (1, 2, 2.1, 2.2, 2.3)
    display_name = "Filter"
    description = "Removes items that do not match the conditions"
    group = "Core"
    icon = "filter"
    Params = FilterParams
    implemented_parameters = frozenset({"conditions", "combineConditions", "looseTypeValidation", "options",
                                        "options.ignoreCase", "options.looseTypeValidation"})

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        js = JsValues(ctx.expression_scope().state)
        kept: list[Item] = []
        discarded: list[Item] = []
        v1 = float(ctx.node.typeVersion) < 2
        comparer = LegacyComparer(js, ctx.node.name)
        for index, item in enumerate(ctx.items):
            if v1:
                passed = _v1_passes(ctx, index, comparer)
            else:
                try:
                    passed = run_filter(ctx, index, js, loose_since=2.1)
                except NodeOperationError:
                    if not ctx.continue_on_fail():
                        raise
                    passed = False  # n8n's continueOnFail: an item that fails is discarded
            (kept if passed else discarded).append(paired(item, index))
        return [kept, discarded]


def _v1_passes(ctx: NodeContext, index: int, comparer: LegacyComparer) -> bool:
    combine = plain(parameter(ctx, "combineConditions", index, "AND"))
    for data_type, condition in legacy_conditions(parameter(ctx, "conditions", index, {})):
        result = comparer.passes(data_type, condition)
        if result and combine == "OR":
            return True
        if not result and combine == "AND":
            return False
    return combine == "AND"
