"""Ratings (issue 27, games.ratings): updated once per game when it ends, even when games
sharing people end at the same moment (PostgreSQL, threads: each its own connection);
rebuilt from the finished games alone, equal to what was stored; who a game rates."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone

from engine.ai import RandomPlayer
from games import people, ratings, services
from games.models import Game, Rating, RatingChange, Seat
from tests.site.conftest import make_user
from tests.site.test_archive import start_game

pytestmark = pytest.mark.django_db(transaction=True)

SEED = 7  # a 2-player game (variable setup); every game of a test plays it alike


@pytest.fixture(autouse=True)
def no_dispatch(monkeypatch) -> None:
    """No worker runs here (the test commits): the services queue nothing."""
    for name in ("_dispatch_notify", "_dispatch_resolve", "_dispatch_computer"):
        monkeypatch.setattr(services, name, lambda *args: None)


def last_step(game: Game) -> None:
    """The moves of the game's current phase, and its resolve."""
    seats = {seat.colour: seat for seat in game.seats.all()}
    for colour in game.waiting:
        move = RandomPlayer(f"{SEED}/{colour}").choose(game.engine_state, colour)
        if services.submit_move(game.pk, seats[colour].pk, move).ready:
            break
    services.resolve(game.pk, game.phase_number)


def game_between(red: User, ochre: User, name: str = "Rated") -> Game:
    return start_game(red, ochre, 2, SEED, name)


def test_a_finished_game_between_people_rates_each_once(on_postgresql):
    alice, bob = make_user("alice"), make_user("bob")
    game = near_end(alice, bob)
    stale = people.person_stats(alice.pk, timezone.now())  # kept in the cache
    assert stale.ratings == []
    last_step(game)
    game = Game.objects.get(name="Rated")
    assert len(people.person_stats(alice.pk, timezone.now()).ratings) == 1  # counted again
    changes = RatingChange.objects.filter(game=game)
    assert sorted(c.user_id for c in changes) == [alice.pk, bob.pk]
    places = {c.user_id: c.place for c in changes}
    winner = alice if "red" in game.winners else bob
    assert places[winner.pk] == 1
    assert (
        Rating.objects.get(user=winner).ordinal > Rating.objects.exclude(user=winner).get().ordinal
    )
    assert set(Rating.objects.values_list("games", flat=True)) == {1}


# --- games ending at the same moment ------------------------------------------------------


@pytest.fixture
def lingering_ratings(monkeypatch) -> None:
    """Rating a game takes a moment once its people's ratings are read: a game ending
    meanwhile, sharing a person, arrives while it is under way (without the row locks
    both would read the same rating, and one update would be lost)."""
    apply = ratings._apply

    def slow_apply(*args):
        time.sleep(0.3)
        return apply(*args)

    monkeypatch.setattr(ratings, "_apply", slow_apply)


def together(*steps: Callable[[], object]) -> None:
    """Each step in its own thread (its own connection), started together; any error
    fails the test."""
    start, errors = threading.Barrier(len(steps)), []

    def run(step: Callable[[], object]) -> None:
        try:
            start.wait(timeout=10)
            step()
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(step,)) for step in steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors


def stored() -> tuple[dict[int, tuple[float, float, float, int]], list[tuple]]:
    """The ratings and their history as stored, comparable to a rebuild's."""
    now = {r.user_id: (r.mu, r.sigma, r.ordinal, r.games) for r in Rating.objects.all()}
    history = sorted(
        RatingChange.objects.values_list("game_id", "user_id", "place", "mu", "sigma", "ordinal")
    )
    return now, history


def rebuilt() -> tuple[dict[int, tuple[float, float, float, int]], list[tuple]]:
    now, changes = ratings.rebuilt()
    return (
        {uid: (r.mu, r.sigma, r.ordinal, r.games) for uid, r in now.items()},
        sorted((c.game_id, c.user_id, c.place, c.mu, c.sigma, c.ordinal) for c in changes),
    )


# The columns of a game of `SEED` one phase before its end, played once per run (a whole
# game takes seconds): each test's games start from them, so that the phase they resolve
# ends them.
NEAR_END: dict[str, object] = {}
COLUMNS = (
    "state",
    "phase_number",
    "phase_kind",
    "waiting",
    "turn",
    "records_stored",
    "events_stored",
)


