"""An invite-only game is seen only by its players and the people invited to it (issue
9): those who opened its invite link in this browser, and those an invitation email went
to. To everyone else it does not exist: 404 on its page, its JSON, the archive's pages
and record, the deadline buttons; absent from the lobby's and the archive's lists."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from games.models import Game, OutgoingEmail
from tests.site.conftest import PASSWORD, three_player_game

NAME = "Secret garden"
PAGES = ["game", "game_json"]
ARCHIVE_PAGES = ["archive_game", "record_json"]


@pytest.fixture
def private(alice, bob, charlie) -> Game:
    return three_player_game(alice, bob, charlie, invite_only=True, name=NAME)


@pytest.fixture
def finished_private(private: Game) -> Game:
    """Over (its snapshots are those of its start: enough for the archive's pages)."""
    Game.objects.filter(pk=private.pk).update(status=Game.Status.FINISHED,
                                              finished_at=timezone.now())
    return Game.objects.get(pk=private.pk)


def as_user(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def status(client: Client, name: str, game: Game) -> int:
    return client.get(reverse(name, args=[game.pk])).status_code


@pytest.mark.parametrize("name", PAGES)
def test_a_running_invite_only_game_is_404_to_strangers(private, alice, dave, name):
    assert status(as_user(dave), name, private) == 404
    assert status(as_user(None), name, private) == 404
    assert status(as_user(alice), name, private) == 200


@pytest.mark.parametrize("name", PAGES)
def test_a_public_game_is_seen_by_anyone(game, dave, name):
    assert status(as_user(dave), name, game) == 200
    assert status(as_user(None), name, game) == 200


def test_opening_the_invite_link_lets_this_browser_see_the_game(private, dave):
    invited = as_user(dave)
    assert invited.get(reverse("invite", args=[private.invite_token])).status_code == 200
    assert status(invited, "game", private) == 200
    assert status(invited, "game_json", private) == 200
    assert status(as_user(dave), "game", private) == 404  # another browser: no link opened


def test_a_wrong_invite_token_shows_nothing(private, dave):
    guesser = as_user(dave)
    assert guesser.get(reverse("invite", args=["a-guess"])).status_code == 404
    assert status(guesser, "game", private) == 404


def invitation(game: Game, to: str) -> OutgoingEmail:
    return OutgoingEmail.objects.create(kind="invitation", game=game, to=to,
                                        subject="Join us", text="...")


def test_an_invitation_email_to_my_address_lets_me_see_the_game(private, dave):
    invitation(private, dave.email.upper())  # addresses compare without case
    assert status(as_user(dave), "game", private) == 200


def test_an_address_not_confirmed_yet_is_not_invited(private, dave):
    # Issue 21: changing one's email to an invited address opened the game at once.
    invitation(private, "friend@example.org")
    client = as_user(dave)
    client.post(reverse("profile"), {"display_name": "Dave", "time_zone": "UTC",
                                     "email": "friend@example.org",
                                     "current_password": PASSWORD})
    assert status(client, "game", private) == 404
    text = OutgoingEmail.objects.get(kind="email_confirm", to="friend@example.org").text
    client.post(re.search(r"(/accounts/email/\S+/)", text).group(1))  # proven: invited
    assert status(client, "game", private) == 200


def test_a_signup_not_confirmed_yet_is_not_invited(private, client):
    invitation(private, "friend@example.org")
    client.post(reverse("signup"), {
        "username": "friend", "email": "friend@example.org", "display_name": "Friend",
        "time_zone": "UTC", "password1": PASSWORD, "password2": PASSWORD})
    client.post(reverse("login"), {"username": "friend", "password": PASSWORD})
    assert status(client, "game", private) == 404  # no login before the link
    text = OutgoingEmail.objects.get(kind="signup_confirm", to="friend@example.org").text
    client.post(re.search(r"(/accounts/signup/\S+)", text).group(1))
    assert status(client, "game", private) == 200


def test_an_email_of_another_kind_or_game_or_address_does_not(private, game, dave):
    OutgoingEmail.objects.create(kind="your_turn", game=private, to=dave.email,
                                 subject="s", text="t")
    invitation(game, dave.email)
    invitation(private, "someone.else@example.org")
    assert status(as_user(dave), "game", private) == 404


def test_the_lobby_lists_a_finished_invite_only_game_only_to_its_people(finished_private,
                                                                        alice, dave):
    assert NAME not in as_user(dave).get(reverse("lobby")).content.decode()
    assert NAME not in as_user(None).get(reverse("lobby")).content.decode()
    assert NAME in as_user(alice).get(reverse("lobby")).content.decode()


def test_the_archive_lists_a_finished_invite_only_game_only_to_its_people(finished_private,
                                                                          bob, dave):
    assert NAME not in as_user(dave).get(reverse("archive")).content.decode()
    assert NAME in as_user(bob).get(reverse("archive")).content.decode()
    invitation(finished_private, dave.email)
    assert NAME in as_user(dave).get(reverse("archive")).content.decode()


@pytest.mark.parametrize("name", ARCHIVE_PAGES)
def test_the_archive_pages_of_a_finished_invite_only_game_are_404_to_strangers(
        finished_private, charlie, dave, name):
    assert status(as_user(dave), name, finished_private) == 404
    assert status(as_user(None), name, finished_private) == 404
    assert status(as_user(charlie), name, finished_private) == 200


@pytest.mark.parametrize("name", ["extend_deadline", "take_seat_back"])
def test_the_deadline_buttons_of_a_hidden_game_are_404(private, dave, name):
    response = as_user(dave).post(reverse(name, args=[private.pk]), {"hours": "5"})
    assert response.status_code == 404
