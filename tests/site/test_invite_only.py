"""An invite-only game is seen only by its players and the people invited to it (issue
9): those who opened its invite link in this browser, and those an invitation email went
to. To everyone else it does not exist: 404 on its page, its JSON, the archive's pages
and record, the deadline buttons; absent from the lobby's and the archive's lists."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client
from django.urls import URLResolver, get_resolver, reverse
from django.utils import timezone

from games.mail import outbox
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
    Game.objects.filter(pk=private.pk).update(
        status=Game.Status.FINISHED, finished_at=timezone.now()
    )
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
    return OutgoingEmail.objects.create(
        kind="invitation", game=game, to=to, subject="Join us", text="..."
    )


def test_an_invitation_email_to_my_address_lets_me_see_the_game(private, dave):
    invitation(private, dave.email.upper())  # addresses compare without case
    assert status(as_user(dave), "game", private) == 200


def test_an_address_not_confirmed_yet_is_not_invited(private, dave):
    # Issue 21: changing one's email to an invited address opened the game at once.
    invitation(private, "friend@example.org")
    client = as_user(dave)
    client.post(
        reverse("profile"),
        {
            "display_name": "Dave",
            "time_zone": "UTC",
            "email": "friend@example.org",
            "current_password": PASSWORD,
        },
    )
    assert status(client, "game", private) == 404
    text = OutgoingEmail.objects.get(kind="email_confirm", to="friend@example.org").text
    client.post(re.search(r"(/accounts/email/\S+/)", text).group(1))  # proven: invited
    assert status(client, "game", private) == 200


def test_a_signup_not_confirmed_yet_is_not_invited(private, client):
    invitation(private, "friend@example.org")
    client.post(
        reverse("signup"),
        {
            "username": "friend",
            "email": "friend@example.org",
            "display_name": "Friend",
            "time_zone": "UTC",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
    )
    client.post(reverse("login"), {"username": "friend", "password": PASSWORD})
    assert status(client, "game", private) == 404  # no login before the link
    text = OutgoingEmail.objects.get(kind="signup_confirm", to="friend@example.org").text
    client.post(re.search(r"(/accounts/signup/\S+)", text).group(1))
    assert status(client, "game", private) == 200


def test_an_email_of_another_kind_or_game_or_address_does_not(private, game, dave):
    OutgoingEmail.objects.create(
        kind="your_turn", game=private, to=dave.email, subject="s", text="t"
    )
    invitation(game, dave.email)
    invitation(private, "someone.else@example.org")
    assert status(as_user(dave), "game", private) == 404


def test_the_lobby_lists_a_finished_invite_only_game_only_to_its_people(
    finished_private, alice, dave
):
    assert NAME not in as_user(dave).get(reverse("lobby")).content.decode()
    assert NAME not in as_user(None).get(reverse("lobby")).content.decode()
    assert NAME in as_user(alice).get(reverse("lobby")).content.decode()


def test_the_archive_lists_a_finished_invite_only_game_only_to_its_people(
    finished_private, bob, dave
):
    assert NAME not in as_user(dave).get(reverse("archive")).content.decode()
    assert NAME in as_user(bob).get(reverse("archive")).content.decode()
    invitation(finished_private, dave.email)
    assert NAME in as_user(dave).get(reverse("archive")).content.decode()


@pytest.mark.parametrize("name", ARCHIVE_PAGES)
def test_the_archive_pages_of_a_finished_invite_only_game_are_404_to_strangers(
    finished_private, charlie, dave, name
):
    assert status(as_user(dave), name, finished_private) == 404
    assert status(as_user(None), name, finished_private) == 404
    assert status(as_user(charlie), name, finished_private) == 200


@pytest.mark.parametrize("name", ["propose", "vote", "take_seat_back"])
def test_the_deadline_buttons_of_a_hidden_game_are_404(private, dave, name):
    data = {"kind": "extend", "amount": "5", "vote": "yes"}
    response = as_user(dave).post(reverse(name, args=[private.pk]), data)
    assert response.status_code == 404


# --- every URL that names a game (issue 21, item 7) ------------------------------------------
# Found by walking the URLconf, so that a URL added later is checked without being listed.


def game_urls(patterns: list | None = None, namespace: str = "") -> list[str]:
    """The names of every URL pattern that takes a `game_id` (with its namespace)."""
    names = []
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            names += game_urls(entry.url_patterns, inner)
        elif "game_id" in entry.pattern.regex.groupindex:
            assert entry.name, f"{entry.pattern}: a URL of a game needs a name to be checked"
            names.append(namespace + entry.name)
    return names


GAME_URLS = game_urls()
# What a form of each of them might send: an outsider's POST is refused before any is read.
POST_DATA = {
    "confirm": "yes",
    "hours": "5",
    "kind": "extend",
    "amount": "5",
    "vote": "yes",
    "muted": "on",
    "colour": "red",
    "text": "Hello",
    "to": "",
    "move": "decide 1",
    "phase": "1",
    "token": "",
    "s": "",
    "addresses": "someone@example.org",
}


def test_the_walk_finds_the_urls_of_a_game():
    assert {
        "game",
        "game_json",
        "game_live",
        "game_history",
        "submit",
        "game_say",
        "mute_player",
        "mute_game",
        "invite_by_email",
        "join_game",
        "archive_game",
        "record_json",
        "propose",
        "vote",
        "cancel_game",
    } <= set(GAME_URLS)


def answer(client: Client, method: str, name: str, game_id: int) -> HttpResponse:
    url = reverse(name, kwargs={"game_id": game_id})
    return client.post(url, POST_DATA) if method == "POST" else client.get(url)


def names_nothing(response: HttpResponse, game: Game) -> None:
    """Neither the page nor where it leads says anything of the game."""
    said = response.content.decode(errors="replace") + response.get("Location", "")
    for secret in (game.name, game.invite_token):
        assert secret not in said, f"{response.status_code} names {secret!r}"


def same_without_the_id(
    seen: HttpResponse, seen_id: int, missing: HttpResponse, missing_id: int
) -> None:
    """A private game's answer is that of an id no game has: the same status, and the
    same redirect but for the id."""
    assert seen.status_code == missing.status_code
    assert seen.get("Location", "").replace(str(seen_id), "ID") == missing.get(
        "Location", ""
    ).replace(str(missing_id), "ID")


@pytest.mark.parametrize("name", GAME_URLS)
def test_every_url_of_a_private_game_is_as_if_it_did_not_exist(
    name, private, alice, bob, charlie, dave
):
    finished = three_player_game(alice, bob, charlie, invite_only=True, name="Hidden hall")
    Game.objects.filter(pk=finished.pk).update(
        status=Game.Status.FINISHED, finished_at=timezone.now()
    )
    missing = Game.objects.order_by("-pk").values_list("pk", flat=True).first() + 1000
    for game in (private, finished):
        for method in ("GET", "POST"):
            outsider, visitor = as_user(dave), as_user(None)
            shown = answer(outsider, method, name, game.pk)
            names_nothing(shown, game)
            assert shown.status_code in {404, 405}, (method, shown.status_code)
            same_without_the_id(shown, game.pk, answer(outsider, method, name, missing), missing)
            shown = answer(visitor, method, name, game.pk)
            names_nothing(shown, game)
            assert shown.status_code in {404, 405} or shown["Location"].startswith(
                reverse("login")
            ), (method, shown.status_code)
            same_without_the_id(shown, game.pk, answer(visitor, method, name, missing), missing)
    # A player still gets the page (or the form's answer) of one of the two.
    assert {answer(as_user(alice), "GET", name, g.pk).status_code for g in (private, finished)} - {
        404
    }


def test_the_mute_page_of_a_private_game_is_404_but_to_its_players_link(private, alice, dave):
    """The mute page named any game to anyone (issue 21, item 7); its signed link, in
    the player's email, still works without a session."""
    url = reverse("mute_game", args=[private.pk])
    for client in (as_user(dave), as_user(None)):
        assert client.get(url).status_code == 404
        assert client.get(url, {"s": "forged"}).status_code == 404
    link = outbox.mute_url(alice, private).removeprefix(settings.SITE_URL)
    page = as_user(None).get(link)
    assert page.status_code == 200 and NAME in page.content.decode()
