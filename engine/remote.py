"""The executions of a `mini-n8n serve` server, read over its REST API (no Qt: the editor's bridge
drives it), so a production run is looked at and debugged with the desktop's tools.

A server is kept like a model credential, in the user's credential file: n8n's `n8nApi`
credential type (`baseUrl`, the API's root URL ending in /api/v1, and `apiKey`, sent in the
X-N8N-API-KEY header). Lists show its URL and a masked key, never the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .credentials import ChainedCredentialStore, CredentialError
from .errors import MiniN8nError
from .hooks import NodeAfter
from .run_data import ExecutionState, TaskData
from .store import ExecutionSummary

CREDENTIAL_TYPE = "n8nApi"
API_PATH = "/api/v1"
API_KEY_HEADER = "X-N8N-API-KEY"
TIMEOUT_S = 15.0
LIST_LIMIT = 100


class ServerError(MiniN8nError):
    """A server could not be asked, or refused (its message, with what was asked)."""


@dataclass(frozen=True)
class Server:
    """A saved server: its credential id and name, the API's URL and the key masked."""

    id: str
    name: str
    base_url: str
    masked_key: str

    @property
    def label(self) -> str:
        return f"{self.name} — {self.base_url.removesuffix(API_PATH)}"


def api_url(text: str) -> str:
    """The API root of a server URL as typed (`http://host:5678`, or with /api/v1 already)."""
    url = text.strip().rstrip("/")
    if not url.startswith(("http://", "https://")) or len(url.split("://", 1)[1]) == 0:
        raise ServerError(f'"{text}" is not an http(s) URL of a server')
    return url if url.endswith(API_PATH) else url + API_PATH


class ServerBook:
    """The servers saved in the credential store."""

    def __init__(self, store: ChainedCredentialStore) -> None:
        self.store = store

    def servers(self) -> list[Server]:
        from .credential_book import masked

        found = []
        for info in self.store.list(CREDENTIAL_TYPE):
            data = self.store.get(CREDENTIAL_TYPE, {"id": info.id}) or {}
            if data.get("baseUrl"):
                found.append(Server(info.id, info.name, str(data["baseUrl"]), masked(str(data.get("apiKey", "")))))
        return found

    def save(self, name: str, url: str, api_key: str) -> Server:
        if not name.strip():
            raise CredentialError("a server needs a name")
        if not api_key.strip():
            raise CredentialError("a server needs its API key (the MINI_N8N_API_KEY it was started with)")
        from .credential_book import masked

        base = api_url(url)
        info = self.store.save(CREDENTIAL_TYPE, name.strip(), {"baseUrl": base, "apiKey": api_key.strip()})
        return Server(info.id, info.name, base, masked(api_key.strip()))

    def forget(self, server_id: str) -> bool:
        return self.store.delete(server_id)

    def client(self, server_id: str) -> "ServerClient":
        data = self.store.get(CREDENTIAL_TYPE, {"id": server_id})
        if not data or not data.get("baseUrl"):
            raise ServerError("that server is no longer saved")
        return ServerClient(str(data["baseUrl"]), str(data.get("apiKey", "")))


def _ms(iso: str | None) -> float | None:
    if not iso:
        return None
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000.0


def summary_of(row: dict[str, Any]) -> ExecutionSummary:
    """A listed execution as the store's summary (n8n's "canceled" read back as ours)."""
    status = "cancelled" if row.get("status") == "canceled" else str(row.get("status"))
    return ExecutionSummary(id=str(row["id"]), workflow_name=str(row.get("workflowName") or ""), mode=str(row.get("mode")),
                            status=status, started_at=_ms(row.get("startedAt")) or 0.0, stopped_at=_ms(row.get("stoppedAt")),
                            error=row.get("error"))


class ServerClient:
    """One server's executions API."""

    def __init__(self, base_url: str, api_key: str, timeout_s: float = TIMEOUT_S) -> None:
        self.base_url = base_url
        self._headers = {API_KEY_HEADER: api_key}
        self.timeout_s = timeout_s

    async def _get(self, path: str, params: dict[str, str] | None = None) -> Any:
        import httpx  # not before the editor's first frame: only a server's list needs it

        url = self.base_url + path
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s) as client:
                reply = await client.get(url, params=params, headers=self._headers)
        except httpx.HTTPError as exc:
            raise ServerError(f"cannot reach the server at {self.base_url}: {exc or type(exc).__name__}") from None
        if reply.status_code != 200:
            try:
                said = reply.json().get("message")
            except ValueError:
                said = None
            raise ServerError(f"the server at {self.base_url} answered {reply.status_code}"
                              f"{': ' + said if said else ''} (GET {path})")
        try:
            return reply.json()
        except ValueError:
            raise ServerError(f"the server at {self.base_url} answered with text that is not JSON (GET {path})") from None

    async def executions(self, limit: int = LIST_LIMIT) -> list[ExecutionSummary]:
        doc = await self._get("/executions", {"limit": str(limit)})
        try:
            return [summary_of(row) for row in doc["data"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise ServerError(f"the server at {self.base_url} listed executions in a shape mini-n8n does not know ({exc})") from None

    async def execution(self, execution_id: str) -> tuple[ExecutionState, list[NodeAfter]]:
        """A stored execution as the server holds it, and its runs as the events they were."""
        doc = await self._get(f"/executions/{execution_id}/export")
        try:
            state = ExecutionState.from_json(doc["execution"])
            by_node = state.run_data
            events = []
            for node, run_index in doc["order"]:
                task: TaskData = by_node[node][run_index]
                events.append(NodeAfter(state.id, node, run_index, task,
                                        task.metadata if task.metadata.get("node") is not None else None))
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise ServerError(f"the server at {self.base_url} sent execution {execution_id} in a shape mini-n8n "
                              f"does not know ({exc})") from None
        return state, events
