"""Wait: passes its items on after a time interval or at a given time, as n8n's Wait node
(v1–v1.1). n8n stores an execution that waits more than 65 seconds and resumes it later; mini-n8n
waits in the running process (Stop ends the wait) and says so in the run log.

On a webhook call the execution is stored paused at this node (n8n's "waiting", with its
waitTill) and the run ends; a request to `$execution.resumeUrl` (`mini-n8n serve`) or
`mini-n8n resume ID --input JSON` continues it, the request's item being this node's output;
past the time limit (limitWaitTime) a resume without a request passes the input items on.
On a form submission the same, at `$execution.resumeFormUrl`: the submitted form's item (n8n's
field labels, submittedAt, formMode) is the output.
"""

import asyncio
import time
from typing import Any

from pydantic import ConfigDict, Field

from engine.context import NodeContext
from engine.errors import NodeOperationError, PutToWait
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

from nodes.core.set_values import describe_value, is_nan, js_number

from .if_node import paired
from .js_values import JsValues
from .params import parameter, plain

UNIT_SECONDS = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}
STORED_AFTER_S = 65  # n8n keeps a shorter wait in the running execution
FORM_TRIGGER = "n8n-nodes-base.formTrigger"
REFUSED_OPTIONS = ("ipWhitelist", "rawBody", "binaryData", "ignoreBots")  # of the resume webhook: an error when set


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
    implemented_parameters = frozenset({
        "resume", "amount", "unit", "dateTime", "httpMethod", "formTitle", "formDescription", "formFields", "limitWaitTime", "limitType", "resumeAmount", "resumeUnit",
        "maxDateAndTime", "incomingAuthentication", "responseMode", "responseData", "responseCode", "options",
        "options.webhookSuffix", "options.noResponseBody", "options.responseData", "options.responseHeaders",
        "options.responseContentType", "options.responsePropertyName",
    })
    unsupported_parameters = {
        "options.appendAttribution": "the served form is a plain page without n8n's attribution",
        "options.respondWithOptions": "a form's completion page or redirect is not shown; the submission is answered as "
                                      "the Form Trigger's is",
        **dict.fromkeys(("options.binaryData", "options.binaryPropertyName", "options.rawBody",
                         "responseBinaryPropertyName"), "binary data in the resuming request or its answer is refused "
                                                        "(an error when the node waits)"),
        "options.ignoreBots": "ignoring bots is refused (an error when the node waits)",
        "options.ipWhitelist": "an IP allowlist on the resume URL is refused (an error when the node waits)",
    }

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        node = ctx.node.name
        resume = plain(parameter(ctx, "resume", 0, "timeInterval"))
        if resume in ("webhook", "form"):
            resumed, items = ctx.resumed_wait()
            if not resumed:
                raise PutToWait(self._webhook_wait(ctx, resume))
            if resume == "form" and FORM_TRIGGER in ancestor_types(ctx.workflow, node):
                ctx.note(f'Wait "{node}": the Form Trigger\'s submitter was not sent on to this form '
                         "(n8n redirects it there with a 307); it was at $execution.resumeFormUrl")
            # by a request (its item), or by the time limit (the input passes on, as n8n's disabled node)
            return [items if items is not None else [paired(item, index) for index, item in enumerate(ctx.items)]]
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


    @staticmethod
    def _webhook_wait(ctx: NodeContext, resume: str) -> dict[str, Any]:
        """What resumes the execution: the request's method (a form: GET shows it, POST submits)
        and suffix, and n8n's waitTill (ms)."""
        node = ctx.node.name
        auth = plain(parameter(ctx, "incomingAuthentication", 0, "none"))
        if auth not in (None, "none"):
            raise NodeOperationError(f'Node "{node}": authentication "{auth}" of the resume webhook is not supported by '
                                     "mini-n8n", node=node)
        options = plain(parameter(ctx, "options", 0, {}))
        options = options if isinstance(options, dict) else {}
        refused = [name for name in REFUSED_OPTIONS if options.get(name) not in (None, False, "")]
        if refused:
            raise NodeOperationError(f'Node "{node}": the option(s) {", ".join(refused)} of the resume webhook are not '
                                     "supported by mini-n8n", node=node)
        suffix = options.get("webhookSuffix")
        wait_till: float | None = None  # n8n's WAIT_INDEFINITELY
        if plain(parameter(ctx, "limitWaitTime", 0, False)) is True:
            if plain(parameter(ctx, "limitType", 0, "afterTimeInterval")) == "afterTimeInterval":
                amount = plain(parameter(ctx, "resumeAmount", 0, 1))
                unit = plain(parameter(ctx, "resumeUnit", 0, "hours"))
                seconds = js_number(amount) * UNIT_SECONDS.get(str(unit), 1)
                if is_nan(seconds):
                    raise NodeOperationError(f"Invalid input for 'Amount': {describe_value(amount)}", node=node)
                wait_till = time.time() * 1000 + seconds * 1000
            else:
                until = JsValues(ctx.expression_scope().state).date_millis(plain(parameter(ctx, "maxDateAndTime", 0, "")))
                if until is None:
                    raise NodeOperationError("Cannot put execution to wait because `maxDateAndTime` is not a valid date",
                                             node=node)
                wait_till = float(until)
        method = plain(parameter(ctx, "httpMethod", 0, "GET")) if resume == "webhook" else "POST"
        return {"resume": resume, "waitTill": wait_till, "httpMethod": str(method or "GET").upper(),
                "webhookSuffix": str(suffix) if suffix and not isinstance(suffix, (dict, list)) else "",
                "since": time.time() * 1000}  # each wait its own, also the same node's next one


def ancestor_types(workflow: Any, name: str) -> set[str]:
    """The types of the nodes upstream of `name` on main links (n8n's getParentNodes)."""
    sources: dict[str, list[str]] = {}
    for source, kind, _index, target in workflow.links():
        if kind == "main":
            sources.setdefault(target.node, []).append(source)
    seen: set[str] = set()
    todo = list(sources.get(name, ()))
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(sources.get(current, ()))
    return {workflow.node(n).type for n in seen if workflow.has_node(n)}


__all__ = ["WaitNode"]
