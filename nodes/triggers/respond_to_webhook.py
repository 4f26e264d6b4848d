"""Respond to Webhook: sets the answer to the request that started the run, as n8n's node (v1–v1.5).

The response (`{body, headers, statusCode}`) is kept in the node run's metadata (stored with
its run data), where `mini-n8n serve` reads it — in the server process or from the store in
queue mode; the first response of an execution is the one sent, as in n8n. The node passes its items on (and, from v1.3, the response on a second output when n8n
gives one).
"""

import json
from typing import Any, Literal

from pydantic import ConfigDict, Field

from engine.connection_types import MAIN, PortSpec
from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import ExecutionState, Item

from nodes.core.set_values import MISSING
from nodes.flow.params import parameter, plain

RESPONSE_KEY = "webhookResponse"  # in the node run's metadata: the response it made
# the triggers a Respond to Webhook node answers for (n8n's WEBHOOK_NODE_TYPES)
WEBHOOK_TYPES = ("n8n-nodes-base.webhook", "n8n-nodes-base.formTrigger", "@n8n/n8n-nodes-langchain.chatTrigger",
                 "n8n-nodes-base.wait")


class RespondParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    respondWith: Literal["allIncomingItems", "firstIncomingItem", "json", "noData", "redirect", "text"] = Field(
        "firstIncomingItem", title="Respond With")
    responseBody: Any = Field('{\n  "myField": "value"\n}', title="Response Body", json_schema_extra={"multiline": True})
    redirectURL: str = Field("", title="Redirect URL")


def response_of(state: ExecutionState, since_ms: float = 0.0) -> dict[str, Any] | None:
    """The first response a Respond to Webhook node of the execution made (by when its run started),
    from `since_ms` on (a resumed execution answers its resuming request with a later one)."""
    made = [(task.start_time, task.metadata[RESPONSE_KEY]) for runs in state.run_data.values() for task in runs
            if RESPONSE_KEY in task.metadata and task.start_time >= since_ms]
    return min(made, key=lambda pair: pair[0])[1] if made else None


def _set_path(key: str, value: Any) -> dict[str, Any]:
    """lodash's set({}, key, value) for a dotted key."""
    out: dict[str, Any] = {}
    target = out
    parts = key.split(".")
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = value
    return out


def _two_outputs(parameters: dict[str, Any], version: float) -> bool:
    return version == 1.3 or (version >= 1.4 and parameters.get("enableResponseOutput") is True)


class RespondToWebhook(NodeType):
    type = "n8n-nodes-base.respondToWebhook"
    version = 1.5
    versions = (1, 1.1, 1.2, 1.3, 1.4, 1.5)
    display_name = "Respond to Webhook"
    default_name = "Respond to Webhook"
    description = "Returns data for the Webhook that started the run"
    group = "Core"
    icon = "webhook"
    Params = RespondParams
    implemented_parameters = frozenset({
        "enableResponseOutput", "respondWith", "redirectURL", "responseBody", "options", "options.responseCode",
        "options.responseHeaders", "options.responseKey", "options.enableStreaming",
    })
    unsupported_parameters = {
        "credentials": 'responding with a JWT token is refused with an error naming it',
        "payload": 'responding with a JWT token is refused with an error naming it',
        "responseDataSource": 'responding with a binary file is refused with an error naming it',
        "inputFieldName": 'responding with a binary file is refused with an error naming it',
    }

    def ports_for(self, parameters: dict[str, Any], version: float) -> tuple[tuple[PortSpec, ...], tuple[PortSpec, ...]]:
        if _two_outputs(parameters, version):
            return self.inputs, (PortSpec(MAIN, "Input Data"), PortSpec(MAIN, "Response"))
        return self.inputs, self.outputs

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        node = ctx.node
        version = float(node.typeVersion)
        items = ctx.items
        if version >= 1.1 and not self._after_webhook(ctx):
            raise NodeOperationError("No Webhook node found in the workflow", node=node.name,
                                     description="Insert a Webhook node to your workflow and set the “Respond” parameter "
                                                 "to “Using Respond to Webhook Node” ")
        options = plain(parameter(ctx, "options", 0, {})) or {}
        respond_with = plain(parameter(ctx, "respondWith", 0, "firstIncomingItem"))
        headers: dict[str, str] = {}
        for entry in (options.get("responseHeaders") or {}).get("entries") or []:
            headers[str(entry.get("name")).lower()] = "" if entry.get("value") is None else _text(entry.get("value"))
        status = options.get("responseCode") or 200
        body: Any = MISSING
        if respond_with == "json":
            raw = plain(parameter(ctx, "responseBody", 0, '{\n  "myField": "value"\n}'))
            if raw:
                if isinstance(raw, (dict, list)):
                    body = raw
                else:
                    try:
                        body = json.loads(raw) if isinstance(raw, str) else raw
                    except ValueError:
                        raise NodeOperationError("Invalid JSON in 'Response Body' field", node=node.name,
                                                 description="Check that the syntax of the JSON in the 'Response Body' "
                                                             "parameter is valid") from None
        elif respond_with == "allIncomingItems":
            every = [item.get("json", {}) for item in items]
            body = _set_path(options["responseKey"], every) if options.get("responseKey") else every
        elif respond_with == "firstIncomingItem":
            first = items[0].get("json", {}) if items else {}
            body = _set_path(options["responseKey"], first) if options.get("responseKey") else first
        elif respond_with == "text":
            body = plain(parameter(ctx, "responseBody", 0, ""))
        elif respond_with == "redirect":
            headers["location"] = _text(plain(parameter(ctx, "redirectURL", 0, "")))
            status = options.get("responseCode") if options.get("responseCode") is not None else 307
        elif respond_with in ("jwt", "binary"):
            raise NodeOperationError(f'Node "{node.name}" responds with "{respond_with}", which mini-n8n does not support',
                                     node=node.name, description="Respond with JSON, text, items, a redirect or no data")
        elif respond_with != "noData":
            raise NodeOperationError(f'The Response Data option "{respond_with}" is not supported!', node=node.name)
        made: dict[str, Any] = {"headers": headers, "statusCode": status}
        if body is not MISSING:
            made = {"body": body, **made}
        ctx.run_metadata(RESPONSE_KEY, made)
        if _two_outputs(node.parameters, version):
            return [list(items), [{"json": {"response": made}}]]
        return [list(items)]

    @staticmethod
    def _after_webhook(ctx: NodeContext) -> bool:
        """Whether a Webhook-like node comes before this one (n8n's getParentNodes)."""
        workflow = ctx.workflow
        parents: dict[str, list[str]] = {}
        for source, _conn, _index, target in workflow.links():
            parents.setdefault(target.node, []).append(source)
        seen: set[str] = set()
        todo = [ctx.node.name]
        while todo:
            for parent in parents.get(todo.pop(), ()):
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        types = {n.name: n.type for n in workflow.nodes}
        return any(types.get(name) in WEBHOOK_TYPES for name in seen)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else json.dumps(value)
