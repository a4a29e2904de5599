"""Every reader of a game agrees with the one rule of who reads what (issue 22, item 4):
the events a seat reads are `Event.objects.visible_to(colour)`, the messages
`Message.objects.visible_to(seat)` (the archive's: to everyone, for anyone). Seven
readers show a game: the page, its JSON, the live version of an open page, the lobby's
row, an email, the archive and the history. Each is held here to the rule with planted
words that each have one reader or none: a message to everyone, one from a player the
viewer muted, one to the viewer, one between two others, and an event for another
player's eyes only.

The live version is held to it too: it changes when, and only when, a planted item is
one its reader reads, so that a page that can see nothing new never fetches itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from engine.errors import IllegalMove
from engine.reasons import Reason
from games import chat, services
from games.mail import compose
from games.models import Event, Game, Message, OutgoingEmail, PendingSubmission, Seat

pytestmark = pytest.mark.django_db

PUBLIC, MUTED, TO_ALICE, BETWEEN_OTHERS = (
    "Planted-to-everyone",
    "Planted-from-the-muted",
    "Planted-to-alice",
    "Planted-between-bob-and-charlie",
)
SECRET_EVENT = "Planted-refused-of-bob"  # the move of a refusal told to ochre alone
MESSAGES = (PUBLIC, MUTED, TO_ALICE, BETWEEN_OTHERS)
EVERY_WORD = (*MESSAGES, SECRET_EVENT)


@dataclass
class Table:
    game: Game
    seats: dict[str, Seat]  # by colour: alice red, bob ochre, charlie lilac


@pytest.fixture
def table(game: Game, alice: User) -> Table:
    seats = {s.colour: s for s in Seat.objects.filter(game=game)}
    chat.set_player_muted(seats["red"], "lilac", True)  # alice mutes charlie
    return Table(
        Game.objects.get(pk=game.pk), {c: Seat.objects.get(pk=s.pk) for c, s in seats.items()}
    )


def plant(table: Table, word: str) -> None:
    """Plant `word`: posted as table talk, or the refused event of ochre's."""
    senders = {PUBLIC: "ochre", MUTED: "lilac", TO_ALICE: "ochre", BETWEEN_OTHERS: "ochre"}
    to = {TO_ALICE: "red", BETWEEN_OTHERS: "lilac"}
    game = table.game
    if word != SECRET_EVENT:
        user_id = table.seats[senders[word]].user_id
        chat.post(game.pk, user_id, word, to_colour=to.get(word, ""))
        return
    refused = services._refused(
        PendingSubmission(seat=table.seats["ochre"], text=word),
        IllegalMove(Reason("wall_supply_empty")),
        game.turn,
    )
    last = Event.objects.filter(game=game).order_by("-index").first()
    Event.objects.create(
        game=game,
        index=(last.index + 1) if last else 0,
        phase_number=game.phase_number,
        turn=game.turn,
        kind="refused",
        data=dict(refused),
        to_colour="ochre",
    )


def plant_all(table: Table) -> None:
    for word in EVERY_WORD:
        plant(table, word)


def seat_of(table: Table, user: User | None) -> Seat | None:
    return next((s for s in table.seats.values() if user and s.user_id == user.pk), None)


def by_rule(table: Table, user: User | None, *, archive: bool = False) -> set[str]:
    """The planted words the one rule lets `user` read (the archive's: anyone's)."""
    seat = None if archive else seat_of(table, user)
    colour = seat.colour if seat else None
    messages = Message.objects.filter(game=table.game).visible_to(seat, archive=archive)
    events = Event.objects.filter(game=table.game).visible_to(colour, everything=archive)
    words = set(messages.values_list("text", flat=True))
    if events.filter(kind="refused").exists():
        words.add(SECRET_EVENT)
    return words & set(EVERY_WORD)


def shown_in(text: str) -> set[str]:
    return {word for word in EVERY_WORD if word in text}


