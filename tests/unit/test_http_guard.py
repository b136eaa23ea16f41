"""``Host`` / ``Origin`` rules shared by serve, MCP over HTTP and the Agent Server (DNS rebinding)."""

from __future__ import annotations

import pytest

from grepgraph.http_guard import HostPolicy, is_loopback

PORT = 8123


@pytest.mark.parametrize("host", [f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"[::1]:{PORT}", f"LOCALHOST:{PORT}"])
def test_loopback_names_with_the_served_port_are_answered(host):
    assert HostPolicy().host_problem(host, PORT) == ""


@pytest.mark.parametrize(("host", "why"), [
    (f"rebind.example:{PORT}", "not this server's name"),
    (f"127.0.0.1.nip.io:{PORT}", "not this server's name"),
    ("127.0.0.1:9999", "names port 9999"),
    ("127.0.0.1", "names port 80"),
    ("", "no Host header"),
    (None, "no Host header"),
    ("user@127.0.0.1:8123", "malformed"),
    ("127.0.0.1:8123/path", "malformed"),
    ("127.0.0.1:99999", "malformed"),
])
def test_other_hosts_are_refused(host, why):
    assert why in HostPolicy().host_problem(host, PORT)


def test_the_operator_allows_more_names():
    policy = HostPolicy.allowing(hosts=["devbox.lan", "proxy.example:443"])
    assert policy.host_problem(f"DEVBOX.lan:{PORT}", PORT) == ""
    assert policy.host_problem("proxy.example:443", PORT) == ""  # name:port: as given (a proxy in front)
    assert "names port" in policy.host_problem("devbox.lan:9999", PORT)
    assert "not this server's name" in policy.host_problem(f"other.lan:{PORT}", PORT)


@pytest.mark.parametrize("origin", [None, "http://localhost:3000", "http://127.0.0.1:8123", "https://[::1]"])
def test_no_origin_or_a_loopback_page_may_call(origin):
    assert HostPolicy().origin_problem(origin) == ""


@pytest.mark.parametrize("origin", ["https://rebind.example", "null", "file://", "http://localhost.example:80",
                                    "ftp://localhost", "http://localhost:99999"])
def test_other_browser_origins_are_refused(origin):
    assert "may not call this server" in HostPolicy().origin_problem(origin)


def test_allowed_origins_and_the_environment(monkeypatch):
    monkeypatch.setenv("GREPGRAPH_ALLOWED_HOSTS", "devbox.lan, ")
    monkeypatch.setenv("GREPGRAPH_ALLOWED_ORIGINS", "https://tool.example/")
    policy = HostPolicy.from_environment(origins=["https://studio.example"])
    assert policy.origin_problem("https://tool.example") == "" and policy.origin_problem("https://studio.example") == ""
    assert policy.host_problem(f"devbox.lan:{PORT}", PORT) == ""
    assert policy.origin_problem("https://tool.example.evil") != ""


def test_loopback_detection():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("[::1]") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("example.com")
