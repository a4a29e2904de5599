"""The live version an open page polls is read from marks the writes keep (`Game.live_mark`,
`Seat.live_mark`, games.signals), not worked out from the rows on every poll (issue 25,
item 1). A mark the writes forget would leave a page showing an old game for ever, so
each kind of write a reader can see is played here, and after each one the kept version
is held to a version worked out the long way from the rows (`by_rows`, what the page
shows: the game's columns, its seats, who has submitted, the newest event and message
the reader may read by the one rule; `lobby_by_rows`, what the lobby shows): whenever
that one changes for a reader, the kept one must change too. (That nothing a reader
cannot see changes theirs is held by tests/site/test_readers_agree.py.)
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Max
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone

from engine.game import default_move
from games import chat, deadlines, services, votes
from games.models import (
    Event,
    Game,
    Message,
    Notifications,
    PendingSubmission,
    Seat,
    away_q,
)
from games.views.lists import LISTED, my_games_in_order, open_games
from tests.site.conftest import make_user, new_game
from tests.site.test_game_page import play_phases

pytestmark = pytest.mark.django_db

Step = Callable[[Game], object]
# What the game page and a lobby row show of a game's own row.
SHOWN = ("status", "phase_number", "turn", "waiting", "deadline", "paused", "needs_repair_since")


def by_rows(game_id: int, user: User | None) -> tuple[object, ...]:
    """What the game page shows its reader, read the long way from the rows."""
    game = Game.objects.get(pk=game_id)
    seat = Seat.objects.filter(game=game, user=user).first() if user else None
    seats = Seat.objects.filter(game=game).order_by("position")
    return (
        tuple(getattr(game, name) for name in SHOWN),
        tuple(seats.values_list("colour", "user_id", "is_computer", "standin", "conceded")),
        tuple(seats.values_list("missed_deadlines", flat=True)),
        tuple(
            PendingSubmission.objects.filter(game=game, phase_number=game.phase_number)
            .order_by("seat_id")
            .values_list("seat_id", "text")
        ),
        Event.objects.filter(game=game)
        .visible_to(seat.colour if seat else None)
        .aggregate(newest=Max("index"))["newest"],
        Message.objects.filter(game=game).visible_to(seat).aggregate(newest=Max("pk"))["newest"],
        tuple(seat.muted_colours) if seat else (),
        tuple(  # who is away now: "Waiting for" names them as away
            Notifications.objects.filter(away_q(timezone.now()), user__seats__game=game)
            .order_by("user_id")
            .values_list("user_id", flat=True)
        ),
    )


def lobby_by_rows(user: User | None) -> tuple[object, ...]:
    """What the lobby shows, read the long way: my games and the open ones, each with its
    seats and this phase's submissions."""
    request = RequestFactory().get("/")
    request.user = user if user is not None else AnonymousUser()
    mine = my_games_in_order(user) if user is not None else Game.objects.none()
    return tuple(
        (
            tuple(getattr(game, name) for name in LISTED),
            tuple(game.seats.values_list("colour", "user_id", "is_computer", "standin")),
            tuple(
                game.pending.filter(phase_number=game.phase_number).values_list(
                    "seat_id", flat=True
                )
            ),
        )
        for game in [*mine, *open_games(request)]
    )


