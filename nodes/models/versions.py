"""Chat model typeVersions as n8n 1.123 maps them, kept apart from the request code.

OpenAI Chat Model (lmChatOpenAi) v1–v1.3: up to v1.1 `model` is a plain text parameter whose
default is gpt-4o-mini; from v1.2 it is a resource locator whose default is gpt-4.1-mini; v1
shows `options.baseURL` (later versions take the URL from the credential, and still honour an
`options.baseURL` a file carries); v1.3 adds `responsesApiEnabled` (default on).
Ollama Chat Model (lmChatOllama) has only v1.
"""

from __future__ import annotations

OPENAI_VERSIONS = (1, 1.1, 1.2, 1.3)
OLLAMA_VERSIONS = (1,)


def openai_default_model(type_version: float) -> str:
    """The model a lmChatOpenAi node of this version uses when its file names none."""
    return "gpt-4o-mini" if float(type_version) <= 1.1 else "gpt-4.1-mini"
