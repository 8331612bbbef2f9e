"""Which webhook URLs svc may call (DECISIONS "Account endpoint errors and rows").

Server-side request forgery is stopped in three pure steps that the sender repeats at
every send:

1. ``check_webhook_url`` checks the URL's syntax (https only, at most 2048 characters, no
   user-info, no whitespace or control characters, a valid host and port) and normalises
   the host: IDNA to ASCII (full-width dots such as ``。`` become ``.``), lower case,
   numeric IPv4 forms to dotted quads, IPv6 without brackets.
2. ``resolve_and_check`` turns the host into addresses (numeric forms without a lookup;
   names through the resolver the caller passes) and refuses the URL when *any* address
   is not public. ``classify_address`` says why an address is not public.
3. The sender connects to one of the returned addresses, never to the name again, so a
   second DNS answer cannot move the request somewhere else.

Numeric hosts are read the way glibc's ``inet_aton`` reads them (``2130706433``,
``0x7f000001``, ``0177.0.0.1``, ``127.1``), because that is where ``getaddrinfo`` would
connect; Python's ``ipaddress`` refuses most of these forms. IPv6 addresses that embed an
IPv4 address (mapped, NAT64 ``64:ff9b::/96``, 6to4) are judged by the embedded address;
Teredo, local-use NAT64 and deprecated IPv4-compatible addresses are refused outright.

``allow_private`` (a development setting, off by default) turns off every address and
local-name check; syntax checks still apply.

``is_loopback_host`` reads hosts with the same rules for ``svc mcp --url``, which sends
its key over plain http only to this machine.

Long because every spelling of an address svc may or may not call is read here, in one
place, so the webhook sender and ``svc mcp --url`` judge a host alike.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable
from urllib.parse import quote

import attrs

from svc_core.errors import InvalidParams

MAX_URL_LENGTH = 2048
DEFAULT_PORTS = {"https": 443, "http": 80}

Resolver = Callable[[str, int], list[str]]
"""``resolver(host, port)`` returns the host's addresses as strings (may raise OSError)."""

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

# Checked in order; the first containing network names the reason.
_IPV4_RULES: tuple[tuple[ipaddress.IPv4Network, str], ...] = (
    (_V4("255.255.255.255/32"), "broadcast"),
    (_V4("169.254.169.254/32"), "cloud metadata"),
    (_V4("0.0.0.0/8"), "unspecified"),
    (_V4("10.0.0.0/8"), "private"),
    (_V4("100.64.0.0/10"), "carrier-grade NAT"),
    (_V4("127.0.0.0/8"), "loopback"),
    (_V4("169.254.0.0/16"), "link-local"),
    (_V4("172.16.0.0/12"), "private"),
    (_V4("192.0.0.0/24"), "IETF protocol assignment"),
    (_V4("192.0.2.0/24"), "documentation"),
    (_V4("192.88.99.0/24"), "6to4 relay anycast"),
    (_V4("192.168.0.0/16"), "private"),
    (_V4("198.18.0.0/15"), "benchmarking"),
    (_V4("198.51.100.0/24"), "documentation"),
    (_V4("203.0.113.0/24"), "documentation"),
    (_V4("224.0.0.0/4"), "multicast"),
    (_V4("240.0.0.0/4"), "reserved"),
)

_IPV6_UNSPECIFIED = ipaddress.IPv6Address("::")
_IPV6_LOOPBACK = ipaddress.IPv6Address("::1")
_IPV6_MAPPED = _V6("::ffff:0:0/96")
_IPV6_COMPATIBLE = _V6("::/96")
_IPV6_NAT64 = _V6("64:ff9b::/96")
_IPV6_SIXTOFOUR = _V6("2002::/16")
_IPV6_GLOBAL_UNICAST = _V6("2000::/3")
_IPV6_RULES: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    (_V6("64:ff9b:1::/48"), "local-use NAT64"),
    (_V6("100::/64"), "discard-only"),
    (_V6("2001::/32"), "Teredo"),
    (_V6("2001:2::/48"), "benchmarking"),
    (_V6("2001::/23"), "IETF protocol assignment"),
    (_V6("2001:db8::/32"), "documentation"),
    (_V6("3fff::/20"), "documentation"),
    (_V6("fd00:ec2::254/128"), "cloud metadata"),
    (_V6("fc00::/7"), "unique local"),
    (_V6("fe80::/10"), "link-local"),
    (_V6("fec0::/10"), "site-local"),
    (_V6("ff00::/8"), "multicast"),
)

