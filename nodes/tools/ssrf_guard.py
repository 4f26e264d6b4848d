"""n8n's SSRF protection for the HTTP Request Tool: refuse connections to private and link-local addresses.

Off by default, as in n8n. The same environment variables as n8n turn it on and tune it:
N8N_SSRF_PROTECTION_ENABLED (true/false), N8N_SSRF_BLOCKED_IP_RANGES (CIDRs; `default` is the
standard private/reserved list), N8N_SSRF_ALLOWED_IP_RANGES and N8N_SSRF_ALLOWED_HOSTNAMES
(`*.example.internal` wildcards), which take precedence over the blocked ranges. The check runs
where a connection is opened, on the addresses the host name resolved to, so a redirect or a
name that resolves to 127.0.0.1 is caught as well, and the connection goes to the address checked.
"""

from __future__ import annotations

import asyncio
import fnmatch
import ipaddress
import logging
import os
import socket
from dataclasses import dataclass
from typing import Iterable

import httpcore

ENABLED_ENV = "N8N_SSRF_PROTECTION_ENABLED"
BLOCKED_ENV = "N8N_SSRF_BLOCKED_IP_RANGES"
ALLOWED_ENV = "N8N_SSRF_ALLOWED_IP_RANGES"
ALLOWED_HOSTS_ENV = "N8N_SSRF_ALLOWED_HOSTNAMES"

log = logging.getLogger(__name__)
_warned: set[tuple[str, str]] = set()

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

DEFAULT_BLOCKED = (
    "0.0.0.0/8",  # "this" network
    "10.0.0.0/8",  # private
    "100.64.0.0/10",  # carrier-grade NAT
    "127.0.0.0/8",  # loopback
    "169.254.0.0/16",  # link-local, cloud metadata (169.254.169.254)
    "172.16.0.0/12",  # private
    "192.0.0.0/24",  # IETF protocol assignments
    "192.168.0.0/16",  # private
    "198.18.0.0/15",  # benchmarking
    "224.0.0.0/4",  # multicast
    "240.0.0.0/4",  # reserved, broadcast
    "::/128",  # unspecified
    "::1/128",  # loopback
    "fc00::/7",  # unique local
    "fe80::/10",  # link-local
    "ff00::/8",  # multicast
)


class SsrfBlocked(Exception):
    """A connection the policy refuses; the message is n8n's, the description names the target."""

    def __init__(self, host: str, address: str) -> None:
        target = f"'{host}' ({address})" if host != address else address
        super().__init__("The request was blocked because it resolves to a restricted IP address")
        self.description = (
            f"The target {target} is not allowed. This is a security measure to prevent Server-Side Request "
            f"Forgery (SSRF). To allow it, add the host name to {ALLOWED_HOSTS_ENV} or the address to {ALLOWED_ENV}."
        )


def _networks(variable: str, text: str) -> list[Network]:
    """CIDR ranges (or single addresses) from a comma-separated list; `default` is the standard list.
    An invalid entry is skipped with a warning naming the variable, as n8n does."""
    out: list[Network] = []
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        if entry.lower() == "default":
            out.extend(ipaddress.ip_network(n) for n in DEFAULT_BLOCKED)
            continue
        try:
            out.append(ipaddress.ip_network(entry, strict=False))
        except ValueError as exc:
            if (variable, entry) not in _warned:  # the policy is read at every call: say it once
                _warned.add((variable, entry))
                log.warning(f"Invalid value '{entry}' in {variable}: {exc}")
    return out


def _plain(address: Address) -> Address:
    """An IPv4 address written as IPv6 (::ffff:127.0.0.1) is checked as the IPv4 address it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@dataclass(frozen=True)
class SsrfPolicy:
    blocked: tuple[Network, ...]
    allowed: tuple[Network, ...] = ()
    allowed_hosts: tuple[str, ...] = ()

    @classmethod
    def from_env(cls) -> "SsrfPolicy | None":
        """The policy the environment sets, or None when protection is off (n8n's default)."""
        if os.environ.get(ENABLED_ENV, "false").strip().lower() != "true":
            return None
        return cls(
            blocked=tuple(_networks(BLOCKED_ENV, os.environ.get(BLOCKED_ENV, "default"))),
            allowed=tuple(_networks(ALLOWED_ENV, os.environ.get(ALLOWED_ENV, ""))),
            allowed_hosts=tuple(h.strip().lower() for h in os.environ.get(ALLOWED_HOSTS_ENV, "").split(",") if h.strip()),
        )

    def host_allowed(self, host: str) -> bool:
        name = host.lower().rstrip(".")
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.allowed_hosts)

    def refused(self, address: Address) -> bool:
        address = _plain(address)
        if any(address in net for net in self.allowed if net.version == address.version):
            return False
        return any(address in net for net in self.blocked if net.version == address.version)

    def check(self, host: str, addresses: Iterable[str]) -> None:
        """Raise SsrfBlocked unless every address the host resolved to may be reached."""
        if self.host_allowed(host):
            return
        for text in addresses:
            if self.refused(ipaddress.ip_address(text.split("%", 1)[0])):
                raise SsrfBlocked(host, text)


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Opens connections only to addresses the policy allows, and to the very address it checked."""

    def __init__(self, policy: SsrfPolicy, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.policy = policy
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):  # type: ignore[no-untyped-def]
        bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(bare, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise httpcore.ConnectError(f"cannot resolve {bare}: {exc.strerror}") from None
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        self.policy.check(bare, addresses)
        return await self.inner.connect_tcp(addresses[0], port, timeout, local_address, socket_options)

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):  # type: ignore[no-untyped-def]
        raise httpcore.ConnectError("unix sockets are not used by the HTTP Request Tool")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)
