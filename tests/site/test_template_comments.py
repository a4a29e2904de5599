"""Template comments never reach a visitor. Django's `{# #}` ends on the line it starts
on: one written over two lines is not a comment at all, and the page shows its words
(issue 21, item 11). A longer comment is `{% comment %}`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from games.views import lists
from games.views import lobby as lobby_views
from tests.site.test_lobby import open_game

UNCLOSED = re.compile(r"\{#(?!.*#\})")  # `{#` with no `#}` after it on its line


def our_templates() -> list[Path]:
    """Every template of the site's own: the project's folder and its apps' (not those of
    installed packages)."""
    folders = [Path(d) for d in settings.TEMPLATES[0]["DIRS"]]
    folders += [p for p in Path(settings.BASE_DIR).glob("*/templates") if p.is_dir()]
    return sorted(f for folder in folders for f in folder.rglob("*") if f.is_file())


def test_the_templates_are_found():
    names = {p.name for p in our_templates()}
    assert {"base.html", "game.html", "lobby.html", "_pages.html"} <= names


@pytest.mark.parametrize("path", our_templates(), ids=lambda p: p.name)
def test_every_comment_mark_is_closed_on_its_line(path: Path):
    for number, line in enumerate(path.read_text().splitlines(), 1):
        assert not UNCLOSED.search(line), (
            f"{path}:{number}: a {{# comment #}} is one line only; use {{% comment %}}"
        )


def test_the_game_page_shows_no_comment(client, alice, game):
    client.force_login(alice)
    page = client.get(reverse("game", args=[game.pk])).content.decode()
    assert 'id="live-game"' in page and "{#" not in page and "#}" not in page


def test_the_lobby_with_its_page_links_shows_no_comment(client, alice, bob, monkeypatch):
    for module in (lobby_views, lists):  # two open games: page links
        monkeypatch.setattr(module, "OPEN_GAMES_PAGE", 1)
    open_game(alice, "First")
    open_game(alice, "Second")
    client.force_login(bob)
    page = client.get(reverse("lobby")).content.decode()
    assert 'id="open-games-pages"' in page and 'id="live-lobby"' in page
    assert "{#" not in page and "#}" not in page