_LOCAL_NAMES = ("localhost",)
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa")
"""Names that never reach a public host (RFC 6761, RFC 6762, ICANN private use, RFC 8375)."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_PORT = re.compile(r"[0-9]{1,5}")
_HOST_CHARS = re.compile(r"[a-z0-9._-]+")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
_DEC = re.compile(r"[1-9][0-9]*|0")
_OCT = re.compile(r"0[0-7]+")
_HEX = re.compile(r"0[xX][0-9a-fA-F]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_FORBIDDEN_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"}


@attrs.frozen(kw_only=True)
class ParsedTarget:
    """A checked webhook URL: what to connect to and what to ask for."""

    scheme: str = attrs.field(validator=attrs.validators.in_(tuple(DEFAULT_PORTS)))
    host: str = attrs.field(validator=attrs.validators.min_len(1))
    """ASCII, lower case; IPv6 without brackets; numeric IPv4 as a dotted quad."""
    port: int = attrs.field(validator=[attrs.validators.ge(1), attrs.validators.le(65535)])
    path_with_query: str = attrs.field(validator=attrs.validators.matches_re(r"/[\x21-\x7e]*"))

    @property
    def host_header(self) -> str:
        """The ``Host`` header value: the host (bracketed if IPv6) and a non-default port."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def url(self) -> str:
        """The normalised URL (no fragment)."""
        return f"{self.scheme}://{self.host_header}{self.path_with_query}"


PRIVATE_HINT = (
    "svc delivers only to public addresses. On a development server, set "
    "SVC_WEBHOOK_ALLOW_PRIVATE=true to allow private, loopback and local addresses (and "
    "http); never in production."
)
"""The hint of every refusal of a non-public address or local-only name."""


def _refuse(message: str, hint: str | None = None) -> InvalidParams:
    return InvalidParams(message, hint=hint)


def check_webhook_url(
    url: str, *, allow_private: bool = False, allow_http: bool = False
) -> ParsedTarget:
    """Check a webhook URL's form and return its parts; ``InvalidParams`` says what is wrong.

    Without ``allow_private``, an IP-literal host must be public and local-only names
    (``localhost``, ``*.local``, ``*.internal``, single labels) are refused before any
    lookup. Whether a name resolves to public addresses is ``resolve_and_check``'s job.
    """
    schemes = ("https", "http") if allow_http else ("https",)
    must = " or ".join(schemes)
    if not isinstance(url, str) or not url:
        raise _refuse("The webhook url is required and must be a string.")
    if len(url) > MAX_URL_LENGTH:
        raise _refuse(f"The webhook url is longer than {MAX_URL_LENGTH} characters.")
    if any(unicodedata.category(c) in _FORBIDDEN_CATEGORIES for c in url):
        raise _refuse("The webhook url must not contain whitespace or control characters.")
    if "\\" in url:
        raise _refuse("The webhook url must not contain backslashes.")
    scheme_match = _SCHEME.match(url)
    scheme = scheme_match.group(1).lower() if scheme_match else ""
    if scheme not in schemes:
        raise _refuse(
            f"The webhook url must use {must}.",
            hint="For example https://example.com/hooks"
            + ("" if allow_http else f". {PRIVATE_HINT}"),
        )
    rest = url[len(scheme) + 1 :]
    if not rest.startswith("//"):
        raise _refuse("The webhook url must have a host.")
    rest = rest[2:].split("#", 1)[0]
    end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, path = rest[:end], rest[end:]
    if "@" in authority:
        raise _refuse("The webhook url must not contain user info (user:password@).")
    host, port = _split_authority(authority, scheme)
    if not path.startswith("/"):
        path = "/" + path
    path = _NON_ASCII.sub(lambda m: quote(m.group(0), safe=""), path)
    target = ParsedTarget(scheme=scheme, host=host, port=port, path_with_query=path)
    if not allow_private:
        _refuse_local(host)
    return target


