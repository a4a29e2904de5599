"""The site's caches are bounded too (issue 25): a worker or web process that has shown
thousands of games keeps a fixed number of entries in each cache keyed by what a game
brings (a board's layout, a language, a form). tests/test_engine_caches.py holds the
engine to the same."""

from __future__ import annotations

import games
from tests.test_engine_caches import caches_of, takes_a_key

# Keyed by configuration, never by a game: one entry per value the settings name.
BY_CONFIGURATION = {
    "games.tasks._redis": "one client per broker URL",
    "games.mail.push._vapid": "one key per VAPID_PRIVATE_KEY setting",
}


def test_every_site_cache_with_a_key_keeps_a_bounded_number_of_entries() -> None:
    keyed = {name: c for name, c in caches_of(games) if takes_a_key(c)}
    assert "games.show.board_svg._layout" in keyed
    unbounded = [
        name
        for name, c in keyed.items()
        if c.cache_parameters()["maxsize"] is None and name not in BY_CONFIGURATION
    ]
    assert unbounded == []
