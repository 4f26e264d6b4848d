"""Wait: passes its items on after a time interval or at a given time, as n8n's Wait node
(v1–v1.1). n8n stores an execution that waits more than 65 seconds and resumes it later; mini-n8n
waits in the running process (Stop ends the wait) and says so in the run log. Resuming on a
webhook call or a form submission is refused with a clear error.
"""

from __future__ import annotations

import asyncio
import time

from pydantic import ConfigDict, Field

from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

from nodes.core.set_values import describe_value, is_nan, js_number

from .if_node import paired
from .js_values import JsValues
from .params import parameter, plain

UNIT_SECONDS = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}
STORED_AFTER_S = 65  # n8n keeps a shorter wait in the running execution


class WaitParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    resume: str = Field("timeInterval", title="Resume")
    amount: float = Field(5, title="Wait Amount", ge=0)
    unit: str = Field("seconds", title="Wait Unit")
    dateTime: str = Field("", title="Date and Time")


class WaitNode(NodeType):
    type = "n8n-nodes-base.wait"
    version = 1.1
    versions = (1, 1.1)
    display_name = "Wait"
    description = "Waits before passing its items on"
    group = "Core"
    icon = "wait"
    Params = WaitParams
    implemented_parameters = frozenset({"resume", "amount", "unit", "dateTime"})
    # parameters of resuming on a webhook call or a form, which is refused with an error naming it
    unsupported_parameters = dict.fromkeys((
        "formDescription", "formFields", "formTitle", "httpMethod", "incomingAuthentication", "limitType",
        "limitWaitTime", "maxDateAndTime", "options", "options.appendAttribution", "options.binaryData",
        "options.binaryPropertyName", "options.ignoreBots", "options.ipWhitelist", "options.noResponseBody",
        "options.rawBody", "options.respondWithOptions", "options.responseContentType", "options.responseData",
        "options.responseHeaders", "options.responsePropertyName", "options.webhookSuffix",
        "responseBinaryPropertyName", "responseCode", "responseData", "responseMode", "resumeAmount", "resumeUnit"
    ), "resuming on a webhook call or a form submission is refused with an error naming it")

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        node = ctx.node.name
        resume = plain(parameter(ctx, "resume", 0, "timeInterval"))
        if resume in ("webhook", "form"):
            raise NodeOperationError(f'Node "{node}" resumes on a {resume} call, which mini-n8n does not support yet',
                                     node=node, description="Use a time interval or a specific time, or pin the node's output")
        if resume == "timeInterval":
            v1 = float(ctx.node.typeVersion) < 1.1
            unit = plain(parameter(ctx, "unit", 0, "hours" if v1 else "seconds"))
            if not isinstance(unit, str) or unit not in UNIT_SECONDS:
                raise NodeOperationError("Invalid wait unit. Valid units are 'seconds', 'minutes', 'hours', or 'days'.",
                                         node=node)
            amount = plain(parameter(ctx, "amount", 0, 1 if v1 else 5))
            if amount is not None and not isinstance(amount, bool):  # validateType number, as n8n reads it
                number = js_number(amount)
                if is_nan(number):
                    raise NodeOperationError("Invalid input for 'Wait Amount' [item 0]", node=node,
                                             description=f"'amount' expects a number but we got {describe_value(amount)}")
                amount = number
            if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount < 0:
                raise NodeOperationError("Invalid wait amount. Please enter a number that is 0 or greater.", node=node)
            seconds = amount * UNIT_SECONDS[unit]
        else:
            until = JsValues(ctx.expression_scope().state).date_millis(plain(parameter(ctx, "dateTime", 0, "")))
            if until is None:
                raise NodeOperationError("Cannot put execution to wait because `dateTime` parameter is not a valid date. "
                                         "Please pick a specific date and time to wait until.", node=node)
            seconds = max(until / 1000.0 - time.time(), 0.0)
        if seconds >= STORED_AFTER_S:
            ctx.note(f"waits {seconds:.0f} s in this process (n8n would store the execution as waiting and resume it)")
        await asyncio.sleep(seconds)
        return [[paired(item, index) for index, item in enumerate(ctx.items)]]


__all__ = ["WaitNode"]
