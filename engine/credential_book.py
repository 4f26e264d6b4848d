"""What the editor's Credentials dialog does with the credential store, secrets never shown back.

The fields of each credential type n8n's model nodes and the MCP Client Tool use, credentials listed with their secrets
masked, an edit that keeps a stored secret the user left blank, a connection test (a real
request to the server's model list) and the problem of a node whose credential is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .credentials import (
    SECRET_FIELDS, ChainedCredentialStore, CredentialError, CredentialInfo, credential_ref, describe_credential,
    scrub_secret,
)
from .workflow import Node

CHECK_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class CredentialField:
    name: str  # the key in the credential's data, as n8n names it
    title: str
    default: str = ""  # what an empty value means to the node
    secret: bool = False


@dataclass(frozen=True)
class CredentialForm:
    type: str
    title: str
    fields: tuple[CredentialField, ...]
    base_field: str  # the field holding the server's URL ("" for a credential without a server)
    models_path: str  # the server's model list, requested by the connection test ("": no test)
    key_header: str = "Authorization"  # how the connection test sends the key
    key_prefix: str = "Bearer "
    models_key: str = "data"  # the list in the model list's answer


FORMS: dict[str, CredentialForm] = {
    "openAiApi": CredentialForm(
        "openAiApi", "OpenAI API",
        (CredentialField("apiKey", "API Key", secret=True),
         CredentialField("organizationId", "Organization ID (optional)"),
         CredentialField("url", "Base URL", "https://api.openai.com/v1")),
        "url", "models"),
    "ollamaApi": CredentialForm(
        "ollamaApi", "Ollama",
        (CredentialField("baseUrl", "Base URL", "http://127.0.0.1:11434"),
         CredentialField("apiKey", "API Key (optional)", secret=True)),
        "baseUrl", "api/tags", models_key="models"),
    "googlePalmApi": CredentialForm(
        "googlePalmApi", "Google Gemini(PaLM) API",
        (CredentialField("host", "Host", "https://generativelanguage.googleapis.com"),
         CredentialField("apiKey", "API Key", secret=True)),
        "host", "v1beta/models", key_header="x-goog-api-key", key_prefix="", models_key="models"),
    "mistralCloudApi": CredentialForm(
        "mistralCloudApi", "Mistral Cloud API",
        (CredentialField("apiKey", "API Key", secret=True),
         CredentialField("url", "Base URL (not in n8n: another server with Mistral's API)", "https://api.mistral.ai/v1")),
        "url", "models"),
    "httpBearerAuth": CredentialForm(
        "httpBearerAuth", "Bearer Auth", (CredentialField("token", "Bearer Token", secret=True),), "", ""),
    "httpHeaderAuth": CredentialForm(
        "httpHeaderAuth", "Header Auth",
        (CredentialField("name", "Header Name"), CredentialField("value", "Header Value", secret=True)), "", ""),
}


def secret_names(cred_type: str) -> frozenset[str]:
    """The fields of a credential type never shown back: the form's secret fields and the usual keys."""
    form = FORMS.get(cred_type)
    return SECRET_FIELDS | {f.name for f in form.fields if f.secret} if form else SECRET_FIELDS


def form_for(cred_type: str) -> CredentialForm:
    """The form of a credential type: a known one, else an API key alone (which cannot be tested)."""
    return FORMS.get(cred_type) or CredentialForm(cred_type, cred_type, (CredentialField("apiKey", "API Key", secret=True),),
                                                  "", "")


def masked(secret: str) -> str:
    """A secret as a list may show it: its last four characters at most, never the whole."""
    if not secret:
        return ""
    if len(secret) < 12:
        return "•" * 8
    return f"{secret[:3]}…{secret[-4:]}"


@dataclass(frozen=True)
class CredentialEntry:
    """One credential as the dialog shows it: plain fields as they are, secrets masked."""

    info: CredentialInfo
    values: dict[str, str]  # non-secret fields
    masked_secrets: dict[str, str]  # secret field -> masked form
    editable: bool  # False for credentials from the environment


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    message: str


