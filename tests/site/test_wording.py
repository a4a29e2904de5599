"""Wording on the pages (issue 10, item 5): plurals, articles, a name shown once, logs that
say "You" only to the one player an event is for, the join link on the game page, and the
lobby's status from the same notion as the game page's.

alice (red), bob (ochre) and charlie (lilac) play the `game` fixture; dave is an outsider.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from engine.moves import Submission
from engine.notation import parse_move
from games import services
from games.models import Event, Game, Seat
from games.play_forms import AcceptForm


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def page(client, user: User | None, name: str, *args: object) -> str:
    client.logout()
    if user is not None:
        client.force_login(user)
    response = client.get(reverse(name, args=list(args)))
    assert response.status_code == 200
    return response.content.decode()


# --- plurals and names ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ducats", "label"), [(1, "Accept 1 ducat"), (3, "Accept 3 ducats"), (0, "Accept 0 ducats")]
)
def test_the_accept_button_counts_its_ducats(ducats, label):
    form = AcceptForm(
        view={"viewer": "red", "ask": {"phase": "negotiation", "offer": ["ochre", ducats]}}
    )
    assert form.button_label() == label


def test_a_computer_is_named_with_its_colour_once(client, alice):
    gathering = services.create_game(
        alice,
        name="Gathering",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=["ochre"],
    )
    seats = page(client, alice, "game", gathering.pk)
    listed = re.search(r'<ul id="seats">(.*?)</ul>', seats, re.S)
    assert listed is not None
    assert "Computer (ochre, normal)</li>" in listed[1] and "(Ochre)" not in listed[1]
    unlinked = re.sub(r"<a [^>]*>|</a>", "", listed[1])  # a person's name links to their page
    assert "Alice (Red)</li>" in unlinked  # a person: the name, then the colour


# --- "You" only to the one an event is for ----------------------------------------------------


def private_card(game: Game, colour: str = "red") -> None:
    Event.objects.create(
        game=game,
        index=game.events.count(),
        phase_number=game.phase_number,
        turn=game.turn,
        kind="card",
        data={"kind": "card", "card": "parchment 3"},
        to_colour=colour,
    )


def test_the_archive_names_the_player_a_private_event_was_for(client, game, alice, dave):
    private_card(game)
    assert "You took the Parchment 3 card." in page(client, alice, "game", game.pk)
    Game.objects.filter(pk=game.pk).update(
        status=Game.Status.FINISHED, winners=["red"], finished_at=timezone.now(), deadline=None
    )
    for viewer in (alice, dave, None):
        archive = page(client, viewer, "archive_game", game.pk)
        assert "Alice took the Parchment 3 card." in archive
        content = archive[archive.index("<main") : archive.index("</main>")]  # not the nav
        assert not re.search(r"\bYou(r)?\b", re.sub(r"<[^>]*>", " ", content)), viewer


# --- the join link on the game page -------------------------------------------------------------


def test_seated_players_of_a_gathering_game_see_its_join_link_on_its_page(client, alice, bob, dave):
    gathering = services.create_game(
        alice,
        name="Friends only",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=True,
        colour="red",
        computer_colours=[],
    )
    link = f"http://testserver{reverse('invite', args=[gathering.invite_token])}"
    assert f'value="{link}"' in page(client, alice, "game", gathering.pk)
    services.join_game(gathering.pk, bob, "ochre")
    assert f'value="{link}"' in page(client, bob, "game", gathering.pk)
    public = services.create_game(
        dave,
        name="Anyone",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )
    assert public.invite_token not in page(client, alice, "game", public.pk)  # not seated


def test_a_started_game_shows_no_join_link(client, game, alice):
    assert game.invite_token not in page(client, alice, "game", game.pk)


# --- the lobby's status is the game page's ------------------------------------------------------


def test_the_lobby_leaves_out_those_who_have_submitted(client, alice):
    game = services.create_game(
        alice,
        name="Against computers",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=["ochre", "lilac"],
    )
    game = Game.objects.get(pk=game.pk)
    assert game.status == Game.Status.RUNNING and set(game.waiting) == {"red", "ochre", "lilac"}
    for computer in Seat.objects.filter(game=game, is_computer=True):
        assert services.play_computer(game.pk, game.phase_number, computer.pk)
    marked = page(client, alice, "game", game.pk)
    assert marked.count("✓ submitted") == 2  # the game page: both computers are in
    row = re.search(rf'<tr id="my-game-{game.pk}".*?</tr>', page(client, alice, "lobby"), re.S)
    assert row is not None
    status = " ".join(re.sub(r"<[^>]*>", " ", row[0]).split())
    assert "Your move" in status and "also waiting for" not in status, status


def test_the_lobby_names_those_still_to_submit(client, game, alice, bob):
    services.submit(game.pk, Seat.objects.get(game=game, user=bob).pk, _decision(game, "ochre"))
    row = re.search(rf'<tr id="my-game-{game.pk}".*?</tr>', page(client, alice, "lobby"), re.S)
    assert row is not None
    status = " ".join(re.sub(r"<[^>]*>", " ", row[0]).split())
    assert "Your move (also waiting for Charlie)" in status, status


def _decision(game: Game, colour: str) -> Submission:
    need = Game.objects.get(pk=game.pk).engine_state.cards_to_choose(colour)
    return parse_move("decide " + ", ".join(["2", "3"][:need]))
