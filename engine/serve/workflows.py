"""The workflows a server serves, read from files and folders: public Chat Triggers by webhook id,
Webhook and Form triggers by method and path, Schedule Triggers; and a warning for each trigger
(or setting of one) that is not served, naming it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MiniN8nError
from ..workflow import Node, Workflow, load_workflow

CHAT_TRIGGER = "@n8n/n8n-nodes-langchain.chatTrigger"
WEBHOOK = "n8n-nodes-base.webhook"
FORM_TRIGGER = "n8n-nodes-base.formTrigger"
SCHEDULE_TRIGGER = "n8n-nodes-base.scheduleTrigger"
RESPOND = "n8n-nodes-base.respondToWebhook"


@dataclass(frozen=True)
class ChatEndpoint:
    """A public Chat Trigger served at /webhook/<webhook_id>/chat."""

    webhook_id: str
    workflow: Workflow
    trigger: Node
    source: str

    @property
    def options(self) -> dict:
        value = self.trigger.parameters.get("options")
        return value if isinstance(value, dict) else {}

    @property
    def streaming(self) -> bool:
        """Response mode "Streaming": the reply is n8n's streamed chunks (engine/streaming.py)."""
        return self.options.get("responseMode") == "streaming"


@dataclass(frozen=True)
class WebhookEndpoint:
    """A Webhook trigger served at /webhook/<path> for one HTTP method (`:name` segments are path
    parameters), or a Form Trigger at /form/<path> (GET shows it, POST submits it)."""

    kind: str  # "webhook" or "form"
    method: str
    path: str
    workflow: Workflow
    trigger: Node
    source: str
    response: Any  # nodes.triggers.webhook.ResponseSettings

    @property
    def segments(self) -> list[str]:
        return self.path.split("/")

    @property
    def dynamic(self) -> bool:
        return ":" in self.path

    def match(self, segments: list[str]) -> dict[str, str] | None:
        """The path parameters when `segments` (the URL's, after /webhook/) fit this dynamic path."""
        mine = self.segments
        if len(mine) != len(segments):
            return None
        params: dict[str, str] = {}
        for want, got in zip(mine, segments):
            if want.startswith(":"):
                params[want[1:]] = got
            elif want != got:
                return None
        return params


@dataclass(frozen=True)
class ScheduleEntry:
    """A Schedule Trigger the server's scheduler fires."""

    workflow: Workflow
    trigger: Node
    source: str


@dataclass
class Served:
    chats: dict[str, ChatEndpoint] = field(default_factory=dict)
    webhooks: list[WebhookEndpoint] = field(default_factory=list)
    schedules: list[ScheduleEntry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.chats or self.webhooks or self.schedules)


def workflow_files(targets: list[str]) -> list[Path]:
    """Each FILE, and the *.json files of each FOLDER (sorted); a missing path is an error."""
    files: list[Path] = []
    for target in targets:
        path = Path(target)
        if path.is_dir():
            files += sorted(p for p in path.glob("*.json") if p.is_file())
        elif path.is_file():
            files.append(path)
        else:
            raise MiniN8nError(f"{target}: no such file or folder")
    return files


def chat_endpoints(targets: list[str]) -> tuple[dict[str, ChatEndpoint], list[str]]:
    """The chat endpoints of the given workflows, and warnings for what is not served."""
    served = serve_targets(targets)
    return served.chats, served.warnings


def serve_targets(targets: list[str]) -> Served:
    """Everything the given workflows serve, and warnings for what they do not."""
    served = Served()
    taken: dict[tuple[str, str, str], WebhookEndpoint] = {}
    for path in workflow_files(targets):
        workflow = load_workflow(path)
        served.warnings += [f"{path}: {w}" for w in workflow.load_warnings]
        count = len(served.chats) + len(served.webhooks) + len(served.schedules)
        for node in workflow.nodes:
            if node.is_disabled:
                continue
            if node.type == CHAT_TRIGGER:
                _chat(served, path, workflow, node)
            elif node.type in (WEBHOOK, FORM_TRIGGER):
                endpoint = _webhook(served, path, workflow, node)
                if endpoint is None:
                    continue
                key = (endpoint.kind, endpoint.method, endpoint.path)
                other = taken.get(key)
                if other is not None:
                    raise MiniN8nError(f'{path}: the trigger "{node.name}" listens at {endpoint.method} /{endpoint.kind}/'
                                       f'{endpoint.path}, as "{other.trigger.name}" in {other.source} does; each must be unique')
                taken[key] = endpoint
                served.webhooks.append(endpoint)
            elif node.type == SCHEDULE_TRIGGER:
                served.schedules.append(ScheduleEntry(workflow, node, str(path)))
        if len(served.chats) + len(served.webhooks) + len(served.schedules) == count:
            served.warnings.append(f'{path}: nothing of "{workflow.name}" is served')
    return served


