"""Authentication of the HTTP Request Tool, as n8n's toolHttpRequest applies it.

`authentication`: `none`, `genericCredentialType` (`genericAuthType`: httpBasicAuth,
httpDigestAuth, httpHeaderAuth, httpQueryAuth, httpCustomAuth) or `predefinedCredentialType`
(`nodeCredentialType`: a service's credential type, applied as that type's `authenticate`
definition says). The secret comes from the credentials store and never reaches the model;
errors are scrubbed of it. n8n refuses a `{placeholder}` in the host when authenticating, so
the model cannot send the credential elsewhere; so do we.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

import httpx

from engine.credentials import CredentialError, credential_ref, scrub_secret
from engine.errors import NodeOperationError

# Predefined credential types: where each puts its secret (n8n's `authenticate` definitions).
# A value is a function of the credential's data giving (headers, query parameters).
Apply = Callable[[dict[str, Any]], tuple[dict[str, str], dict[str, str]]]


def _bearer(field_name: str, prefix: str = "Bearer ", suffix: str = "") -> Apply:
    return lambda c: ({"Authorization": f"{prefix}{c.get(field_name, '')}{suffix}"}, {})


def _with_custom_header(headers: dict[str, str], c: dict[str, Any]) -> dict[str, str]:
    """openAiApi and anthropicApi add the credential's optional custom header."""
    if c.get("header") and isinstance(c.get("headerName"), str) and c["headerName"] and isinstance(c.get("headerValue"), str):
        headers[c["headerName"]] = c["headerValue"]
    return headers


