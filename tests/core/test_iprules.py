"""IP rules: strict CIDR allowlists, matching, and the client behind trusted proxies."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.accounts.iprules import (
    MAX_ALLOWLIST,
    Network,
    client_address,
    format_allowlist,
    ip_allowed,
    parse_allowlist,
)
from svc_core.errors import InvalidParams

v4_networks = st.ip_addresses(v=4).flatmap(
    lambda a: st.integers(0, 32).map(lambda p: ipaddress.ip_network(f"{a}/{p}", strict=False))
)
v6_networks = st.ip_addresses(v=6).flatmap(
    lambda a: st.integers(0, 128).map(lambda p: ipaddress.ip_network(f"{a}/{p}", strict=False))
)
v4 = st.ip_addresses(v=4)
MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")


def not_mapped(network: Network) -> bool:
    return not (isinstance(network, ipaddress.IPv6Network) and network.subnet_of(MAPPED))


def nets(*texts: str) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(t) for t in texts)


# parsing --------------------------------------------------------------------------------


def test_parse_accepts_cidrs_bare_addresses_and_catch_alls() -> None:
    parsed = parse_allowlist(["10.0.0.0/8", "2001:db8::/32", "203.0.113.9", "0.0.0.0/0", "::/0"])
    assert format_allowlist(parsed) == [
        "10.0.0.0/8",
        "2001:db8::/32",
        "203.0.113.9/32",
        "0.0.0.0/0",
        "::/0",
    ]


def test_parse_canonicalizes_and_drops_duplicates() -> None:
    parsed = parse_allowlist(["2001:DB8:0::/32", "2001:db8::/32", "10.0.0.0/8"])
    assert format_allowlist(parsed) == ["2001:db8::/32", "10.0.0.0/8"]


@pytest.mark.parametrize(
    ("item", "needle"),
    [
        ("10.0.0.1/8", "host bits"),
        ("1.2.3.4/8", "host bits"),
        ("10.0.0.0/33", "not a valid"),
        ("::/129", "not a valid"),
        (" 10.0.0.0/8", "not CIDR"),
        ("10.0.0.0/8 ", "not CIDR"),
        ("", "not CIDR"),
        ("10.0.0.0/08", "not CIDR"),
        ("10.0.0.0/255.0.0.0", "not CIDR"),
        ("fe80::%eth0/64", "not CIDR"),
        ("0177.0.0.1", "not a valid"),
        ("10.0.0.0/-1", "not CIDR"),
        ("example.com", "not CIDR"),
        ("１0.0.0.0/8", "not CIDR"),
        ("::ffff:10.0.0.0/104", "IPv4-mapped"),
        ("1" * 100, "not CIDR"),
    ],
)
def test_parse_refuses_bad_entries_naming_the_index(item: str, needle: str) -> None:
    with pytest.raises(InvalidParams) as info:
        parse_allowlist(["192.0.2.0/24", item])
    assert needle in info.value.message
    assert "ip_allowlist[1]" in info.value.message
    assert info.value.hint


def test_host_bits_hint_proposes_the_network() -> None:
    with pytest.raises(InvalidParams) as info:
        parse_allowlist(["10.0.0.1/8"])
    assert info.value.hint == "Did you mean 10.0.0.0/8?"


@pytest.mark.parametrize("items", ["10.0.0.0/8", None, {"a": 1}, b"10.0.0.0/8", 5])
def test_parse_needs_an_array(items: object) -> None:
    with pytest.raises(InvalidParams, match="array"):
        parse_allowlist(items)


def test_parse_limits_the_entry_count() -> None:
    items = [f"10.0.{i}.0/24" for i in range(MAX_ALLOWLIST)]
    assert len(parse_allowlist(items)) == MAX_ALLOWLIST
    with pytest.raises(InvalidParams, match="at most 32"):
        parse_allowlist([*items, "10.1.0.0/24"])
    with pytest.raises(InvalidParams, match="at most 32"):
        parse_allowlist(["10.0.0.0/8"] * 10_000)


@settings(max_examples=50)
@given(
    st.lists(
        v4_networks | v6_networks.filter(not_mapped),
        max_size=MAX_ALLOWLIST,
    )
)
def test_canonical_text_round_trips(networks: list[Network]) -> None:
    parsed = parse_allowlist(format_allowlist(networks))
    assert list(parsed) == list(dict.fromkeys(networks))
    assert parse_allowlist(format_allowlist(parsed)) == parsed


# matching -------------------------------------------------------------------------------


def test_matching_examples() -> None:
    allow = nets("10.0.0.0/8")
    assert ip_allowed(allow, "10.1.2.3")
    assert not ip_allowed(allow, "11.0.0.1")
    assert ip_allowed(allow, "::ffff:10.1.2.3")
    assert not ip_allowed(allow, "::ffff:11.0.0.1")
    v6 = nets("2001:db8::/32")
    assert ip_allowed(v6, "2001:db8:1::5")
    assert not ip_allowed(v6, "2001:db9::1")
    assert not ip_allowed(v6, "10.1.2.3")


def test_empty_allowlist_allows_anything() -> None:
    assert ip_allowed((), "203.0.113.5")
    assert ip_allowed((), "not an address")


def test_unparseable_address_is_refused_by_a_nonempty_list() -> None:
    assert not ip_allowed(nets("0.0.0.0/0"), "")
    assert not ip_allowed(nets("0.0.0.0/0"), "unknown")


def test_catch_alls_stay_in_their_family() -> None:
    assert ip_allowed(nets("0.0.0.0/0"), "198.51.100.1")
    assert not ip_allowed(nets("0.0.0.0/0"), "2001:db8::1")
    assert ip_allowed(nets("::/0"), "2001:db8::1")
    assert not ip_allowed(nets("::/0"), "198.51.100.1")
    assert not ip_allowed(nets("::/0"), "::ffff:198.51.100.1")  # really an IPv4 client


@given(v4_networks, v4)
def test_v4_matching_is_membership_in_either_spelling(
    network: Network, address: ipaddress.IPv4Address
) -> None:
    expected = address in network
    assert ip_allowed((network,), str(address)) is expected
    assert ip_allowed((network,), f"::ffff:{address}") is expected


@given(v6_networks, st.ip_addresses(v=6))
def test_v6_matching_is_membership(network: Network, address: ipaddress.IPv6Address) -> None:
    if address.ipv4_mapped is None:
        assert ip_allowed((network,), str(address)) is (address in network)


# client address -------------------------------------------------------------------------

PROXIES = nets("10.0.0.0/8", "fd00::/8")


def test_without_trusted_proxies_the_peer_is_the_client() -> None:
    assert client_address("203.0.113.5", "1.2.3.4", ()) == "203.0.113.5"


def test_forwarded_for_from_an_untrusted_peer_is_ignored() -> None:
    assert client_address("203.0.113.5", "1.2.3.4", PROXIES) == "203.0.113.5"


def test_trusted_peer_hands_over_to_the_forwarded_client() -> None:
    assert client_address("10.0.0.2", "198.51.100.7", PROXIES) == "198.51.100.7"


def test_walk_skips_trusted_hops_from_the_right() -> None:
    # The client forged "1.1.1.1"; the real client is the hop our first proxy saw.
    chain = "1.1.1.1, 198.51.100.7, 10.0.0.9"
    assert client_address("10.0.0.2", chain, PROXIES) == "198.51.100.7"


def test_every_hop_trusted_gives_the_leftmost() -> None:
    assert client_address("10.0.0.2", "10.9.9.9, 10.0.0.9", PROXIES) == "10.9.9.9"


def test_garbage_hop_stops_at_the_nearest_vouched_address() -> None:
    assert client_address("10.0.0.2", "198.51.100.7, bogus", PROXIES) == "10.0.0.2"
    assert client_address("10.0.0.2", "198.51.100.7,, 10.0.0.9", PROXIES) == "10.0.0.9"


def test_hops_with_ports_and_brackets() -> None:
    assert client_address("10.0.0.2", "198.51.100.7:5555", PROXIES) == "198.51.100.7"
    assert client_address("10.0.0.2", "[2001:db8::7]:443", PROXIES) == "2001:db8::7"


def test_mapped_peers_and_hops_are_unwrapped() -> None:
    assert client_address("::ffff:10.0.0.2", "::ffff:198.51.100.7", PROXIES) == "198.51.100.7"
    assert client_address("fd00::1", "2001:db8::9", PROXIES) == "2001:db8::9"


def test_unparseable_peer_is_returned_as_is() -> None:
    assert client_address("unix-socket", "1.2.3.4", PROXIES) == "unix-socket"


@given(st.text(max_size=80), v4)
def test_untrusted_peer_is_never_overridden(forwarded: str, peer: ipaddress.IPv4Address) -> None:
    if peer not in ipaddress.ip_network("10.0.0.0/8"):
        assert client_address(str(peer), forwarded, PROXIES) == str(peer)


@given(st.lists(v4, min_size=1, max_size=6), v4)
def test_result_is_the_rightmost_untrusted_hop(
    hops: list[ipaddress.IPv4Address], client: ipaddress.IPv4Address
) -> None:
    chain = ", ".join(str(h) for h in [client, *hops])
    trusted = ipaddress.ip_network("10.0.0.0/8")
    untrusted = [h for h in [client, *hops] if h not in trusted]
    got = client_address("10.0.0.1", chain, (trusted,))
    assert got == str(untrusted[-1] if untrusted else client)
