"""Two people join at the same moment (issue 9, item 7c): `services.join_game` holds the
game's row lock, so one gets the seat and the other a clear refusal (a GameError, shown
as a message), never a 500 from the database's unique constraints.

The first join is made to linger between reading the seats and taking one, so that the
second always arrives while it is under way: without the lock both would read the same
free seat."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.db import connection

from games import services
from games.models import Game, Seat
from tests.site.conftest import make_user

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_dispatch(monkeypatch) -> None:
    """The game that starts queues no task (no worker runs here; the test commits)."""
    for name in ("_dispatch_notify", "_dispatch_resolve", "_dispatch_computer"):
        monkeypatch.setattr(services, name, lambda *args: None)


@pytest.fixture
def lingering_seats(monkeypatch) -> None:
    """Taking a seat waits a moment first: the other join runs meanwhile."""
    manager = Seat.objects
    create = manager.create

    def slow_create(**fields):
        time.sleep(0.3)
        return create(**fields)

    monkeypatch.setattr(manager, "create", slow_create)


def race(*joins: Callable[[], object]) -> list[str]:
    """Each join in its own thread (its own connection), started together: 'joined' or
    the GameError's message, in any order; anything else fails the test."""
    start, outcomes, errors = threading.Barrier(len(joins)), [], []

    def run(join: Callable[[], object]) -> None:
        try:
            start.wait(timeout=10)
            join()
            outcomes.append("joined")
        except services.GameError as refused:
            outcomes.append(str(refused))
        except Exception as exc:  # an IntegrityError: what the lock prevents
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(join,)) for join in joins]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    return outcomes


def open_game(alice: User, bob: User, player_count: int) -> Game:
    game = services.create_game(
        alice,
        name="Race",
        player_count=player_count,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )
    services.join_game(game.pk, bob, "ochre")
    return game


def test_two_joins_for_the_last_seat_seat_one_and_refuse_the_other(
    on_postgresql, alice, bob, lingering_seats
):
    game = open_game(alice, bob, player_count=3)
    charlie, dave = make_user("charlie"), make_user("dave")
    outcomes = race(
        lambda: services.join_game(game.pk, charlie, "lilac"),
        lambda: services.join_game(game.pk, dave, "grey"),
    )
    assert sorted(outcomes) == ["joined", "this game has already started"]
    game.refresh_from_db()
    assert game.status == Game.Status.RUNNING and game.seats.count() == 3


def test_two_joins_for_the_same_colour_seat_one_and_refuse_the_other(
    on_postgresql, alice, bob, lingering_seats
):
    game = open_game(alice, bob, player_count=4)
    charlie, dave = make_user("charlie"), make_user("dave")
    outcomes = race(
        lambda: services.join_game(game.pk, charlie, "lilac"),
        lambda: services.join_game(game.pk, dave, "lilac"),
    )
    assert sorted(outcomes) == ["joined", "lilac is taken; choose another colour"]
    game.refresh_from_db()
    assert game.status == Game.Status.OPEN
    assert list(game.seats.values_list("colour", flat=True)) == ["red", "ochre", "lilac"]
