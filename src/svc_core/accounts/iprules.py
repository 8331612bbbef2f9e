"""IP rules: per-key CIDR allowlists and the client address behind trusted proxies.

An allowlist entry is strict CIDR text (``10.0.0.0/8``, ``2001:db8::/32``) or a bare
address (one host). Host bits, netmask notation, zone ids, stray spaces and prefix
lengths beyond the family's width are refused, so what a user stores is what is enforced.
An IPv4 client seen through a dual-stack socket as ``::ffff:a.b.c.d`` is judged as the
IPv4 address it is.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Sequence

from svc_core.errors import InvalidParams

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_ALLOWLIST = 32
"""At most this many entries in one key's ``ip_allowlist``."""

_MAX_ENTRY_CHARS = 64
_CIDR_TEXT = re.compile(r"[0-9A-Fa-f:.]+(?:/(?:0|[1-9][0-9]{0,2}))?")
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_BRACKETED = re.compile(r"\[([0-9A-Fa-f:.]+)\](?::[0-9]{1,5})?")
_V4_WITH_PORT = re.compile(r"([0-9]{1,3}(?:\.[0-9]{1,3}){3}):[0-9]{1,5}")


def _entry(value: object, index: int, field: str) -> Network:
    where = f"{field}[{index}]"
    if not isinstance(value, str):
        raise InvalidParams(
            f"{where} must be a CIDR string, not {type(value).__name__}.",
            hint='Send strings such as "203.0.113.0/24" or "2001:db8::/32".',
        )
    shown = value[:_MAX_ENTRY_CHARS]
    if len(value) > _MAX_ENTRY_CHARS or not _CIDR_TEXT.fullmatch(value):
        raise InvalidParams(
            f"{where} is not CIDR notation: {shown!r}.",
            hint='Use an address with an optional /prefix length, e.g. "203.0.113.0/24", '
            "with no spaces.",
        )
    try:
        network = ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        try:
            loose = ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise InvalidParams(
                f"{where} is not a valid IPv4 or IPv6 network: {shown!r}.",
                hint="Prefix lengths are 0-32 for IPv4 and 0-128 for IPv6.",
            ) from exc
        raise InvalidParams(
            f"{where} has host bits set: {shown!r}.",
            hint=f"Did you mean {loose}?",
        ) from exc
    if isinstance(network, ipaddress.IPv6Network) and network.subnet_of(_MAPPED):
        raise InvalidParams(
            f"{where} is an IPv4-mapped IPv6 network: {shown!r}.",
            hint="Write the IPv4 network itself (e.g. 10.0.0.0/8); mapped clients match it.",
        )
    return network


def parse_allowlist(items: object, *, field: str = "ip_allowlist") -> tuple[Network, ...]:
    """Parse a list of CIDR strings into networks, deduplicated in order (400 on bad input)."""
    if isinstance(items, str | bytes) or not isinstance(items, list | tuple):
        raise InvalidParams(
            f"{field} must be an array of CIDR strings.",
            hint='Send e.g. ["203.0.113.0/24"], or [] to allow any address.',
        )
    if len(items) > MAX_ALLOWLIST:
        raise InvalidParams(
            f"{field} has {len(items)} entries; at most {MAX_ALLOWLIST} are allowed.",
            hint="Merge neighbouring ranges into wider CIDR blocks.",
        )
    out: list[Network] = []
    for index, item in enumerate(items):
        network = _entry(item, index, field)
        if network not in out:
            out.append(network)
    return tuple(out)


def format_allowlist(networks: Sequence[Network]) -> list[str]:
    """The canonical text of each network (what is stored and shown)."""
    return [str(network) for network in networks]


@functools.lru_cache(maxsize=4096)
def parse_address(text: str) -> Address | None:
    """An IP address, IPv4-mapped IPv6 unwrapped to IPv4; None when ``text`` is not one.
    Remembered (addresses are immutable): every request parses its peer's."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@functools.lru_cache(maxsize=4096)
def _peer_text(remote_addr: str) -> str:
    """The socket peer's address in canonical form (as given when it is not one)."""
    peer = parse_address(remote_addr)
    return remote_addr if peer is None else str(peer)


def _in_any(address: Address, networks: Sequence[Network]) -> bool:
    return any(address in network for network in networks)


def ip_allowed(allowlist: Sequence[Network], addr: str) -> bool:
    """May a key with ``allowlist`` be used from ``addr``? Empty means any address.

    An unparseable address is refused whenever the list is not empty (fail closed).
    """
    if not allowlist:
        return True
    address = parse_address(addr)
    return address is not None and _in_any(address, allowlist)


def _hop(text: str) -> Address | None:
    text = text.strip()
    address = parse_address(text)
    if address is not None:
        return address
    match = _BRACKETED.fullmatch(text) or _V4_WITH_PORT.fullmatch(text)
    return parse_address(match.group(1)) if match else None


def client_address(
    remote_addr: str, forwarded_for: str | None, trusted_proxies: Sequence[Network]
) -> str:
    """The address a request comes from.

    The socket peer (``remote_addr``) unless it is one of ``trusted_proxies``; then the
    ``X-Forwarded-For`` chain (all its headers joined with commas, in order) is walked from
    the right, skipping trusted hops, and the first untrusted hop is the client. A hop that
    is not an address ends the walk at the nearest address a trusted proxy vouched for;
    if every hop is trusted, the leftmost one is returned.
    """
    if not forwarded_for or not trusted_proxies:
        return _peer_text(remote_addr)
    peer = parse_address(remote_addr)
    if peer is None:
        return remote_addr
    if not _in_any(peer, trusted_proxies):
        return str(peer)
    current = peer
    for text in reversed(forwarded_for.split(",")):
        hop = _hop(text)
        if hop is None:
            return str(current)
        if not _in_any(hop, trusted_proxies):
            return str(hop)
        current = hop
    return str(current)