def near_end(red: User, ochre: User, name: str = "Rated") -> Game:
    """A game between the two, started, whose current phase is the game's last."""
    if not NEAR_END:
        reference = game_between(make_user("xavier"), make_user("yvonne"), "Reference")
        columns: dict[str, object] = {}
        while not reference.is_finished:
            columns = {column: getattr(reference, column) for column in COLUMNS}
            last_step(reference)
            reference = Game.objects.get(pk=reference.pk)
        NEAR_END.update(columns)
        User.objects.filter(username__in=["xavier", "yvonne"]).delete()  # their ratings too
        reference.delete()
    game = game_between(red, ochre, name)
    Game.objects.filter(pk=game.pk).update(**NEAR_END)
    return Game.objects.get(pk=game.pk)


def test_games_sharing_people_that_end_at_once_rate_each_once_in_order(
    on_postgresql, lingering_ratings
):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    pairs = [(alice, bob), (bob, carol), (carol, alice), (alice, bob)]
    games = [near_end(*pair, f"Race {i}") for i, pair in enumerate(pairs)]
    assert not any(game.is_finished for game in games)

    together(*(lambda game=game: last_step(game) for game in games))

    for game in games:
        assert Game.objects.get(pk=game.pk).is_finished
        assert RatingChange.objects.filter(game=game).count() == 2
    counts = dict(Rating.objects.values_list("user__username", "games"))
    assert {name: counts[name] for name in ("alice", "bob", "carol")} == {
        "alice": 3,
        "bob": 3,
        "carol": 2,
    }
    assert stored() == rebuilt()  # the order they were rated in is the order replayed


def test_one_game_resolved_twice_at_once_is_rated_once(on_postgresql, lingering_ratings):
    alice, bob = make_user("alice"), make_user("bob")
    game = near_end(alice, bob)
    seats = {seat.colour: seat for seat in game.seats.all()}
    for colour in game.waiting:
        move = RandomPlayer(f"{SEED}/{colour}").choose(game.engine_state, colour)
        services.submit_move(game.pk, seats[colour].pk, move)

    together(*(lambda: services.resolve(game.pk, game.phase_number) for _ in range(2)))

    assert RatingChange.objects.filter(game=game).count() == 2
    assert set(Rating.objects.values_list("games", flat=True)) == {1}
    # What recovery would do, running the end's work again: nothing more.
    with transaction.atomic():  # as services would: the game's row locked
        finished = Game.objects.select_for_update().get(pk=game.pk)
        ratings.rate_game(finished, finished.engine_state)
    assert RatingChange.objects.filter(game=game).count() == 2
    assert set(Rating.objects.values_list("games", flat=True)) == {1}


def test_the_rebuild_command_gives_the_stored_ratings_again(on_postgresql):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    for i, pair in enumerate([(alice, bob), (bob, carol), (alice, carol), (alice, bob)]):
        last_step(near_end(*pair, f"Game {i}"))
    before = stored()
    assert len(before[0]) == 3 and len(before[1]) == 8
    Rating.objects.filter(user=alice).update(mu=99, games=42)  # a rating gone wrong
    RatingChange.objects.filter(user=bob).delete()

    out = io.StringIO()
    call_command("rebuild_ratings", stdout=out)

    assert "from 4 rated games" in out.getvalue()
    assert stored() == before


# --- who a game rates -----------------------------------------------------------------------


def test_a_seat_a_computer_played_at_the_end_is_not_rated_nor_a_game_with_computers(
    on_postgresql,
):
    alice, bob = make_user("alice"), make_user("bob")
    last_step(near_end(alice, bob))
    finished = Game.objects.filter(status=Game.Status.FINISHED).get()
    state = finished.engine_state
    places = {"red": 1, "ochre": 2} if state.winners == ["red"] else {"red": 2, "ochre": 1}
    if len(state.winners) == 2:
        places = {"red": 1, "ochre": 1}

    def seats(**red: bool) -> list[Seat]:
        return [
            Seat(colour="red", user=alice, **red),
            Seat(colour="ochre", user=bob),
        ]

    assert ratings.placed_people(finished, seats(), state) == [
        ratings.Placed(alice.pk, places["red"]),
        ratings.Placed(bob.pk, places["ochre"]),
    ]
    assert ratings.placed_people(finished, seats(standin=True), state) == []
    assert ratings.placed_people(finished, seats(standin=True, conceded=True), state) == []
    assert ratings.placed_people(finished, seats(is_computer=True), state) == []