def client_of(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def kept(game_id: int, user: User | None) -> str:
    return client_of(user).get(reverse("game_live", args=[game_id])).json()["game"]["version"]


def kept_lobby(user: User | None) -> tuple[str, int]:
    answer = client_of(user).get(reverse("live") + "?lobby=1").json()
    return answer["lobby"], answer["your_move"]


def seat(game: Game, colour: str) -> Seat:
    return Seat.objects.get(game=game, colour=colour)


def submit(colour: str) -> Step:
    def step(game: Game) -> None:
        state = Game.objects.get(pk=game.pk).engine_state
        services.submit(game.pk, seat(game, colour).pk, default_move(state, colour))

    return step


def say(colour: str, text: str, to: str = "") -> Step:
    return lambda game: chat.post(game.pk, seat(game, colour).user_id, text, to_colour=to)


def mute(colour: str, other: str) -> Step:
    return lambda game: chat.set_player_muted(seat(game, colour), other, True)


def miss_the_deadline(game: Game) -> None:
    Game.objects.filter(pk=game.pk).update(deadline=timezone.now() - timedelta(minutes=1))
    deadlines.pass_deadlines(timezone.now())


def extend(game: Game) -> None:
    """The table votes 5 hours more: red proposes, ochre's yes passes it (games.votes)."""
    votes.propose(game.pk, seat(game, "red").user, "extend", 5)
    votes.cast(game.pk, seat(game, "ochre").user, True)


def go_away(colour: str) -> Step:
    def step(game: Game) -> None:
        now = timezone.now()
        Notifications.objects.update_or_create(
            user=seat(game, colour).user,
            defaults={"away_from": now - timedelta(hours=1), "away_until": now + timedelta(days=1)},
        )

    return step


RUNNING_STEPS: list[tuple[str, Step]] = [
    ("a player submits", submit("red")),
    ("another submits", submit("ochre")),
    ("talk to everyone", say("lilac", "Hello all")),
    ("talk to one", say("ochre", "Hello red", to="red")),
    ("a player mutes another", mute("red", "lilac")),
    ("the muted one talks", say("lilac", "Anyone?")),
    ("the phase resolves", lambda game: play_phases(game, 1)),
    ("phases go on", lambda game: play_phases(game, 2)),
    ("the deadline is extended", extend),
    ("a player goes away", go_away("lilac")),
    ("a deadline passes", miss_the_deadline),
    ("a player concedes", lambda game: services.concede(game.pk, seat(game, "lilac").user)),
    ("the computer plays on", lambda game: play_phases(game, 2)),
]


@pytest.fixture
def readers(alice: User, bob: User, charlie: User, dave: User) -> list[User | None]:
    return [alice, bob, charlie, dave, None]


def seen_by(game_id: int, reader: User | None) -> tuple[object, object, str, str]:
    lobby, _ = kept_lobby(reader)
    return by_rows(game_id, reader), lobby_by_rows(reader), kept(game_id, reader), lobby


def check_each_step(game_id: int, steps: list[tuple[str, Step]], readers: list) -> None:
    """After each step, for each reader: the game page's kept version and the lobby's
    move on if what they show, read from the rows, changed."""
    for name, step in steps:
        before = {id(r): seen_by(game_id, r) for r in readers}
        step(Game.objects.get(pk=game_id))
        for reader in readers:
            page_then, lobby_then, kept_then, kept_lobby_then = before[id(reader)]
            page, lobby, kept_now, kept_lobby_now = seen_by(game_id, reader)
            if page != page_then:
                assert kept_now != kept_then, (name, reader, "game page")
            if lobby != lobby_then:
                assert kept_lobby_now != kept_lobby_then, (name, reader, "lobby")


def test_every_write_a_reader_sees_moves_their_version_on(game, readers):
    check_each_step(game.pk, RUNNING_STEPS, readers)


def test_an_open_game_s_seats_move_the_version_on(alice, bob, dave):
    game = new_game(alice, name="Open table", player_count=4)
    carol, erin = make_user("carol"), make_user("erin")
    steps: list[tuple[str, Step]] = [
        ("a player joins", lambda g: services.join_game(g.pk, bob, "ochre")),
        ("a player leaves", lambda g: services.leave_game(g.pk, bob)),
        ("another joins", lambda g: services.join_game(g.pk, dave, "lilac")),
        ("a third joins", lambda g: services.join_game(g.pk, carol, "grey")),
        ("the last seat fills: the game starts", lambda g: services.join_game(g.pk, erin, "ochre")),
    ]
    check_each_step(game.pk, steps, [alice, bob, dave, carol, None])