def _split_authority(authority: str, scheme: str) -> tuple[str, int]:
    if not authority:
        raise _refuse("The webhook url must have a host.")
    port_text: str | None = None
    if authority.startswith("["):
        close = authority.find("]")
        after = authority[close + 1 :] if close >= 0 else ""
        if close < 0 or (after and not after.startswith(":")):
            raise _refuse("The webhook url has a malformed IPv6 host.")
        port_text = after[1:] if after else None
        host = _ipv6_literal(authority[1:close])
    else:
        if authority.count(":") > 1:
            raise _refuse("The webhook url's IPv6 host must be in brackets.")
        host_text, colon, port_part = authority.partition(":")
        port_text = port_part if colon else None
        host = _hostname(host_text)
    if not port_text:
        return host, DEFAULT_PORTS[scheme]
    if _PORT.fullmatch(port_text) is None or not 1 <= int(port_text) <= 65535:
        raise _refuse("The webhook url's port must be a number from 1 to 65535.")
    return host, int(port_text)


def _ipv6_literal(text: str) -> str:
    if "%" in text:
        raise _refuse("The webhook url must not use an IPv6 zone identifier.")
    try:
        return ipaddress.IPv6Address(text).compressed
    except ValueError:
        raise _refuse("The webhook url's IPv6 host is not a valid address.") from None


def _hostname(text: str) -> str:
    if not text:
        raise _refuse("The webhook url must have a host.")
    host = text
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise _refuse("The webhook url's host is not a valid domain name.") from None
    host = host.lower()
    if host.endswith("."):
        host = host[:-1]
    labels = host.split(".")
    if (
        not host
        or _HOST_CHARS.fullmatch(host) is None
        or len(host) > 253
        or any(not 1 <= len(label) <= 63 for label in labels)
    ):
        raise _refuse(
            "The webhook url's host is not a valid domain name.",
            hint="Letters, digits, '-' and '.', at most 63 characters per label.",
        )
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        numeric = numeric_host(host)
        if numeric is None:
            raise _refuse("The webhook url's host looks like an IPv4 address but is not one.")
        return numeric
    return host


def _refuse_local(host: str) -> None:
    if _is_ip(host):
        reason = classify_address(host)
        if reason is not None:
            raise _refuse(
                f"The webhook url points to a non-public address ({host}, {reason}).",
                hint=PRIVATE_HINT,
            )
        return
    if host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES):
        raise _refuse(f"The webhook url's host {host!r} is a local-only name.", hint=PRIVATE_HINT)
    if "." not in host:
        raise _refuse(
            f"The webhook url's host {host!r} is not a fully qualified domain name.",
            hint="Use the public DNS name of your endpoint, such as hooks.example.com.",
        )


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _part_value(part: str) -> int | None:
    if _DEC.fullmatch(part):
        return int(part)
    if _OCT.fullmatch(part):
        return int(part, 8)
    if _HEX.fullmatch(part):
        return int(part[2:], 16)
    return None


