"""The Credentials dialog's engine side: masking, an edit keeping a blank secret, missing credentials."""

from __future__ import annotations

import pytest

from engine.credential_book import CredentialBook, masked, missing_credentials
from engine.credentials import ChainedCredentialStore, CredentialError, EnvCredentialStore, FileCredentialStore
from engine.workflow import Node

KEY = "sk-proj-Abcdefghijklmnop0123456789wxyz"


@pytest.fixture
def book(tmp_path, monkeypatch) -> CredentialBook:  # type: ignore[no-untyped-def]
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", "OLLAMA_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return CredentialBook(ChainedCredentialStore(FileCredentialStore(tmp_path / "c.json"), EnvCredentialStore()))


def test_masked_never_shows_more_than_the_end() -> None:
    assert masked(KEY) == "sk-…wxyz"
    assert masked("short-key") == "••••••••"
    assert masked("") == ""


def test_entries_mask_secrets_and_a_blank_secret_is_kept(book: CredentialBook, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    info = book.save("openAiApi", " Work ", {"apiKey": KEY, "url": "http://127.0.0.1:1/v1", "organizationId": ""})
    [entry] = book.entries()
    assert entry.info == info and info.name == "Work"
    assert entry.values == {"url": "http://127.0.0.1:1/v1"} and entry.masked_secrets == {"apiKey": "sk-…wxyz"}
    assert KEY not in repr(entry)
    book.save("openAiApi", "Work", {"apiKey": "", "url": "http://127.0.0.1:2/v1"}, info.id)
    assert book.store.get("openAiApi", {"id": info.id}) == {"apiKey": KEY, "url": "http://127.0.0.1:2/v1"}
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-0123456789abcd")
    env = [e for e in book.entries() if not e.editable]
    assert [e.masked_secrets for e in env] == [{"apiKey": "sk-…abcd"}]
    with pytest.raises(CredentialError, match="needs a name"):
        book.save("openAiApi", "  ", {"apiKey": KEY})


def node(credentials: dict | None = None) -> Node:
    return Node.model_validate({"id": "1", "name": "OpenAI", "type": "@n8n/n8n-nodes-langchain.lmChatOpenAi",
                                "typeVersion": 1.2, "position": [0, 0], "parameters": {},
                                **({"credentials": credentials} if credentials else {})})


def test_missing_credentials_name_the_node_and_the_credential(book: CredentialBook, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    gone = node({"openAiApi": {"id": "gone", "name": "Old key"}})
    [problem] = missing_credentials(gone, ("openAiApi",), True, book.store)
    assert problem.startswith('Node "OpenAI" uses credential "Old key" (openAiApi), which is not in your credential store')
    assert missing_credentials(node(), ("openAiApi",), False, book.store) == []  # e.g. a local server's URL
    [problem] = missing_credentials(node(), ("openAiApi",), True, book.store)
    assert "has no openAiApi credential" in problem
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # the environment stands in, as it does when the node runs
    assert missing_credentials(gone, ("openAiApi",), True, book.store) == []


def test_the_run_error_names_the_missing_credential(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from engine.errors import NodeOperationError
    from nodes.models.openai_chat import OpenAIParams, chat_model

    with pytest.raises(NodeOperationError) as failed:
        chat_model(OpenAIParams(), {}, {"id": "gone", "name": "Old key"}, "OpenAI")
    assert failed.value.node == "OpenAI"
    assert 'credential "Old key" (openAiApi) is not in your credential store' in str(failed.value)


async def test_gemini_and_mistral_credentials_are_tested_against_their_model_lists(book: CredentialBook) -> None:
    from tests.peers.gemini_peer import GeminiPeer
    from tests.peers.mistral_peer import MistralPeer

    with GeminiPeer(api_key="gem-key-123456", model=("gemini-a", "gemini-b")) as gemini:
        ok = await book.check("googlePalmApi", {"host": gemini.url, "apiKey": "gem-key-123456"})
        refused = await book.check("googlePalmApi", {"host": gemini.url, "apiKey": "wrong-key-1234"})
    assert ok.ok and ok.message == f"Connection tested: 2 models at {gemini.url}"
    assert gemini.requests[0].headers["x-goog-api-key"] == "gem-key-123456"
    assert not refused.ok and "400" in refused.message
    with MistralPeer(api_key="mis-key-123456") as mistral:
        ok = await book.check("mistralCloudApi", {"url": mistral.base_url, "apiKey": "mis-key-123456"})
        refused = await book.check("mistralCloudApi", {"url": mistral.base_url, "apiKey": "wrong-key-1234"})
    assert ok.ok and ok.message == f"Connection tested: 1 model at {mistral.base_url}"
    assert not refused.ok and refused.message.endswith("refused the API key (401)")


async def test_header_auth_value_is_a_secret_and_needs_no_server(book: CredentialBook) -> None:
    """The MCP Client Tool's Header Auth: the value is masked and kept when left blank; nothing to test."""
    from engine.registry import builtin_registry

    mcp = builtin_registry().get("@n8n/n8n-nodes-langchain.mcpClientTool")
    forms = {form.type: form for form in book.types()}
    assert set(mcp.credential_types) <= set(forms)
    info = book.save("httpHeaderAuth", "Gateway", {"name": "X-Api-Key", "value": KEY})
    [entry] = book.entries()
    assert entry.values == {"name": "X-Api-Key"} and entry.masked_secrets == {"value": "sk-…wxyz"}
    book.save("httpHeaderAuth", "Gateway", {"name": "X-Key", "value": ""}, info.id)
    assert book.store.get("httpHeaderAuth", {"id": info.id}) == {"name": "X-Key", "value": KEY}
    result = await book.check("httpBearerAuth", {"token": KEY})
    assert not result.ok and result.message == "mini-n8n cannot test credentials of type httpBearerAuth"
