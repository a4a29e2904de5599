"""`python3 dev.py run ADDRESS`: the environment it gives the web server and the worker,
so that every link in every email points to ADDRESS (issue 10, item 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dev import DEFAULT_ALLOWED_HOSTS, run_environment

HOST = "gamebox"  # the machine's hostname, as socket.gethostname() would say


@pytest.mark.parametrize(("address", "site_url"), [
    ("127.0.0.1:8000", "http://127.0.0.1:8000"),
    ("127.0.0.1:9000", "http://127.0.0.1:9000"),
    ("9000", "http://127.0.0.1:9000"),
    ("localhost:8123", "http://localhost:8123"),
    ("[::1]:8000", "http://[::1]:8000"),
])
def test_a_local_address_sets_site_url_and_leaves_allowed_hosts(address, site_url):
    assert run_environment(address, {}, HOST) == {"SITE_URL": site_url}


def test_another_host_is_also_allowed():
    assert run_environment("192.168.1.20:8080", {}, HOST) == {
        "SITE_URL": "http://192.168.1.20:8080",
        "ALLOWED_HOSTS": f"{DEFAULT_ALLOWED_HOSTS},192.168.1.20"}


@pytest.mark.parametrize("address", ["0.0.0.0:8000", "0:8000", "[::]:8000"])
def test_all_interfaces_means_the_machines_hostname(address):
    assert run_environment(address, {}, HOST) == {
        "SITE_URL": "http://gamebox:8000", "ALLOWED_HOSTS": f"{DEFAULT_ALLOWED_HOSTS},gamebox"}


def test_a_site_url_already_set_is_kept_and_its_host_allowed():
    assert run_environment("192.168.1.20:8080", {"SITE_URL": "https://games.example.org"},
                           HOST) == {"ALLOWED_HOSTS": f"{DEFAULT_ALLOWED_HOSTS},192.168.1.20,"
                                                      "games.example.org"}
    assert run_environment("127.0.0.1:8000", {"SITE_URL": "http://localhost:8000"}, HOST) == {}


def test_allowed_hosts_already_set_are_kept_and_extended_once():
    environ = {"ALLOWED_HOSTS": "games.example.org"}
    assert run_environment("10.0.0.5:8000", environ, HOST)["ALLOWED_HOSTS"] == \
        "games.example.org,10.0.0.5"
    assert "ALLOWED_HOSTS" not in run_environment(
        "10.0.0.5:8000", {"ALLOWED_HOSTS": "games.example.org,10.0.0.5"}, HOST)
    assert "ALLOWED_HOSTS" not in run_environment("10.0.0.5:8000", {"ALLOWED_HOSTS": "*"}, HOST)


def test_the_default_allowed_hosts_are_the_settings_own():
    source = (Path(__file__).parents[1] / "lowenherz_site" / "settings.py").read_text()
    assert f'env_list("ALLOWED_HOSTS", "{DEFAULT_ALLOWED_HOSTS}")' in source
