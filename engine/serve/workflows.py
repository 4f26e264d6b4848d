"""The workflows a server serves: read from files and folders, indexed by their chat webhook ids."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import MiniN8nError
from ..workflow import Node, Workflow, load_workflow

CHAT_TRIGGER = "@n8n/n8n-nodes-langchain.chatTrigger"
WEBHOOK_TRIGGERS = ("n8n-nodes-base.webhook", "n8n-nodes-base.formTrigger", "n8n-nodes-base.scheduleTrigger")


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
    endpoints: dict[str, ChatEndpoint] = {}
    warnings: list[str] = []
    for path in workflow_files(targets):
        workflow = load_workflow(path)
        warnings += [f"{path}: {w}" for w in workflow.load_warnings]
        served = False
        for node in workflow.nodes:
            if node.is_disabled:
                continue
            if node.type == CHAT_TRIGGER:
                webhook_id = (node.model_extra or {}).get("webhookId")
                if not isinstance(webhook_id, str) or not webhook_id:
                    warnings.append(f'{path}: the Chat Trigger "{node.name}" has no webhookId, so it has no URL; not served')
                    continue
                if node.parameters.get("public") is not True:
                    warnings.append(f'{path}: the Chat Trigger "{node.name}" is not made publicly available (its "Make Chat '
                                    'Publicly Available" is off), so n8n answers 404 at its URL and so does mini-n8n serve')
                    continue
                if node.parameters.get("authentication", "none") != "none":
                    warnings.append(f'{path}: the Chat Trigger "{node.name}" asks for authentication '
                                    f'"{node.parameters["authentication"]}", which mini-n8n serve does not support yet; not served')
                    continue
                response_mode = (node.parameters.get("options") or {}).get("responseMode", "lastNode")
                if response_mode not in ("lastNode", "streaming"):
                    warnings.append(f'{path}: the Chat Trigger "{node.name}" answers with response mode "{response_mode}", '
                                    'which mini-n8n serve does not support yet (only "When Last Node Finishes" and '
                                    '"Streaming"); not served')
                    continue
                if webhook_id in endpoints:
                    other = endpoints[webhook_id]
                    raise MiniN8nError(f'{path}: the Chat Trigger "{node.name}" has the webhookId {webhook_id} of '
                                       f'"{other.trigger.name}" in {other.source}; each must be unique')
                endpoints[webhook_id] = ChatEndpoint(webhook_id, workflow, node, str(path))
                served = True
            elif node.type in WEBHOOK_TRIGGERS:
                warnings.append(f'{path}: the trigger "{node.name}" ({node.type}) is not served by mini-n8n serve yet')
        if not served:
            warnings.append(f'{path}: nothing of "{workflow.name}" is served')
    return endpoints, warnings