def _openai(c: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    headers = {"Authorization": f"Bearer {c.get('apiKey', '')}"}
    if c.get("organizationId") is not None:
        headers["OpenAI-Organization"] = str(c["organizationId"])
    return _with_custom_header(headers, c), {}


def _notion(c: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    return {"Authorization": f"Bearer {c.get('apiKey', '')} ", "Notion-Version": "2022-02-22"}, {}


PREDEFINED: dict[str, Apply] = {
    "httpBearerAuth": _bearer("token"),
    "httpHeaderAuth": lambda c: ({str(c.get("name", "")): str(c.get("value", ""))}, {}),
    "openAiApi": _openai,
    "anthropicApi": lambda c: (_with_custom_header({"x-api-key": str(c.get("apiKey", ""))}, c), {}),
    "openRouterApi": _bearer("apiKey"),
    "notionApi": _notion,
    "airtableTokenApi": _bearer("accessToken"),
    "githubApi": _bearer("accessToken", "token "),
    "slackApi": _bearer("accessToken"),
    "jinaAiApi": _bearer("apiKey"),
    "perplexityApi": _bearer("apiKey"),
    "serpApi": lambda c: ({}, {"api_key": str(c.get("apiKey", ""))}),
}
GENERIC = ("httpBasicAuth", "httpBearerAuth", "httpDigestAuth", "httpHeaderAuth", "httpQueryAuth", "httpCustomAuth")


@dataclass
class RequestAuth:
    """What authentication adds to a request: headers, query and body fields, an httpx auth."""

    headers: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)
    auth: httpx.Auth | None = None
    secrets: list[str] = field(default_factory=list)

    def scrub(self, text: str) -> str:
        for secret in self.secrets:
            text = scrub_secret(text, secret)
        return text


def check_host(url: str, authentication: str, node: str) -> None:
    """n8n's rule: no placeholder in the host of an authenticated request."""
    if authentication == "none":
        return
    host = urlsplit(url).netloc.rsplit("@", 1)[-1]
    if "{" in host and "}" in host:
        raise NodeOperationError(
            "Can't use a placeholder for the domain when using authentication", node=node,
            description="This is for security reasons, to prevent the model accidentally sending your credentials to an unauthorized domain",
        )


def _credential(services: Any, node_credentials: dict[str, Any] | None, cred_type: str, node: str,
                label: str = "HTTP Request Tool") -> dict[str, Any]:
    ref = credential_ref(node_credentials, cred_type)
    try:
        found = services.credentials.get(cred_type, ref)
    except CredentialError as exc:
        raise NodeOperationError(str(exc), node=node) from None
    if not found:
        raise NodeOperationError(
            f'{label} "{node}" needs a {cred_type} credential, and none is stored',
            node=node,
            description="Add it in the editor's credentials, or to credentials.json under that type",
        )
    return dict(found)


def _secrets(data: dict[str, Any]) -> list[str]:
    return [str(v) for k, v in data.items() if isinstance(v, str) and k not in ("name", "user", "headerName", "url") and v]


def request_auth(
    authentication: str, generic_type: str, predefined_type: str, services: Any,
    node_credentials: dict[str, Any] | None, node: str, label: str = "HTTP Request Tool",
    digest_credential: str = "httpBasicAuth",
) -> RequestAuth:
    """What the node's authentication adds to its requests (nothing for `none`); `label` names
    the node's kind in errors."""
    if authentication == "none":
        return RequestAuth()
    if authentication == "predefinedCredentialType":
        apply = PREDEFINED.get(predefined_type)
        if apply is None:
            raise NodeOperationError(
                f'{label} "{node}" uses the predefined credential type "{predefined_type}", which mini-n8n '
                "does not apply yet",
                node=node,
                description=f"Supported: {', '.join(sorted(PREDEFINED))}; or choose Generic Credential Type "
                            "(Header Auth, Query Auth, Basic Auth)",
            )
        data = _credential(services, node_credentials, predefined_type, node, label)
        headers, query = apply(data)
        return RequestAuth(headers=headers, query=query, secrets=_secrets(data))
    if authentication != "genericCredentialType":
        raise NodeOperationError(f'{label} "{node}": unknown authentication "{authentication}"', node=node)
    if generic_type in ("httpBasicAuth", "httpDigestAuth"):
        # n8n's tool reads httpBasicAuth for both; its HTTP Request node reads httpDigestAuth for digest
        cred_type = digest_credential if generic_type == "httpDigestAuth" else "httpBasicAuth"
        data = _credential(services, node_credentials, cred_type, node, label)
        user, password = str(data.get("user", "")), str(data.get("password", ""))
        auth: httpx.Auth = httpx.DigestAuth(user, password) if generic_type == "httpDigestAuth" else httpx.BasicAuth(user, password)
        return RequestAuth(auth=auth, secrets=_secrets(data))
    if generic_type == "httpBearerAuth":
        data = _credential(services, node_credentials, generic_type, node, label)
        return RequestAuth(headers={"Authorization": f"Bearer {data.get('token', '')}"}, secrets=_secrets(data))
    if generic_type == "httpHeaderAuth":
        data = _credential(services, node_credentials, generic_type, node, label)
        return RequestAuth(headers={str(data.get("name", "")): str(data.get("value", ""))}, secrets=_secrets(data))
    if generic_type == "httpQueryAuth":
        data = _credential(services, node_credentials, generic_type, node, label)
        return RequestAuth(query={str(data.get("name", "")): str(data.get("value", ""))}, secrets=_secrets(data))
    if generic_type == "httpCustomAuth":
        data = _credential(services, node_credentials, generic_type, node, label)
        try:
            custom = json.loads(data.get("json") or "{}")
        except ValueError:
            raise NodeOperationError("Invalid Custom Auth JSON", node=node) from None
        if not isinstance(custom, dict):
            raise NodeOperationError("Invalid Custom Auth JSON", node=node)
        secrets = [str(v) for part in ("headers", "qs", "body") for v in (custom.get(part) or {}).values() if isinstance(v, str) and v]
        return RequestAuth(headers={k: str(v) for k, v in (custom.get("headers") or {}).items()},
                           query={k: str(v) for k, v in (custom.get("qs") or {}).items()},
                           body=dict(custom.get("body") or {}), secrets=secrets)
    if generic_type in ("oAuth1Api", "oAuth2Api"):
        raise NodeOperationError(
            f'{label} "{node}" uses {generic_type}, which mini-n8n does not support',
            node=node, description="Use Header Auth with an access token instead",
        )
    raise NodeOperationError(f"The type {generic_type} is not supported", node=node)