def client_of(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def get(user: User | None, url: str) -> str:
    response = client_of(user).get(url)
    assert response.status_code == 200, url
    return response.content.decode()


@pytest.fixture(
    params=["alice", "bob", "dave", None],
    ids=["alice, who muted charlie", "bob, who wrote to charlie", "dave, a spectator", "a visitor"],
)
def viewer(request: pytest.FixtureRequest) -> User | None:
    return request.getfixturevalue(request.param) if request.param else None


# --- the readers ---------------------------------------------------------------------------------


def test_the_game_page_shows_what_the_rule_lets_its_reader_read(table, viewer):
    plant_all(table)
    page = get(viewer, reverse("game", args=[table.game.pk]))
    assert shown_in(page) == by_rule(table, viewer)


def test_the_json_shows_the_events_the_rule_lets_its_reader_read_and_no_talk(table, viewer):
    plant_all(table)
    body = get(viewer, reverse("game_json", args=[table.game.pk]))
    assert shown_in(body) == by_rule(table, viewer) - set(MESSAGES)


def test_the_history_shows_what_the_rule_lets_its_reader_read(table, viewer):
    """The whole log, with the table talk at the phase it was written (issue 24)."""
    plant_all(table)
    log = get(viewer, reverse("game_history", args=[table.game.pk]))
    assert shown_in(log) == by_rule(table, viewer)


def test_the_lobby_row_shows_none_of_it(table, viewer):
    plant_all(table)
    lobby = get(viewer, reverse("lobby"))
    assert f'data-game="{table.game.pk}"' in lobby or viewer is None or viewer.username == "dave"
    assert shown_in(lobby) == set()


@pytest.mark.parametrize("name", ["alice", "bob", "charlie"])
def test_an_email_tells_what_the_rule_lets_its_reader_read(table, request, name):
    user = request.getfixturevalue(name)
    plant_all(table)
    seat = seat_of(table, user)
    assert seat is not None
    email = compose.your_turn(table.game, seat, since=0)
    assert email is not None
    sent = OutgoingEmail.objects.get(pk=email.pk)
    for body in (sent.text, sent.html):
        assert shown_in(body) == by_rule(table, user)


def test_the_archive_shows_the_talk_to_everyone_and_every_event_to_anyone(table, viewer):
    plant_all(table)
    Game.objects.filter(pk=table.game.pk).update(
        status=Game.Status.FINISHED, waiting=[], deadline=None, finished_at=timezone.now()
    )
    page = get(viewer, reverse("archive_game", args=[table.game.pk]))
    assert shown_in(page) == by_rule(table, viewer, archive=True)
    assert shown_in(page) == {PUBLIC, MUTED, SECRET_EVENT}  # the game is over: no secrets


# --- the live version: new only when there is something new to read ------------------------------


def version_of(user: User | None, game: Game) -> Callable[[], str]:
    client = client_of(user)
    url = reverse("game_live", args=[game.pk])
    return lambda: client.get(url).json()["game"]["version"]


def test_the_live_version_changes_when_and_only_when_its_reader_has_something_new(table, viewer):
    version = version_of(viewer, table.game)
    for word in EVERY_WORD:
        before, readable_before = version(), by_rule(table, viewer)
        plant(table, word)
        newly_readable = by_rule(table, viewer) - readable_before
        assert (version() != before) == bool(newly_readable), (word, newly_readable)


def test_the_page_is_drawn_with_the_version_its_poll_answers(table, viewer):
    plant_all(table)
    page = get(viewer, reverse("game", args=[table.game.pk]))
    assert f'data-live-version="{version_of(viewer, table.game)()}"' in page


def test_the_lobby_is_drawn_with_the_version_its_poll_answers(table, alice):
    lobby = get(alice, reverse("lobby"))
    answer = client_of(alice).get(reverse("live") + "?lobby=1").json()["lobby"]
    assert f'data-live-version="{answer}"' in lobby