def _chat(served: Served, path: Path, workflow: Workflow, node: Node) -> None:
    endpoints, warnings = served.chats, served.warnings
    webhook_id = (node.model_extra or {}).get("webhookId")
    if not isinstance(webhook_id, str) or not webhook_id:
        warnings.append(f'{path}: the Chat Trigger "{node.name}" has no webhookId, so it has no URL; not served')
        return
    if node.parameters.get("public") is not True:
        warnings.append(f'{path}: the Chat Trigger "{node.name}" is not made publicly available (its "Make Chat '
                        'Publicly Available" is off), so n8n answers 404 at its URL and so does mini-n8n serve')
        return
    if node.parameters.get("authentication", "none") != "none":
        warnings.append(f'{path}: the Chat Trigger "{node.name}" asks for authentication '
                        f'"{node.parameters["authentication"]}", which mini-n8n serve does not support yet; not served')
        return
    response_mode = (node.parameters.get("options") or {}).get("responseMode", "lastNode")
    if response_mode not in ("lastNode", "streaming"):
        warnings.append(f'{path}: the Chat Trigger "{node.name}" answers with response mode "{response_mode}", '
                        'which mini-n8n serve does not support yet (only "When Last Node Finishes" and '
                        '"Streaming"); not served')
        return
    if webhook_id in endpoints:
        other = endpoints[webhook_id]
        raise MiniN8nError(f'{path}: the Chat Trigger "{node.name}" has the webhookId {webhook_id} of '
                           f'"{other.trigger.name}" in {other.source}; each must be unique')
    endpoints[webhook_id] = ChatEndpoint(webhook_id, workflow, node, str(path))


def _responds(workflow: Workflow, trigger: str) -> bool:
    """Whether a Respond to Webhook node follows the trigger (n8n's getChildNodes)."""
    children: dict[str, list[str]] = {}
    for source, _conn, _index, target in workflow.links():
        children.setdefault(source, []).append(target.node)
    types = {n.name: n.type for n in workflow.nodes if not n.is_disabled}
    seen: set[str] = set()
    todo = [trigger]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return any(types.get(name) == RESPOND for name in seen)


def _webhook(served: Served, path: Path, workflow: Workflow, node: Node) -> WebhookEndpoint | None:
    """The endpoint of a Webhook or Form trigger, or None with a warning saying why it is not served."""
    from nodes.triggers import form_trigger, webhook

    version = float(node.typeVersion)
    webhook_id = (node.model_extra or {}).get("webhookId")
    webhook_id = webhook_id if isinstance(webhook_id, str) and webhook_id else None
    label = "Webhook" if node.type == WEBHOOK else "Form Trigger"
    if any(isinstance(v, str) and v.startswith("=") for v in (node.parameters.get("path"), node.parameters.get("httpMethod"))):
        served.warnings.append(f'{path}: the {label} "{node.name}" has an expression for its path or method, '
                               "which mini-n8n serve does not evaluate; not served")
        return None
    if node.type == WEBHOOK:
        refused = webhook.refused(node.parameters, version)
        route = webhook.webhook_path(node.parameters, webhook_id)
        method = webhook.method_of(node.parameters)
        settings = webhook.response_settings(node.parameters, version)
        kind = "webhook"
    else:
        refused = form_trigger.refused(node.parameters, version)
        route = form_trigger.form_path(node.parameters, webhook_id)
        method = "POST"
        mode = str(node.parameters.get("responseMode", "onReceived"))
        settings = webhook.ResponseSettings(mode, 200, "noData" if mode == "lastNode" else None)
        kind = "form"
    if refused:
        served.warnings.append(f'{path}: the {label} "{node.name}" is not served: ' + "; ".join(refused))
        return None
    if not route:
        served.warnings.append(f'{path}: the {label} "{node.name}" has neither a path nor a webhookId, so it has no URL; '
                               "not served")
        return None
    if ":" in route and not webhook_id and kind == "webhook":
        served.warnings.append(f'{path}: the Webhook "{node.name}" has path parameters but no webhookId (n8n puts it '
                               "before such a path); not served")
        return None
    responds = _responds(workflow, node.name)
    if settings.mode == "responseNode" and not responds:
        served.warnings.append(f'{path}: the {label} "{node.name}" is not served: No Respond to Webhook node found in the '
                               "workflow (its Respond is “Using Respond to Webhook Node”)")
        return None
    if responds and settings.mode != "responseNode" and (kind == "form" or version >= 2):
        served.warnings.append(f'{path}: the {label} "{node.name}" is not served: Webhook node not correctly configured '
                               "(a Respond to Webhook node follows it, but its Respond is not “Using Respond to Webhook Node”)")
        return None
    return WebhookEndpoint(kind, method, route, workflow, node, str(path), settings)
