"""games.links.absolute_url: the one place that joins SITE_URL to a path (issue 22, item 6)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from django.urls import reverse

from games.links import absolute_url


def test_a_url_name_and_its_arguments_or_a_path_become_an_address_on_site_url(settings):
    settings.SITE_URL = "https://games.example.org"
    assert absolute_url("game", 7) == f"https://games.example.org{reverse('game', args=[7])}"
    assert absolute_url("lobby") == f"https://games.example.org{reverse('lobby')}"
    assert absolute_url("/m/abc/") == "https://games.example.org/m/abc/"


def test_the_query_is_encoded_and_an_empty_one_adds_nothing(settings):
    settings.SITE_URL = "http://127.0.0.1:8000"
    assert absolute_url("signup", query={}) == f"http://127.0.0.1:8000{reverse('signup')}"
    url = absolute_url("signup", query={"next": "/invite/x/?a=1&b=2", "s": "1:abc:def"})
    parts = urlsplit(url)
    assert parts.query == "next=%2Finvite%2Fx%2F%3Fa%3D1%26b%3D2&s=1:abc:def"
    assert parse_qs(parts.query) == {"next": ["/invite/x/?a=1&b=2"], "s": ["1:abc:def"]}
