"""Webhook URL checks: syntax, numeric hosts, address classes, resolution."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.errors import InvalidParams
from svc_core.webhooks.netguard import (
    ParsedTarget,
    check_webhook_url,
    classify_address,
    is_loopback_host,
    numeric_host,
    resolve_and_check,
)

PUBLIC_V4 = "93.184.216.34"
PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946"

# A fake DNS: names from notes/platform.md §3 and a few public ones.
ZONE: dict[str, list[str]] = {
    "localhost": ["127.0.0.1", "::1"],
    "metadata.google.internal": ["169.254.169.254"],
    "127.0.0.1.nip.io": ["127.0.0.1"],
    "localtest.me": ["127.0.0.1"],
    "x": ["10.0.0.7"],
    "hooks.example.com": [PUBLIC_V4, PUBLIC_V6],
    "dual.example.com": [PUBLIC_V4, "::1"],
    "ula.example.com": [PUBLIC_V4, "fd12:3456::1"],
    "empty.example.com": [],
    "garbage.example.com": ["not-an-address"],
    "xn--bcher-kva.example": [PUBLIC_V4],
}


def fake_resolver(host: str, port: int) -> list[str]:
    if host not in ZONE:
        raise OSError(f"[Errno -2] Name or service not known: {host}")
    return ZONE[host]


def no_lookup(host: str, port: int) -> list[str]:
    raise AssertionError(f"{host} must not be looked up")


def guard(url: str, *, allow_private: bool = False, allow_http: bool = True) -> list[str]:
    """What registration and the sender do: check the URL, then its addresses."""
    target = check_webhook_url(url, allow_private=allow_private, allow_http=allow_http)
    return resolve_and_check(target.host, target.port, fake_resolver, allow_private)


# notes/platform.md §3 plus a few more (http is allowed here, so the host alone decides).
PLATFORM_URLS = """
http://127.0.0.1/ http://localhost/ http://LOCALHOST./ http://[::1]/ http://[::]/ http://0/
http://0.0.0.0/ http://127.1/ http://2130706433/ http://0x7f000001/ http://0177.0.0.1/
http://017700000001/ http://127.000000000000.1/ http://[::ffff:127.0.0.1]/
http://[::ffff:7f00:1]/ http://169.254.169.254/latest/meta-data/ http://[fd00:ec2::254]/
http://metadata.google.internal/ http://100.100.100.200/ http://10.0.0.1/ http://172.16.0.1/
http://192.168.1.1/ http://100.64.0.1/ http://[fc00::1]/ http://[fe80::1%25eth0]/
http://[64:ff9b::a00:1]/ http://[2002:a00:1::1]/ http://224.0.0.1/ http://255.255.255.255/
http://192.88.99.1/ http://127.0.0.1.nip.io/ http://localtest.me/ http://user:pw@127.0.0.1/
http://example.com@127.0.0.1/ http://127。0。0。1/ http://①②⑦.⓪.⓪.①/ http://127.0.0.1:6379/
file:///etc/passwd gopher://127.0.0.1:6379/_ ftp://x/
https://ex%20ample.com/ https://dual.example.com/ https://ula.example.com/
https://empty.example.com/ https://garbage.example.com/ https://nx.example.com/
"""
REFUSED_URLS = [
    *PLATFORM_URLS.split(),
    "https://ex ample.com",
    "https://hooks.example.com/" + "a" * 2100,
]


@pytest.mark.parametrize("url", REFUSED_URLS)
def test_every_hostile_url_is_refused(url: str) -> None:
    with pytest.raises(InvalidParams):
        guard(url)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://2130706433/", "non-public address (127.0.0.1, loopback)"),
        ("http://[::ffff:7f00:1]/", "(::ffff:7f00:1, IPv4-mapped loopback)"),
        ("http://169.254.169.254/", "cloud metadata"),
        ("http://100.64.0.1/", "carrier-grade NAT"),
        ("https://localtest.me/", "resolves to a non-public address (127.0.0.1, loopback)"),
        ("https://dual.example.com/", "(::1, loopback)"),
        ("https://nx.example.com/", "does not resolve"),
        ("https://empty.example.com/", "does not resolve"),
        ("http://localhost/", "local-only name"),
        ("https://user:pw@hooks.example.com/", "user info"),
        ("ftp://x/", "must use https"),
    ],
)
def test_refusals_say_why(url: str, message: str) -> None:
    with pytest.raises(InvalidParams, match=re.escape(message)):
        guard(url)


def test_local_names_are_also_refused_by_their_addresses() -> None:
    # The name rules are a shortcut; the address check alone refuses them too.
    for name in ("localhost", "metadata.google.internal", "x"):
        with pytest.raises(InvalidParams, match="non-public"):
            resolve_and_check(name, 443, fake_resolver, False)


def test_a_public_host_is_allowed_and_all_its_addresses_returned() -> None:
    assert guard("https://hooks.example.com/svc") == [PUBLIC_V4, PUBLIC_V6]
    assert guard("https://Bücher.example/") == [PUBLIC_V4]
    assert guard(f"https://{PUBLIC_V4}/") == [PUBLIC_V4]
    assert guard(f"https://[{PUBLIC_V6}]:8443/") == [PUBLIC_V6]


def test_the_development_setting_allows_loopback_and_http() -> None:
    assert guard("http://127.0.0.1:8001/hook", allow_private=True) == ["127.0.0.1"]
    assert guard("http://localhost:8001/", allow_private=True) == ["127.0.0.1", "::1"]
    with pytest.raises(InvalidParams, match="must use https"):
        guard("http://hooks.example.com/", allow_http=False)


def test_literal_and_numeric_hosts_are_never_looked_up() -> None:
    for host in ("8.8.8.8", "134744072", "0x08080808", "2001:4860:4860::8888"):
        assert resolve_and_check(host, 443, no_lookup) != []


def test_resolution_dedupes_and_keeps_order() -> None:
    def twice(host: str, port: int) -> list[str]:
        return [PUBLIC_V4, PUBLIC_V6, PUBLIC_V4]

    assert resolve_and_check("hooks.example.com", 443, twice) == [PUBLIC_V4, PUBLIC_V6]


def test_a_resolver_error_of_any_usual_kind_means_does_not_resolve() -> None:
    def idna_error(host: str, port: int) -> list[str]:
        raise UnicodeError("label too long")

    with pytest.raises(InvalidParams, match="does not resolve"):
        resolve_and_check("hooks.example.com", 443, idna_error)


@settings(max_examples=50)
@given(
    st.lists(st.sampled_from([PUBLIC_V4, PUBLIC_V6, "8.8.4.4"]), max_size=4),
    st.sampled_from(["127.0.0.1", "10.1.2.3", "::1", "fe80::1", "169.254.169.254"]),
    st.data(),
)
def test_one_private_address_among_public_ones_refuses_the_host(
    public: list[str], private: str, data: st.DataObject
) -> None:
    addresses = list(public)
    addresses.insert(data.draw(st.integers(0, len(addresses))), private)
    with pytest.raises(InvalidParams, match="non-public"):
        resolve_and_check("hooks.example.com", 443, lambda h, p: addresses)
    assert private in resolve_and_check("hooks.example.com", 443, lambda h, p: addresses, True)


# URL syntax ----------------------------------------------------------------------------


def test_a_valid_url_is_normalised() -> None:
    target = check_webhook_url("HTTPS://Hooks.Example.COM./a/ü?q=é&x=1#frag")
    assert target == ParsedTarget(
        scheme="https",
        host="hooks.example.com",
        port=443,
        path_with_query="/a/%C3%BC?q=%C3%A9&x=1",
    )
    assert target.host_header == "hooks.example.com"
    assert target.url == "https://hooks.example.com/a/%C3%BC?q=%C3%A9&x=1"


@pytest.mark.parametrize(
    ("url", "host", "port", "path", "host_header"),
    [
        ("https://a.example.com", "a.example.com", 443, "/", "a.example.com"),
        ("https://a.example.com?x=1", "a.example.com", 443, "/?x=1", "a.example.com"),
        ("https://a.example.com:443/", "a.example.com", 443, "/", "a.example.com"),
        ("https://a.example.com:8443/p", "a.example.com", 8443, "/p", "a.example.com:8443"),
        ("https://a.example.com:1/", "a.example.com", 1, "/", "a.example.com:1"),
        ("https://a.example.com:65535/", "a.example.com", 65535, "/", "a.example.com:65535"),
        ("https://a.example.com:/", "a.example.com", 443, "/", "a.example.com"),
        ("https://[2001:DB8::1]:8443/", "2001:db8::1", 8443, "/", "[2001:db8::1]:8443"),
        ("https://bücher.example/", "xn--bcher-kva.example", 443, "/", "xn--bcher-kva.example"),
        ("https://ＥＸＡＭＰＬＥ．ｃｏｍ/", "example.com", 443, "/", "example.com"),
        ("https://134744072/", "8.8.8.8", 443, "/", "8.8.8.8"),
        ("https://my_host.example.com/", "my_host.example.com", 443, "/", "my_host.example.com"),
    ],
)
def test_url_parts(url: str, host: str, port: int, path: str, host_header: str) -> None:
    target = check_webhook_url(url, allow_private=True)
    assert (target.host, target.port, target.path_with_query) == (host, port, path)
    assert target.host_header == host_header


def test_http_keeps_port_80_out_of_the_host_header() -> None:
    target = check_webhook_url("http://a.example.com:80/", allow_http=True)
    assert (target.scheme, target.port, target.host_header) == ("http", 80, "a.example.com")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "required"),
        ("hooks.example.com/x", "must use https"),
        ("//hooks.example.com/x", "must use https"),
        ("https:hooks.example.com", "must have a host"),
        ("https:///path", "must have a host"),
        ("https://:443/", "must have a host"),
        ("https://a.example.com:0/", "port"),
        ("https://a.example.com:65536/", "port"),
        ("https://a.example.com:+443/", "port"),
        ("https://a.example.com:٤٤٣/", "port"),
        ("https://a.example.com:44a/", "port"),
        ("https://a:b@a.example.com/", "user info"),
        ("https://@a.example.com/", "user info"),
        ("https://a.example.com\\@b.example.com/", "backslash"),
        ("https://a.example.com/\r\nX-Injected: 1", "whitespace or control"),
        ("https://a.example.com/\tx", "whitespace or control"),
        ("https://a.example.com/\x00", "whitespace or control"),
        ("https://a.exa\u200bmple.com/", "whitespace or control"),
        ("https://a.example.com/\u202egnp.exe", "whitespace or control"),
        ("https://a.example.com/\u3000", "whitespace or control"),
        ("https://a..example.com/", "not a valid domain"),
        ("https://.example.com/", "not a valid domain"),
        ("https://" + "a" * 64 + ".example.com/", "not a valid domain"),
        ("https://" + "a." * 127 + "com/", "not a valid domain"),
        ("https://a.example.com%2F/", "not a valid domain"),
        ("https://a!.example.com/", "not a valid domain"),
        ("https://1.2.3.999/", "looks like an IPv4"),
        ("https://1.2.3.4.5/", "looks like an IPv4"),
        ("https://08.0.0.1/", "looks like an IPv4"),
        ("https://0x/", "looks like an IPv4"),
        ("https://[::1/", "malformed IPv6"),
        ("https://[::1]x/", "malformed IPv6"),
        ("https://[::g]/", "not a valid address"),
        ("https://[1.2.3.4]/", "not a valid address"),
        ("https://::1/", "must be in brackets"),
        ("https://[fe80::1%eth0]/", "zone identifier"),
        ("https://intranet/", "fully qualified"),
        ("https://printer.local/", "local-only"),
        ("https://db.internal/", "local-only"),
        ("https://a.localhost/", "local-only"),
        ("https://router.home.arpa/", "local-only"),
    ],
)
def test_malformed_urls_are_refused_with_a_reason(url: str, message: str) -> None:
    with pytest.raises(InvalidParams, match=message):
        check_webhook_url(url)


@pytest.mark.parametrize("length", [2048, 2049])
def test_the_url_length_limit_is_2048(length: int) -> None:
    url = "https://hooks.example.com/"
    url += "a" * (length - len(url))
    if length <= 2048:
        assert len(check_webhook_url(url).url) == 2048
    else:
        with pytest.raises(InvalidParams, match="2048"):
            check_webhook_url(url)


def test_non_strings_are_refused() -> None:
    with pytest.raises(InvalidParams, match="string"):
        check_webhook_url(None)  # type: ignore[arg-type]


label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True)
tld = st.from_regex(r"[a-z]{2,10}", fullmatch=True)


@given(st.lists(label, min_size=1, max_size=4), tld, st.booleans())
def test_valid_names_pass_and_are_lowercased(labels: list[str], top: str, upper: bool) -> None:
    host = ".".join([*labels, top])
    written = host.upper() if upper else host
    target = check_webhook_url(f"https://{written}/hook")
    assert target.host == host
    assert target.url == f"https://{host}/hook"


@given(st.text(max_size=40))
def test_anything_either_parses_or_is_invalid_params(text: str) -> None:
    for url in (text, f"https://{text}", f"https://hooks.example.com/{text}"):
        try:
            target = check_webhook_url(url)
        except InvalidParams:
            continue
        assert target.url.startswith("https://")
        assert target.url.isascii() and target.url.isprintable()


# numeric hosts -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0X7F000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("127.000000000000.1", "127.0.0.1"),
        ("0x7f.0.0.0x1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("00", "0.0.0.0"),
        ("4294967295", "255.255.255.255"),
        ("10.0.0.1.", "10.0.0.1"),
        ("1.16777215", "1.255.255.255"),
        ("1.2.65535", "1.2.255.255"),
    ],
)
def test_numeric_host_reads_glibc_forms(host: str, address: str) -> None:
    assert numeric_host(host) == address


@pytest.mark.parametrize(
    "host",
    [
        "",
        "example.com",
        "4294967296",
        "256.0.0.1",
        "1.2.3.256",
        "1.16777216",
        "1.2.65536",
        "08.0.0.1",
        "0x",
        "1.2.3.4.5",
        "1..2",
        ".1.2.3",
        "1.2.3.4..",
        "+1.2.3.4",
        "1.2.3.4 ",
        "١٢٧.0.0.1",
        "0x1g",
    ],
)
def test_numeric_host_refuses_non_numbers(host: str) -> None:
    assert numeric_host(host) is None


def _render(value: int, style: str) -> str:
    if style == "dec":
        return str(value)
    if style == "oct":
        return "0" + format(value, "o")
    return "0x" + format(value, "x")


@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 4),
    st.lists(st.sampled_from(["dec", "oct", "hex"]), min_size=4, max_size=4),
)
def test_every_glibc_spelling_reaches_the_same_address(
    number: int, parts: int, styles: list[str]
) -> None:
    octets = list(ipaddress.IPv4Address(number).packed)
    head = octets[: parts - 1]
    last = int.from_bytes(bytes(octets[parts - 1 :]), "big")
    text = ".".join(_render(v, s) for v, s in zip([*head, last], styles, strict=False))
    assert numeric_host(text) == str(ipaddress.IPv4Address(number))


# address classes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "unspecified"),
        ("10.0.0.1", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "cloud metadata"),
        ("169.254.1.1", "link-local"),
        ("100.64.0.0", "carrier-grade NAT"),
        ("100.100.100.200", "carrier-grade NAT"),
        ("100.127.255.255", "carrier-grade NAT"),
        ("192.0.0.8", "IETF protocol assignment"),
        ("192.0.2.1", "documentation"),
        ("198.51.100.1", "documentation"),
        ("203.0.113.1", "documentation"),
        ("192.88.99.1", "6to4 relay anycast"),
        ("198.18.0.1", "benchmarking"),
        ("198.19.255.255", "benchmarking"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "broadcast"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "IPv4-mapped loopback"),
        ("::ffff:a9fe:a9fe", "IPv4-mapped cloud metadata"),
        ("::127.0.0.1", "IPv4-compatible (deprecated)"),
        ("::8.8.8.8", "IPv4-compatible (deprecated)"),
        ("64:ff9b::a00:1", "NAT64 private"),
        ("64:ff9b::7f00:1", "NAT64 loopback"),
        ("64:ff9b:1::1", "local-use NAT64"),
        ("2002:a00:1::1", "6to4 private"),
        ("2002:7f00:1::", "6to4 loopback"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
        ("2001:db8::1", "documentation"),
        ("3fff::1", "documentation"),
        ("2001:2::1", "benchmarking"),
        ("2001:10::1", "IETF protocol assignment"),
        ("100::1", "discard-only"),
        ("fd00:ec2::254", "cloud metadata"),
        ("fc00::1", "unique local"),
        ("fd12:3456::1", "unique local"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        ("4000::1", "reserved"),
        ("::ffff:0:a00:1", "reserved"),
        ("example.com", "not an IP address"),
        ("127.1", "not an IP address"),
    ],
)
def test_classify_forbidden(address: str, reason: str) -> None:
    assert classify_address(address) == reason


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        PUBLIC_V4,
        "100.63.255.254",
        "100.128.0.1",
        "172.15.255.255",
        "172.32.0.0",
        "192.88.98.255",
        "192.88.100.0",
        "198.17.255.255",
        "198.20.0.0",
        "223.255.255.255",
        "169.253.255.255",
        PUBLIC_V6,
        "2001:4860:4860::8888",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
        "2001:200::1",
    ],
)
def test_classify_public(address: str) -> None:
    assert classify_address(address) is None


FORBIDDEN_V4 = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.0.2.0/24",
    "192.88.99.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/4",
    "240.0.0.0/4",
]


@st.composite
def address_in(draw: st.DrawFn, networks: list[str]) -> ipaddress.IPv4Address:
    network = ipaddress.IPv4Network(draw(st.sampled_from(networks)))
    offset = draw(st.integers(0, network.num_addresses - 1))
    return network[offset]


@given(address_in(FORBIDDEN_V4))
def test_every_address_of_a_forbidden_v4_range_is_refused(address: ipaddress.IPv4Address) -> None:
    assert classify_address(str(address)) is not None


@given(st.integers(0, 2**32 - 1))
def test_v4_verdict_matches_the_range_table(number: int) -> None:
    address = ipaddress.IPv4Address(number)
    inside = any(address in ipaddress.IPv4Network(n) for n in FORBIDDEN_V4)
    assert (classify_address(str(address)) is not None) == inside


@given(st.integers(0, 2**32 - 1))
def test_embedded_v4_is_judged_like_the_v4_it_reaches(number: int) -> None:
    v4 = ipaddress.IPv4Address(number)
    public = classify_address(str(v4)) is None
    for wrapped in (
        ipaddress.IPv6Address((0xFFFF << 32) | number),  # ::ffff:a.b.c.d
        ipaddress.IPv6Address((0x64FF9B << 96) | number),  # 64:ff9b::a.b.c.d
        ipaddress.IPv6Address((0x2002 << 112) | (number << 80) | 1),  # 2002:AABB:CCDD::1
    ):
        assert (classify_address(str(wrapped)) is None) == public


@given(st.integers(0, 2**128 - 1))
def test_v6_outside_global_unicast_is_always_refused(number: int) -> None:
    address = ipaddress.IPv6Address(number)
    embeds_v4 = any(address in ipaddress.IPv6Network(n) for n in ("::ffff:0:0/96", "64:ff9b::/96"))
    if address not in ipaddress.IPv6Network("2000::/3") and not embeds_v4:
        assert classify_address(str(address)) is not None


def test_classify_is_total_over_junk() -> None:
    junk: list[Any] = ["", " ", "1.2.3.4 ", "[::1]", "::1%", "0x7f000001"]
    for value in junk:
        assert classify_address(value) is not None


# is_loopback_host: where ``svc mcp --url`` may use plain http (issue 44 item 4) -------------


@given(st.integers(min_value=0x7F000000, max_value=0x7FFFFFFF), st.booleans())
def test_every_form_of_a_127_address_is_loopback(number: int, as_integer: bool) -> None:
    host = str(number) if as_integer else str(ipaddress.IPv4Address(number))
    assert is_loopback_host(host)


@given(st.ip_addresses())
def test_an_address_is_loopback_exactly_when_python_says_so(address: Any) -> None:
    host = f"[{address}]" if address.version == 6 else str(address)
    expected = address.is_loopback or (
        address.version == 6 and address.ipv4_mapped is not None and address.ipv4_mapped.is_loopback
    )
    assert is_loopback_host(host) == expected


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("LOCALHOST.", True),
        ("api.localhost", True),
        ("127.1", True),
        ("0x7f000001", True),
        ("[::1]", True),
        ("[::ffff:127.0.0.1]", True),
        ("[64:ff9b::7f00:1]", False),
        ("localhost.example.com", False),
        ("example.com", False),
        ("10.0.0.5", False),
        ("0.0.0.0", False),
        ("", False),
    ],
)
def test_loopback_hosts_are_names_and_forms_of_this_machine(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) == loopback