class CredentialBook:
    """List, create, edit, delete and test credentials in the user's store."""

    def __init__(self, store: ChainedCredentialStore) -> None:
        self.store = store

    def types(self) -> list[CredentialForm]:
        return list(FORMS.values())

    def entries(self) -> list[CredentialEntry]:
        out = []
        for info in self.store.list():
            data = self.store.get(info.type, {"id": info.id}) or {}
            secrets = secret_names(info.type)
            out.append(CredentialEntry(
                info,
                {k: str(v) for k, v in data.items() if k not in secrets},
                {k: masked(str(v)) for k, v in data.items() if k in secrets and v},
                editable=not info.id.startswith("env:"),
            ))
        return out

    def _stored(self, cred_type: str, cred_id: str | None) -> dict[str, Any]:
        if not cred_id:
            return {}
        return dict(self.store.get(cred_type, {"id": cred_id}) or {})

    def _merged(self, cred_type: str, data: Mapping[str, str], cred_id: str | None) -> dict[str, str]:
        """The data to keep: what was typed, a blank secret keeping the stored one, empty fields left out."""
        stored = self._stored(cred_type, cred_id)
        secrets = secret_names(cred_type)
        merged = {}
        for name, value in data.items():
            value = value.strip()
            if not value and name in secrets and stored.get(name):
                value = str(stored[name])
            if value:
                merged[name] = value
        return merged

    def save(self, cred_type: str, name: str, data: Mapping[str, str], cred_id: str | None = None) -> CredentialInfo:
        """Create (no id) or replace a credential; a secret left blank keeps the stored one."""
        if not name.strip():
            raise CredentialError("a credential needs a name")
        return self.store.save(cred_type, name.strip(), self._merged(cred_type, data, cred_id), cred_id)

    def delete(self, cred_id: str) -> bool:
        return self.store.delete(cred_id)

    async def check(self, cred_type: str, data: Mapping[str, str], cred_id: str | None = None) -> CheckResult:
        """Ask the server for its model list with these values: reachable, key accepted, how many models."""
        form = FORMS.get(cred_type)
        if form is None or not form.models_path:
            return CheckResult(False, f"mini-n8n cannot test credentials of type {cred_type}")
        values = self._merged(cred_type, data, cred_id)
        default = next(f.default for f in form.fields if f.name == form.base_field)
        base = (values.get(form.base_field) or default).rstrip("/")
        if "://" not in base:
            base = "http://" + base
        url = f"{base}/{form.models_path}"
        key = values.get("apiKey", "")
        headers = {"Accept": "application/json"}
        if key:
            headers[form.key_header] = f"{form.key_prefix}{key}"
        if values.get("organizationId"):
            headers["OpenAI-Organization"] = values["organizationId"]
        import httpx  # only for a connection test: listing credentials does without it

        try:
            async with httpx.AsyncClient(timeout=CHECK_TIMEOUT_S, follow_redirects=False, trust_env=False) as client:
                reply = await client.get(url, headers=headers)
        except httpx.TimeoutException:
            return CheckResult(False, f"{url} did not answer within {CHECK_TIMEOUT_S:g} s")
        except httpx.HTTPError as exc:
            return CheckResult(False, scrub_secret(f"cannot reach {url}: {exc}", key))
        except ValueError as exc:  # an URL httpx cannot use
            return CheckResult(False, f"the base URL {base} is not usable: {exc}")
        if reply.status_code in (401, 403):
            return CheckResult(False, f"{url} refused the API key ({reply.status_code})")
        if reply.status_code != 200:
            return CheckResult(False, f"{url} answered {reply.status_code} {reply.reason_phrase}")
        try:
            body = reply.json()
        except ValueError:
            return CheckResult(False, f"{url} answered, but not with JSON: is this the model server?")
        models = body.get(form.models_key) if isinstance(body, dict) else None
        if not isinstance(models, list):
            return CheckResult(False, f"{url} answered without a model list: is this the model server?")
        return CheckResult(True, f"Connection tested: {len(models)} model{'s' if len(models) != 1 else ''} at {base}")


def missing_credentials(node: Node, credential_types: tuple[str, ...], needs_key: bool,
                        store: ChainedCredentialStore) -> list[str]:
    """What a run of this node would lack: a chosen credential that is not in the store (nor the
    environment), or no credential where the node needs one. Each names the node."""
    problems = []
    for cred_type in credential_types:
        ref = credential_ref(node.credentials, cred_type)
        try:
            found = store.get(cred_type, ref)
        except CredentialError as exc:
            problems.append(f'Node "{node.name}": {exc}')
            continue
        if found:
            continue
        if ref:
            problems.append(f'Node "{node.name}" uses {describe_credential(cred_type, ref)}, which is not in your '
                            "credential store: choose or create one (Credentials…)")
        elif needs_key:
            problems.append(f'Node "{node.name}" has no {cred_type} credential: choose or create one (Credentials…)')
    return problems
