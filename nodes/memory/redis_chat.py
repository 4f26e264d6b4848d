"""Redis Chat Memory (n8n's `memoryRedisChat`, v1–v1.5): conversations in Redis lists.

As LangChain's RedisChatMessageHistory, which n8n uses: the session ID is the key of a list;
each message is LPUSHed as the JSON of its stored form, so the list reads newest first and is
reversed when loaded; with a Session Time To Live the key expires that many seconds after the
last message. From v1.3 the Agent gets the last `contextWindowLength` turns, before that all.
The session key per version as n8n's (v1 `sessionKey`, v1.1 `{{ $json.sessionId }}`, v1.2+ the
Session ID option). The `redis` credential gives host, port, database, user (from v1.5),
password and ssl; the password never appears in an error.
"""

import json
from typing import Any, Literal

from pydantic import Field

from engine.chat import ChatMessage
from engine.connection_types import AI_MEMORY, PortSpec
from engine.context import SupplyContext
from engine.credentials import CredentialError, credential_ref, scrub_secret
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType

from .buffer_window import session_id
from .stored_messages import from_stored, stored, window

CREDENTIAL_TYPE = "redis"


class RedisMemoryParams(NodeParams):
    sessionIdType: Literal["fromInput", "customKey"] = Field("fromInput", title="Session ID")
    sessionKey: str = Field("={{ $json.sessionId }}", title="Key")
    sessionTTL: int = Field(0, ge=0, title="Session Time To Live", description="Seconds; 0: never expires")
    contextWindowLength: int = Field(5, ge=1, le=1000, title="Context Window Length")


class RedisMemory:
    """One session's list; a client per load or save."""

    def __init__(self, options: dict[str, Any], key: str, ttl: int, turns: int | None, node: str) -> None:
        self.options = options
        self.key = key
        self.ttl = ttl
        self.turns = turns
        self.node = node

    def _error(self, exc: Exception) -> NodeOperationError:
        where = f"{self.options.get('host')}:{self.options.get('port')}/{self.options.get('db')}"
        message = scrub_secret(str(exc), self.options.get("password"))
        return NodeOperationError(f"Redis Error: {message}", node=self.node, description=f"Redis server {where}, key {self.key}")

    async def load_messages(self) -> list[ChatMessage]:
        import redis.asyncio as aredis

        try:
            async with aredis.Redis(**self.options) as client:
                raw = await client.lrange(self.key, 0, -1)
        except aredis.RedisError as exc:
            raise self._error(exc) from None
        messages = []
        for entry in reversed(raw):
            try:
                found = from_stored(json.loads(entry))
            except ValueError:
                found = None
            if found is not None:
                messages.append(found)
        return window(messages, self.turns)

    async def save_context(self, user_input: str, output: str) -> None:
        import redis.asyncio as aredis

        try:
            async with aredis.Redis(**self.options) as client:
                for message in (ChatMessage(role="user", content=user_input), ChatMessage(role="assistant", content=output)):
                    await client.lpush(self.key, json.dumps(stored(message), ensure_ascii=False, separators=(",", ":")))
                    if self.ttl:
                        await client.expire(self.key, self.ttl)
        except aredis.RedisError as exc:
            raise self._error(exc) from None


def client_options(cred: dict[str, Any], version: float) -> dict[str, Any]:
    options: dict[str, Any] = {
        "host": str(cred.get("host") or "localhost"), "port": int(cred.get("port") or 6379),
        "db": int(cred.get("database") or 0), "ssl": cred.get("ssl") is True,
        "socket_connect_timeout": 10, "decode_responses": True,
    }
    if cred.get("user") and version >= 1.5:
        options["username"] = str(cred["user"])
    if cred.get("password"):
        options["password"] = str(cred["password"])
    return options


class RedisChatMemory(NodeType):
    type = "@n8n/n8n-nodes-langchain.memoryRedisChat"
    version = 1.5
    versions = (1, 1.1, 1.2, 1.3, 1.4, 1.5)
    display_name = "Redis Chat Memory"
    description = "Keeps each chat session in a Redis list, across runs and restarts"
    group = "Memory"
    icon = "memory"
    inputs = ()
    outputs = (PortSpec(AI_MEMORY, "Memory"),)
    Params = RedisMemoryParams
    implemented_parameters = frozenset({"sessionIdType", "sessionKey", "contextWindowLength", "sessionTTL"})
    credential_types = (CREDENTIAL_TYPE,)

    async def supply_data(self, ctx: SupplyContext) -> RedisMemory:
        params: RedisMemoryParams = ctx.params()
        name = ctx.node.name
        version = float(ctx.node.typeVersion)
        session = session_id(ctx, params, version)
        ref = credential_ref(ctx.node.credentials, CREDENTIAL_TYPE)
        try:
            cred = ctx.services.credentials.get(CREDENTIAL_TYPE, ref)
        except CredentialError as exc:
            raise NodeOperationError(str(exc), node=name) from None
        if not cred:
            raise NodeOperationError(f'Redis Chat Memory "{name}" needs a redis credential, and none is stored', node=name)
        turns = params.contextWindowLength if version >= 1.3 else None
        return RedisMemory(client_options(cred, version), session, params.sessionTTL, turns, name)
