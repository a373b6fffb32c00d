"""The client address of a request (PGS_TRUSTED_PROXIES, X-Forwarded-For) and the per-client
counts (PGS_MAX_CONNECTIONS_PER_CLIENT): the pure parts of app/core/clients.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.clients import ClientCounts, TrustedProxies, limit_key, parse_networks
from tests.helpers import make_settings

PROXIES = TrustedProxies(parse_networks("10.0.0.0/8, 192.0.2.1, fd00::/8"))


def test_trusted_proxies_are_addresses_and_cidr_blocks():
    assert [str(n) for n in parse_networks(" 10.1.2.3/8,192.0.2.1 ,, ::1")] == [
        "10.0.0.0/8",
        "192.0.2.1/32",
        "::1/128",
    ]
    assert parse_networks("") == ()
    with pytest.raises(ValueError, match="'proxy.local' is not an IP address"):
        parse_networks("10.0.0.1,proxy.local")


def test_a_malformed_trusted_proxy_stops_the_start(tmp_path: Path):
    with pytest.raises(ValueError, match="'10.0.0.300'"):
        make_settings(tmp_path, trusted_proxies="10.0.0.300")


def test_from_an_untrusted_peer_x_forwarded_for_is_ignored():
    assert PROXIES.client_of("198.51.100.7", ["203.0.113.9"]) == "198.51.100.7"
    assert TrustedProxies(()).client_of("10.0.0.1", ["203.0.113.9"]) == "10.0.0.1"


def test_from_a_trusted_proxy_the_right_most_untrusted_hop_is_the_client():
    # The client wrote the first two hops itself; the proxies appended the last ones.
    forwarded = ["1.1.1.1, 203.0.113.9", "10.2.3.4"]
    assert PROXIES.client_of("192.0.2.1", forwarded) == "203.0.113.9"
    assert PROXIES.client_of("10.9.9.9", ["203.0.113.9:5123"]) == "203.0.113.9"
    assert PROXIES.client_of("10.9.9.9", ["[2001:db8::5]:443"]) == "2001:db8::5"
    assert PROXIES.client_of("10.9.9.9", ["::ffff:203.0.113.9"]) == "203.0.113.9"


def test_from_a_trusted_proxy_without_an_untrusted_hop():
    assert PROXIES.client_of("10.9.9.9", []) == "10.9.9.9"
    assert PROXIES.client_of("10.9.9.9", ["10.0.0.5, 10.0.0.6"]) == "10.0.0.5"


def test_a_hop_that_is_not_an_address_is_a_client_of_its_own_cut_short():
    assert PROXIES.client_of("10.9.9.9", ["unknown"]) == "unknown"
    assert PROXIES.client_of("10.9.9.9", ["x" * 500]) == "x" * 64


def test_ipv6_clients_are_counted_by_their_64():
    assert limit_key("2001:db8:1:2:aaaa::1") == limit_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert limit_key("2001:db8:1:3::1") != limit_key("2001:db8:1:2::1")
    assert limit_key("203.0.113.9") == "203.0.113.9"
    assert limit_key("unknown") == "unknown"


def test_client_counts_refuse_past_the_limit_and_free_on_give_back():
    counts = ClientCounts(2)
    assert counts.take("a") and counts.take("a") and not counts.take("a")
    assert counts.take("b")  # another client is not affected
    counts.give_back("a")
    assert counts.take("a")
    for client in ("a", "a", "b"):
        counts.give_back(client)
    assert counts.held("a") == counts.held("b") == 0
