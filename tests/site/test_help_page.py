"""Help at the point of need on the game page (issue 10, item 7; the sentences are
tested in tests/test_help.py)."""

from __future__ import annotations


def test_the_game_page_shows_the_help_where_the_choice_is_made(client, game, alice):
    """On the page of a basic game's first decision: the card's actions explained."""
    client.force_login(alice)
    page = client.get(f"/games/{game.pk}/").content.decode()
    help_at = page.index('id="help"')
    assert page.index('id="play"') < help_at < page.index("<form", help_at)
    assert "Card 1: " in page and 'href="/rules/#s3">Rules 3</a>' in page
