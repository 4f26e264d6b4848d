"""The Agent's Automatically Passthrough Binary Images option (on unless turned off): the input
item's images and text files go to the model as one more user message after the prompt, as
n8n's Tools Agent sends them: an image as a `data:` URL part, a text file (text/*, JSON, XML,
CSV, YAML) as `File: <name>\\nContent:\\n<text>`. Other files are left out, as n8n leaves them;
a file n8n keeps by reference (an `id`, not its data) is an error naming it. The message is not
saved to memory."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from engine.chat import ChatMessage
from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.run_data import Item

_TEXT_TYPES = ("application/json", "application/xml", "application/csv", "application/x-yaml", "application/yaml")


def is_image(mime: str) -> bool:
    return mime.startswith("image/")


def is_text(mime: str) -> bool:
    return mime.startswith("text/") or mime in _TEXT_TYPES


def _text_of(node: str, key: str, data: str) -> str:
    encoded = data.split("base64,", 1)[1] if "base64," in data else data
    try:
        return base64.b64decode(encoded).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        raise NodeOperationError(f'The binary file "{key}" of the input item is not base64 data', node=node) from None


def binary_parts(node: str, binary: dict[str, Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for key, file in binary.items():
        mime = str(file.get("mimeType") or "") if isinstance(file, dict) else ""
        if not (is_image(mime) or is_text(mime)):
            continue
        if file.get("id") and not file.get("data"):
            raise NodeOperationError(
                f'The binary file "{key}" of the input item is kept by reference ({file["id"]}), which mini-n8n cannot read',
                node=node, description="Turn off Automatically Passthrough Binary Images, or give the file's data inline")
        data = str(file.get("data") or "")
        if is_image(mime):
            url = data if "base64" in data else f"data:{mime};base64,{data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:
            parts.append({"type": "text", "text": f"File: {file.get('fileName') or 'attachment'}\nContent:\n{_text_of(node, key, data)}"})
    return parts


def binary_messages(ctx: NodeContext, item: Item, params: Any) -> list[ChatMessage]:
    """The extra user message for this item's files ([] when none or the option is off)."""
    binary = item.get("binary")
    if not isinstance(binary, dict) or not params.options.passthroughBinaryImages:
        return []
    parts = binary_parts(ctx.node.name, binary)
    return [ChatMessage(role="user", content="", parts=parts)] if parts else []
