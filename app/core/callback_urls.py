"""Which callback URLs the service may call, and at which address: the guard against SSRF.

Whoever submits names the webhook's receiver, so without a guard the service would POST, from
inside its own network, wherever it is told: 127.0.0.1, the database, a cloud's metadata service
at 169.254.169.254. `CallbackPolicy.check(url)` answers the address to connect to, or raises

    CallbackRefused            not http(s), or the host is, or resolves to, an address that is
    │                          not public: loopback, private, link-local, multicast, unspecified,
    │                          reserved, shared (100.64/10), site-local, unique local
    └── CallbackUnresolved     the name does not resolve (now: DNS may come back)

An address counts in every spelling a resolver accepts (2130706433, 0x7f.1, 0177.0.0.1, 127.1,
[::ffff:127.0.0.1], 6to4), and a name is refused when any one of its addresses is. The operator's
allow-list (AUTOGRADER_WEBHOOK_ALLOWED_HOSTS) names the exceptions: a host name as the URL writes
it (whatever it resolves to), an address, or a network.

The check runs when a submission is accepted (a 422, nothing stored) and again at each attempt,
which connects to the very address that attempt's check answered (`pinned`): a name that resolves
elsewhere by then (DNS rebinding) is caught there. The roster reads of LTI (app.lti.nrps) go
through the same policy. Messages name the host, never the path or query, which
may carry the receiver's secret.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str], list[IPAddress]]  # a host name to its addresses; raises OSError

# The IPv4 spellings inet_aton (and so getaddrinfo) accepts that `ipaddress` does not: one to
# four parts, each decimal, octal (leading 0) or hex (0x).
_INET_ATON = re.compile(r"(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}", re.IGNORECASE)
_HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")

# Checked in this order, so an address gets its most telling name (0.0.0.0 is private too).
_FORBIDDEN = (
    ("is_unspecified", "unspecified"),
    ("is_loopback", "loopback"),
    ("is_link_local", "link-local"),
    ("is_multicast", "multicast"),
    ("is_site_local", "site-local"),
    ("is_private", "private"),
    ("is_reserved", "reserved"),
)


class CallbackRefused(ValueError):
    """The service will not call this URL; the message says why, naming only the host."""


class CallbackUnresolved(CallbackRefused):
    """The host name does not resolve."""


def resolve(host: str) -> list[IPAddress]:
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return [ipaddress.ip_address(info[4][0]) for info in infos]


def origin(url: str) -> str:
    """scheme://host[:port] of a URL, without credentials, path or query: safe to log."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme}://{host}{port}"


def allow_list_entry(entry: str) -> IPNetwork | str:
    """An allow-list entry as the policy reads it: a network (an address is one of a single
    address), or a lowercase host name. Raises ValueError for anything else."""
    try:
        return ipaddress.ip_network(entry.strip(), strict=False)
    except ValueError:
        name = entry.strip().rstrip(".").lower()
        if not _HOST_NAME.fullmatch(name):
            raise ValueError(f"{entry!r}: not an address, a network or a host name") from None
        return name


@dataclass(frozen=True)
class CallbackPolicy:
    allowed: Sequence[str] = ()  # entries of AUTOGRADER_WEBHOOK_ALLOWED_HOSTS
    resolve: Resolver = resolve
    calls: str = "webhooks"  # what the policy guards, as its refusals name it
    _names: frozenset[str] = field(init=False)
    _networks: tuple[IPNetwork, ...] = field(init=False)

    def __post_init__(self) -> None:
        entries = [allow_list_entry(entry) for entry in self.allowed]
        names = frozenset(entry for entry in entries if isinstance(entry, str))
        networks = tuple(entry for entry in entries if not isinstance(entry, str))
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_networks", networks)

    def check(self, url: str) -> IPAddress:
        """The address to connect to for `url`; raises CallbackRefused."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise CallbackRefused(f"the scheme must be http or https, not {parts.scheme!r}")
        host = (parts.hostname or "").rstrip(".")
        if not host:
            raise CallbackRefused("the URL names no host")
        literal = _literal(host)
        addresses = [literal] if literal is not None else self._resolve(host)
        if host not in self._names:
            for address in addresses:
                self._refuse_internal(host, address)
        return addresses[0]

    def _resolve(self, host: str) -> list[IPAddress]:
        try:
            addresses = self.resolve(host)
        except (OSError, UnicodeError):
            addresses = []
        if not addresses:
            raise CallbackUnresolved(f"{host} does not resolve")
        return addresses

    def _refuse_internal(self, host: str, address: IPAddress) -> None:
        if any(address in network for network in self._networks):
            return
        reason = forbidden(address)
        if reason is not None:
            named = host if host == str(address) else f"{host} resolves to {address}, which"
            raise CallbackRefused(f"{named} is {reason}; {self.calls} go to public addresses only")


@dataclass(frozen=True)
class Pinned:
    """A request to a checked URL, sent to the checked address itself so that the name is not
    resolved again; the Host header and TLS (SNI, the certificate's name) still say the name."""

    url: httpx.URL
    headers: dict[str, str]
    extensions: dict[str, str]


def pinned(url: str, address: IPAddress) -> Pinned:
    target = httpx.URL(url)
    return Pinned(
        target.copy_with(host=str(address)),
        {"Host": target.netloc.decode("ascii")},
        {"sni_hostname": target.raw_host.decode("ascii")},
    )


def forbidden(address: IPAddress) -> str | None:
    """Why the service must not connect to `address`, or None for a public address."""
    address = _embedded_ipv4(address)
    for attribute, reason in _FORBIDDEN:
        if getattr(address, attribute, False):
            return f"a {reason} address"
    if not address.is_global:
        return "not a public address"
    return None


def _embedded_ipv4(address: IPAddress) -> IPAddress:
    # An IPv6 address that carries an IPv4 one reaches that one: IPv4-mapped, 6to4, NAT64.
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def _literal(host: str) -> IPAddress | None:
    """The address a host written as one stands for, in any spelling a resolver accepts."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if _INET_ATON.fullmatch(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None
