"""Who plays a seat, in one home (issue 22, item 3): `Seat.is_person`,
`Seat.plays_in_person` and `Seat.computer_plays` on the model, each with the queryset
filter that says the same in SQL, and `Game.seat_for(user)`. Every seat state a game
reaches: a computer's, a person's, one a computer stands in for, one conceded, and one
whose person left the site."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db.models import Prefetch

from games import services
from games.models import COMPUTER_PLAYS, IN_PERSON, PERSON, Game, Seat

# state: (is_person, plays_in_person, computer_plays)
MEANINGS = {
    "computer": (False, False, True),
    "person": (True, True, False),
    "stood in": (True, False, True),
    "conceded": (True, False, True),
    "left": (False, False, False),
}


@pytest.fixture
def seats(alice, bob, charlie, dave) -> dict[str, Seat]:
    """Each seat state, reached as the site reaches it: a running game of alice (red,
    playing), bob (ochre, conceded), charlie (lilac, a computer standing in after missed
    deadlines) and a computer (grey); and dave's game, whose seat he left with his
    account."""
    game = services.create_game(
        alice,
        name="Four",
        player_count=4,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=["grey"],
    )
    services.join_game(game.pk, bob, "ochre")
    services.join_game(game.pk, charlie, "lilac")
    services.concede(game.pk, bob)
    Seat.objects.filter(game=game, colour="lilac").update(standin=True, missed_deadlines=3)
    other = services.create_game(
        dave,
        name="Left",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=["ochre", "lilac"],
    )
    dave.delete()
    by_colour = {s.colour: s for s in Seat.objects.filter(game=game)}
    return {
        "computer": by_colour["grey"],
        "person": by_colour["red"],
        "stood in": by_colour["lilac"],
        "conceded": by_colour["ochre"],
        "left": Seat.objects.get(game=other, colour="red"),
    }


@pytest.mark.parametrize("state", MEANINGS)
def test_each_meaning_at_each_seat_state(seats, state):
    seat = seats[state]
    assert (seat.is_person, seat.plays_in_person, seat.computer_plays) == MEANINGS[state]


@pytest.mark.parametrize("state", MEANINGS)
def test_the_queryset_and_the_property_agree(seats, state):
    seat = seats[state]
    this = Seat.objects.filter(pk=seat.pk)
    in_sql = tuple(this.filter(q).exists() for q in (PERSON, IN_PERSON, COMPUTER_PLAYS))
    assert in_sql == (seat.is_person, seat.plays_in_person, seat.computer_plays)


def test_the_querysets_pick_the_same_seats_as_the_properties(seats):
    every = Seat.objects.filter(pk__in=[s.pk for s in seats.values()])
    for q, meaning in (
        (PERSON, "is_person"),
        (IN_PERSON, "plays_in_person"),
        (COMPUTER_PLAYS, "computer_plays"),
    ):
        picked = set(every.filter(q).values_list("pk", flat=True))
        assert picked == {s.pk for s in seats.values() if getattr(s, meaning)}, meaning


def test_a_game_finds_the_seat_of_each_of_its_players(seats, alice, bob, charlie):
    game = seats["person"].game
    for user, state in ((alice, "person"), (bob, "conceded"), (charlie, "stood in")):
        assert game.seat_for(user) == seats[state]


def test_nobody_without_a_seat_is_given_one(seats, dave, django_user_model):
    """Not a visitor (whose pk is None, like a computer's seat's user), nobody, nor a
    person of another game."""
    game = seats["person"].game
    stranger = django_user_model.objects.create_user("erin", "erin@example.org", "x" * 20)
    assert [game.seat_for(AnonymousUser()), game.seat_for(None), game.seat_for(stranger)] == [
        None,
        None,
        None,
    ]
    left = seats["left"].game
    assert left.seat_for(AnonymousUser()) is None  # its seats: a computer's, one left


def test_the_seat_is_found_in_the_prefetched_seats(seats, alice, django_assert_num_queries):
    game = Game.objects.prefetch_related(Prefetch("seats")).get(pk=seats["person"].game_id)
    with django_assert_num_queries(0):
        assert game.seat_for(alice).pk == seats["person"].pk
