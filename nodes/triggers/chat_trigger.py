"""Chat Trigger: starts a workflow with one chat message, `{sessionId, action, chatInput}`."""

from __future__ import annotations

import uuid
from typing import Any

from engine.connection_types import MAIN, PortSpec
from engine.context import NodeContext
from engine.node_type import NodeType
from engine.requests import EngineResponse
from engine.run_data import Item
from nodes.ignored_parameters import note_ignored


def chat_item(message: str, session_id: str | None = None) -> Item:
    """The item a Chat Trigger emits for one message, as n8n's chat trigger does."""
    return {"json": {"sessionId": session_id or uuid.uuid4().hex, "action": "sendMessage", "chatInput": message}}


class ChatTrigger(NodeType):
    type = "@n8n/n8n-nodes-langchain.chatTrigger"
    version = 1.1
    versions = (1, 1.1, 1.2, 1.3, 1.4)
    display_name = "Chat Trigger"
    default_name = "When chat message received"
    description = "Starts the workflow with each message typed in the Chat panel"
    group = "Triggers"
    icon = "chat-trigger"
    inputs = ()
    outputs = (PortSpec(MAIN),)
    is_trigger = True
    is_chat_trigger = True
    # `mini-n8n serve` reads these (engine/serve): it serves a public chat without authentication
    # answering when the last node finishes or streaming, and loads a session from memory
    implemented_parameters = frozenset({"public", "authentication", "options", "options.responseMode",
                                        "options.loadPreviousSession"})
    unsupported_parameters = {
        **dict.fromkeys(("mode", "initialMessages", "options.title", "options.subtitle", "options.customCss",
                         "options.getStarted", "options.inputPlaceholder", "options.showWelcomeScreen"),
                        "n8n's hosted chat page is not served, so this setting of it is not used (a run-log note names it)"),
        **dict.fromkeys(("availableInChat", "agentName", "agentDescription"),
                        "n8n's Chat hub is not there, so the workflow is not listed in it (a run-log note names it)"),
        "options.allowedOrigins": "`mini-n8n serve` answers chat requests from any origin (a run-log note names it)",
        "options.allowFileUploads": "files sent with a message are passed on whether or not uploads are allowed "
                                    "(a run-log note names it)",
        "options.allowedFilesMimeTypes": "files of any type sent with a message are passed on (a run-log note names it)",
    }

    @classmethod
    def example_output(cls) -> dict[str, Any] | None:
        return dict(chat_item("Hello", "editor")["json"])

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        note_ignored(ctx, self.unsupported_parameters, self.unsupported_parameters)
        items = []
        for item in ctx.items:
            data = dict(item.get("json", {}))
            data.setdefault("sessionId", uuid.uuid4().hex)
            data.setdefault("action", "sendMessage")
            data.setdefault("chatInput", "")
            items.append({"json": data, "binary": item["binary"]} if item.get("binary") else {"json": data})  # uploaded files
        return [items]
