"""Shared people and games for the site's tests (healthchecks style: alice, bob and
charlie play; dave is an outsider)."""

from __future__ import annotations

import os

import pytest
from django.contrib.auth.models import User

from games import services
from games.models import Game

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright beside live_server
PASSWORD = "a long enough passphrase"


def make_user(name: str, time_zone: str = "UTC") -> User:
    user = User.objects.create_user(name, f"{name}@example.org", PASSWORD)
    user.profile.display_name = name.title()
    user.profile.time_zone = time_zone
    user.profile.save()
    return user


@pytest.fixture
def alice(db) -> User:
    return make_user("alice", "Europe/Berlin")


@pytest.fixture
def bob(db) -> User:
    return make_user("bob", "America/New_York")


@pytest.fixture
def charlie(db) -> User:
    return make_user("charlie")


@pytest.fixture
def dave(db) -> User:
    return make_user("dave")


def three_player_game(alice: User, bob: User, charlie: User, **options) -> Game:
    """A started game: alice red, bob ochre, charlie lilac (basic, sealed by default)."""
    settings = {"name": "Test game", "player_count": 3, "setup": "basic",
                "decisions": "sealed", "money": "hidden", "deadline_hours": 48,
                "invite_only": False, "colour": "red", "computer_colours": [], **options}
    game = services.create_game(alice, **settings)
    services.join_game(game.pk, bob, "ochre")
    services.join_game(game.pk, charlie, "lilac")
    return Game.objects.get(pk=game.pk)


@pytest.fixture
def game(alice, bob, charlie) -> Game:
    return three_player_game(alice, bob, charlie)
