"""The callback URL policy, with a fake resolver: no test here connects, and the one that looks
names up for real does it in a network namespace with loopback only."""

from __future__ import annotations

import ipaddress
import re
import shutil
import subprocess
import sys

import pytest

from app.core.callback_urls import (
    CallbackPolicy,
    CallbackRefused,
    CallbackUnresolved,
    IPAddress,
    allow_list_entry,
    origin,
)

PUBLIC = ipaddress.ip_address("93.184.216.34")

NAMES: dict[str, list[str]] = {
    "hooks.example.org": ["93.184.216.34", "2606:2800:220:1::1"],
    "metadata.example.org": ["169.254.169.254"],
    "half.example.org": ["93.184.216.34", "10.0.0.7"],  # one bad answer is enough
    "lms.internal": ["10.1.2.3"],
}


def fake_resolve(host: str) -> list[IPAddress]:
    if host not in NAMES:
        raise OSError(f"no such name: {host}")
    return [ipaddress.ip_address(address) for address in NAMES[host]]


def policy(*allowed: str) -> CallbackPolicy:
    return CallbackPolicy(allowed, resolve=fake_resolve)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://2130706433/",  # decimal
        "http://0x7f.1/",  # hex, short form
        "http://0x7f000001/",
        "http://0177.0.0.1/",  # octal
        "http://127.1/",
        "http://localhost./",  # a trailing dot is the same name
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",  # IPv4-mapped IPv6
        "http://[::ffff:7f00:1]/",
        "http://[2002:7f00:1::1]/",  # 6to4 around 127.0.0.1
        "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 around 169.254.169.254
        "http://169.254.169.254/latest/meta-data/",  # cloud metadata
        "http://[fe80::1]/",
        "http://10.0.0.1/",
        "http://172.16.0.1/",
        "http://192.168.1.1/",
        "http://100.100.100.200/",  # shared address space (a cloud's metadata too)
        "http://[fd00::1]/",  # unique local
        "http://[fec0::1]/",  # site-local
        "http://224.0.0.1/",
        "http://239.255.255.250/",
        "http://[ff02::1]/",
        "http://0.0.0.0/",
        "http://0/",
        "http://[::]/",
        "http://240.0.0.1/",  # reserved
        "http://metadata.example.org/",
        "http://half.example.org/",
        "https://user:secret@10.0.0.1:8443/hook",
    ],
)
def test_internal_addresses_are_refused_in_every_spelling(url: str) -> None:
    resolve_localhost = {"localhost": [ipaddress.ip_address("127.0.0.1")]}

    def resolver(host: str) -> list[IPAddress]:
        return resolve_localhost[host] if host in resolve_localhost else fake_resolve(host)

    with pytest.raises(CallbackRefused) as refused:
        CallbackPolicy(resolve=resolver).check(url)
    assert "secret" not in str(refused.value)


def test_a_public_name_is_checked_and_its_first_address_is_the_one_to_connect_to() -> None:
    assert policy().check("https://hooks.example.org/hook?token=abc") == PUBLIC
    assert policy().check("http://93.184.216.34:8080/") == PUBLIC
    assert policy().check("http://[2606:2800:220:1::1]/") == ipaddress.ip_address(
        "2606:2800:220:1::1"
    )


def test_the_reason_names_the_host_and_address_but_not_the_path() -> None:
    with pytest.raises(CallbackRefused) as refused:
        policy().check("http://metadata.example.org/latest?token=hidden")
    message = str(refused.value)
    assert "metadata.example.org resolves to 169.254.169.254" in message
    assert "link-local" in message
    assert "hidden" not in message and "latest" not in message


@pytest.mark.parametrize("url", ["ftp://hooks.example.org/", "file:///etc/passwd", "http:///x"])
def test_only_http_and_https_urls_with_a_host_are_called(url: str) -> None:
    with pytest.raises(CallbackRefused):
        policy().check(url)


def test_a_name_that_does_not_resolve_is_refused_as_unresolved() -> None:
    with pytest.raises(CallbackUnresolved, match=r"nowhere\.example\.org does not resolve"):
        policy().check("http://nowhere.example.org/")
    with pytest.raises(CallbackUnresolved):  # no inet_aton spelling: a name, and none resolves
        policy().check("http://999999999999/")


def test_the_allow_list_names_hosts_addresses_and_networks() -> None:
    assert policy("127.0.0.1").check("http://127.0.0.1:9000/") == ipaddress.ip_address("127.0.0.1")
    assert policy("127.0.0.0/8").check("http://2130706433/") == ipaddress.ip_address("127.0.0.1")
    assert policy("LMS.Internal.").check("http://lms.internal/") == ipaddress.ip_address("10.1.2.3")
    assert policy("10.0.0.0/8").check("http://half.example.org/") == PUBLIC
    with pytest.raises(CallbackRefused):  # a name allows that name, not its address
        policy("lms.internal").check("http://10.1.2.3/")
    with pytest.raises(CallbackRefused):
        policy("127.0.0.1").check("http://127.0.0.2/")


@pytest.mark.parametrize("entry", ["", "http://x/", "a b", "10.0.0.0/33"])
def test_an_allow_list_entry_must_be_an_address_a_network_or_a_name(entry: str) -> None:
    with pytest.raises(ValueError):
        allow_list_entry(entry)


def test_the_origin_of_a_url_drops_credentials_path_and_query() -> None:
    assert origin("https://u:p@Hooks.Example.org:8443/a/b?token=1#f") == (
        "https://hooks.example.org:8443"
    )
    assert origin("http://[::1]/x") == "http://[::1]"


REAL_RESOLVER = """
from app.core.callback_urls import CallbackPolicy, CallbackRefused, CallbackUnresolved
policy = CallbackPolicy()
for url, refusal in [
    ("http://localhost:9/hook", CallbackRefused),
    ("http://nowhere.invalid/hook", CallbackUnresolved),
]:
    try:
        policy.check(url)
    except refusal as refused:
        print(type(refused).__name__, refused)
    else:
        raise SystemExit(f"{url} was not refused")
"""


@pytest.mark.skipif(
    shutil.which("unshare") is None
    or subprocess.run(["unshare", "-n", "true"], check=False).returncode != 0,
    reason="needs `unshare -n` (root or user namespaces) to look names up with no way out",
)
def test_the_real_resolver_refuses_in_a_network_namespace_with_loopback_only() -> None:
    # getaddrinfo itself, where a DNS query has nowhere to go.
    result = subprocess.run(
        ["unshare", "-n", sys.executable, "-c", REAL_RESOLVER],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    localhost, nowhere = result.stdout.splitlines()
    assert re.fullmatch(
        r"CallbackRefused localhost resolves to (127\.0\.0\.1|::1), which is a loopback address; "
        r"webhooks go to public addresses only",
        localhost,
    )
    assert nowhere == "CallbackUnresolved nowhere.invalid does not resolve"