def numeric_host(host: str) -> str | None:
    """The IPv4 address a numeric host reaches, as glibc reads it; None for a name.

    One to four parts separated by dots, each decimal, octal (leading ``0``) or hex
    (``0x``); the last part fills all remaining bytes: ``127.1`` is 127.0.0.1 and
    ``2130706433`` is 127.0.0.1. A single trailing dot is ignored.
    """
    if not isinstance(host, str) or not host or len(host) > 253:
        return None
    text = host[:-1] if host.endswith(".") else host
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        value = _part_value(part)
        if value is None:
            return None
        values.append(value)
    *head, last = values
    if any(v > 0xFF for v in head) or last >= 1 << (8 * (5 - len(values))):
        return None
    number = last
    for i, value in enumerate(head):
        number |= value << (24 - 8 * i)
    return str(ipaddress.IPv4Address(number))


def _classify_v4(address: ipaddress.IPv4Address) -> str | None:
    for network, reason in _IPV4_RULES:
        if address in network:
            return reason
    return None


def _embedded(kind: str, inner: ipaddress.IPv4Address) -> str | None:
    reason = _classify_v4(inner)
    return None if reason is None else f"{kind} {reason}"


def classify_address(ip: str) -> str | None:
    """Why ``ip`` must not be called (``"loopback"``, ``"private"`` ...), or None if public.

    Anything that does not parse as an address is refused too.
    """
    try:
        address = ipaddress.ip_address(ip.split("%", 1)[0] if isinstance(ip, str) else ip)
    except ValueError:
        return "not an IP address"
    if isinstance(address, ipaddress.IPv4Address):
        return _classify_v4(address)
    if address == _IPV6_UNSPECIFIED:
        return "unspecified"
    if address == _IPV6_LOOPBACK:
        return "loopback"
    if address in _IPV6_MAPPED:
        return _embedded("IPv4-mapped", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address in _IPV6_COMPATIBLE:
        return "IPv4-compatible (deprecated)"
    if address in _IPV6_NAT64:
        return _embedded("NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address in _IPV6_SIXTOFOUR:
        return _embedded("6to4", ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF))
    for network, reason in _IPV6_RULES:
        if address in network:
            return reason
    if address not in _IPV6_GLOBAL_UNICAST:
        return "reserved"
    return None


LOOPBACK_REASONS = ("loopback", "IPv4-mapped loopback")
"""``classify_address`` reasons of an address that reaches this machine."""


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a URL's host, brackets and case as typed) names this machine:
    ``localhost`` (or a name under ``.localhost``) or a loopback address in any form
    ``getaddrinfo`` reads (``127.0.0.1``, ``127.1``, ``2130706433``, ``[::1]``)."""
    name = host.strip().lower()
    name = name[:-1] if name.endswith(".") else name
    if name == "localhost" or name.endswith(".localhost"):
        return True
    address = literal_address(name)
    return address is not None and classify_address(address) in LOOPBACK_REASONS


def literal_address(host: str) -> str | None:
    """The address an IP-literal or numeric host names, or None when it is a name."""
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host.strip("[]")).compressed
        except ValueError:
            return None
    return numeric_host(host)


def resolve_and_check(
    host: str, port: int, resolver: Resolver, allow_private: bool = False
) -> list[str]:
    """The addresses to connect to, refusing the host when any address is not public.

    Literal and numeric hosts are not looked up. ``InvalidParams`` when the host does not
    resolve, resolves to nothing, or (without ``allow_private``) resolves to any address
    that ``classify_address`` refuses: a name with one public and one private address is
    refused, not trimmed.
    """
    literal = literal_address(host)
    if literal is not None:
        found = [literal]
    else:
        try:
            found = list(resolver(host, port))
        except (OSError, ValueError):
            raise _refuse(f"The webhook url's host {host!r} does not resolve.") from None
    if not found:
        raise _refuse(f"The webhook url's host {host!r} does not resolve.")
    out: list[str] = []
    for address in found:
        reason = classify_address(address)
        if reason == "not an IP address":
            raise _refuse(f"The webhook url's host {host!r} resolved to a non-address.")
        if reason is not None and not allow_private:
            raise _refuse(
                f"The webhook url resolves to a non-public address ({address}, {reason}).",
                hint=PRIVATE_HINT,
            )
        if address not in out:
            out.append(address)
    return out
